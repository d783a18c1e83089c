"""Who may act changes only with an event: PostgreSQL refuses a role membership, a superuser,
staff or active flag, or an API token written by the app's role without the event that
records it, and ``verify_audit`` names such a row written by the owner with triggers off.
The app's own paths (the admin, ``groups.add``, the token services, ``createsuperuser``)
still work, and password changes and every admin action are events.

Before issue 41, adding a user to tournament_manager, making someone a superuser, moving a
token to another user or un-revoking it all verified."""

from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.urls import reverse

from settlements.access import roles
from settlements.models import ApiToken, Event
from settlements.services.tokens import api_token_create, api_token_revoke
from tests.db.conftest import (
    behind_the_apps_back,
    execute,
    postgresql_only,
    refused,
    refused_at_commit,
)

pytestmark = [pytest.mark.django_db, postgresql_only]

# The refusals are tried on committed users and tokens: in the test's own transaction, the
# events that made them would count as written with the intruder's row.
committed = pytest.mark.django_db(transaction=True)


@pytest.fixture
def token(users):
    issued, _raw = api_token_create(user=users[roles.OPERATOR], name="game server", actor=None)
    return issued


def _group_id(name: str) -> int:
    return Group.objects.get_or_create(name=name)[0].pk


@committed
def test_a_membership_added_without_its_event_is_refused(app_role, users):
    sql = (
        "INSERT INTO auth_user_groups (user_id, group_id) VALUES "
        f"({users[roles.OPERATOR].pk}, {_group_id(roles.TOURNAMENT_MANAGER)})"
    )
    assert "refused: no event in its transaction records it" in refused_at_commit(
        sql, role=app_role
    )


@committed
def test_a_membership_removed_without_its_event_is_refused(app_role, users):
    sql = f"DELETE FROM auth_user_groups WHERE user_id = {users[roles.TOURNAMENT_MANAGER].pk}"
    assert 'DELETE on "auth_user_groups" refused' in refused_at_commit(sql, role=app_role)


@committed
@pytest.mark.parametrize("change", ["is_superuser = true", "is_staff = true", "is_active = false"])
def test_a_flag_changed_without_its_event_is_refused(app_role, users, change):
    sql = f"UPDATE auth_user SET {change} WHERE id = {users[roles.OPERATOR].pk}"
    assert 'UPDATE on "auth_user" refused' in refused_at_commit(sql, role=app_role)


@committed
def test_a_superuser_inserted_without_its_event_is_refused(app_role):
    sql = (
        "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name,"
        " email, is_staff, is_active, date_joined) VALUES"
        " ('x', true, 'intruder', '', '', '', true, true, now())"
    )
    assert 'INSERT on "auth_user" refused' in refused_at_commit(sql, role=app_role)


def test_a_plain_sign_in_needs_no_event(app_role, users):
    execute(f"UPDATE auth_user SET last_login = now() WHERE id = {users[roles.OPERATOR].pk}")
    connection.check_constraints()


@committed
@pytest.mark.parametrize(
    "change",
    ["user_id = {other}", "revoked_at = NULL", "token_hash = repeat('0', 64)"],
)
def test_a_token_changed_without_its_event_is_refused(app_role, users, token, change):
    if change == "revoked_at = NULL":
        token = api_token_revoke(token=token, actor=None)
    sql = (
        f"UPDATE settlements_apitoken SET {change.format(other=users[roles.AUDITOR].pk)}"
        f" WHERE id = {token.pk}"
    )
    assert 'UPDATE on "settlements_apitoken" refused' in refused_at_commit(sql, role=app_role)


@committed
def test_a_token_inserted_without_its_event_is_refused(app_role, users):
    sql = (
        "INSERT INTO settlements_apitoken (user_id, name, prefix, token_hash, created_at,"
        " expires_at, scopes) VALUES"
        f" ({users[roles.OPERATOR].pk}, 'mine', 'abcdef01', repeat('1', 64), now(), now()"
        " + interval '1 day', '[]')"
    )
    assert 'INSERT on "settlements_apitoken" refused' in refused_at_commit(sql, role=app_role)


def test_a_token_is_never_deleted(app_role, token):
    assert "never_deleted" in refused(
        f"DELETE FROM settlements_apitoken WHERE id = {token.pk}", role=app_role
    )


def test_the_apps_own_paths_pass_the_guards(users, token, django_user_model):
    operator = users[roles.OPERATOR]
    manager_group = Group.objects.get(name=roles.TOURNAMENT_MANAGER)
    operator.groups.add(manager_group)
    operator.groups.remove(manager_group)
    with transaction.atomic():
        operator.is_staff = True
        operator.save()
    api_token_revoke(token=token, actor=None)
    call_command("createsuperuser", username="root", email="", interactive=False, stdout=StringIO())
    connection.check_constraints()  # the deferred checks, as the commits would run them
    assert django_user_model.objects.get(username="root").is_superuser
    call_command("verify_audit", stdout=StringIO())


@pytest.mark.parametrize(
    ("sql", "named"),
    [
        (
            "INSERT INTO auth_user_groups (user_id, group_id) VALUES ({user}, {group})",
            "user #{user}'s membership of tournament_manager",
        ),
        ("UPDATE auth_user SET is_superuser = true WHERE id = {user}", "user #{user}'s superuser"),
        ("UPDATE auth_user SET is_active = false WHERE id = {user}", "user #{user}'s active"),
        (
            "UPDATE settlements_apitoken SET revoked_at = now() WHERE id = {token}",
            "API token #{token} (revoked without an event",
        ),
        (
            "INSERT INTO settlements_apitoken (user_id, name, prefix, token_hash, created_at,"
            " expires_at, scopes) VALUES ({user}, 'mine', 'abcdef01', repeat('1', 64), now(),"
            " now() + interval '1 day', '[]')",
            "API token #",
        ),
    ],
)
def test_access_written_behind_the_apps_back_is_named_by_verify_audit(users, token, sql, named):
    values = {
        "user": users[roles.OPERATOR].pk,
        "group": _group_id(roles.TOURNAMENT_MANAGER),
        "token": token.pk,
    }
    call_command("verify_audit", stdout=StringIO())
    behind_the_apps_back(sql.format(**values))
    with pytest.raises(CommandError) as caught:
        call_command("verify_audit")
    assert f"No event accounts for {named.format(**values)}" in str(caught.value)


def test_a_password_change_is_an_event_naming_who_made_it(admin_client, admin_user, users):
    operator = users[roles.OPERATOR]
    url = reverse("admin:auth_user_password_change", args=[operator.pk])
    response = admin_client.post(
        url, {"password1": "a-new-long-secret-9", "password2": "a-new-long-secret-9"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    changed = Event.objects.filter(
        type=Event.Type.USER_ACCESS_CHANGED, subject_id=operator.pk, data__password_changed=True
    ).latest("seq")
    assert changed.actor == admin_user
    assert "hash" not in str(changed.data) and operator.password not in str(changed.data)


def test_an_admin_action_is_an_event_naming_the_administrator_and_the_user(
    admin_client, admin_user, users
):
    operator = users[roles.OPERATOR]
    url = reverse("admin:auth_user_password_change", args=[operator.pk])
    admin_client.post(url, {"password1": "a-new-long-secret-9", "password2": "a-new-long-secret-9"})
    action = Event.objects.filter(type=Event.Type.ADMIN_ACTION).get()
    assert action.actor == admin_user
    assert action.data["user"] == operator.username
    assert action.data["action"] == "Change"


def test_the_admin_deletes_one_record_at_a_time(admin_client):
    response = admin_client.get(reverse("admin:auth_group_changelist"))
    assert b"delete_selected" not in response.content


def test_a_token_may_not_be_deleted_even_by_the_services_owner(token):
    with pytest.raises(DatabaseError), transaction.atomic():
        ApiToken.objects.filter(pk=token.pk).delete()
