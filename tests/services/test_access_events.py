"""Every change to who may act (groups, staff, superuser, active) is a business event with its
actor, in the chain and on the auditor's history page."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from settlements import audit_log
from settlements.access import roles
from settlements.models import Event
from settlements.services import access_changes
from settlements.services.settlements import settlement_approve
from tests.conftest import make_user
from tests.services.helpers import submitted

pytestmark = pytest.mark.django_db


def access_events(user) -> list[Event]:
    return list(
        Event.objects.filter(type="user_access_changed", subject_id=user.pk).order_by("seq")
    )


def _user_form(user, **changes) -> dict:
    form = {
        "username": user.username,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email": user.email,
        "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
        "is_active": "on" if user.is_active else "",
        "is_staff": "on" if user.is_staff else "",
        "is_superuser": "on" if user.is_superuser else "",
        "groups": list(user.groups.values_list("pk", flat=True)),
    }
    form.update(changes)
    return {key: value for key, value in form.items() if value != ""}


def test_a_superuser_granting_themself_a_role_is_on_record(
    admin_client, admin_user, users, snapshot_factory
):
    manager_group = Group.objects.get(name=roles.TOURNAMENT_MANAGER)
    url = reverse("admin:auth_user_change", args=[admin_user.pk])
    response = admin_client.post(url, _user_form(admin_user, groups=[manager_group.pk]))
    assert response.status_code == 302, response.content[:2000]
    settlement = submitted(users["operator"], snapshot_factory)
    admin_user.refresh_from_db()
    settlement_approve(settlement=settlement, actor=admin_user, reason="ok")
    response = admin_client.post(url, _user_form(admin_user, groups=[]))
    assert response.status_code == 302

    created, granted, revoked = access_events(admin_user)
    assert created.data["created"] is True
    assert (granted.actor, granted.data["groups_added"]) == (admin_user, ["tournament_manager"])
    assert (revoked.actor, revoked.data["groups_removed"]) == (admin_user, ["tournament_manager"])
    assert "added to Tournament Manager" in granted.reason
    assert granted.seq < Event.objects.get(type="settlement_approved").seq < revoked.seq
    assert audit_log.verify().ok


def test_flags_changed_in_the_admin_name_the_admin(admin_client, admin_user, users):
    operator = users[roles.OPERATOR]
    url = reverse("admin:auth_user_change", args=[operator.pk])
    form = _user_form(operator, is_staff="on", is_active="")
    assert admin_client.post(url, form).status_code == 302
    event = access_events(operator)[-1]
    assert event.actor == admin_user
    assert event.data["flags"] == {"is_active": [True, False], "is_staff": [False, True]}
    assert "actor_unknown" not in event.data


def test_a_change_made_outside_the_admin_is_recorded_with_the_actor_unknown(users):
    operator = users[roles.OPERATOR]
    operator.is_superuser = True
    operator.save()
    operator.groups.clear()
    flags, groups = access_events(operator)[-2:]
    assert flags.actor is None and flags.data["actor_unknown"] is True
    assert flags.data["flags"] == {"is_superuser": [False, True]}
    assert flags.reason.startswith("Actor unknown")
    assert groups.data["groups_removed"] == [roles.OPERATOR]


def test_a_caller_names_the_actor(users, django_user_model):
    admin = make_user(django_user_model, "root", is_superuser=True, is_staff=True)
    auditors = Group.objects.get(name=roles.AUDITOR)
    with access_changes.acting_as(admin):
        auditors.user_set.add(users[roles.OPERATOR], users[roles.MARKETING_MANAGER])
    for user in (users[roles.OPERATOR], users[roles.MARKETING_MANAGER]):
        event = access_events(user)[-1]
        assert (event.actor, event.data["groups_added"]) == (admin, [roles.AUDITOR])


def test_a_new_superuser_is_on_record_and_a_plain_user_is_not(django_user_model):
    plain = django_user_model.objects.create_user("plain", password="x-12345678")
    boss = django_user_model.objects.create_superuser("boss", password="x-12345678")
    assert access_events(plain) == []
    (event,) = access_events(boss)
    assert event.data["created"] is True
    assert event.data["flags"] == {"is_staff": [False, True], "is_superuser": [False, True]}


def test_role_changes_show_on_the_auditors_history_page(client, users):
    operator = users[roles.OPERATOR]
    operator.groups.add(Group.objects.get(name=roles.TOURNAMENT_MANAGER))
    client.force_login(users[roles.AUDITOR])
    page = client.get("/history/?view=events")
    assert b"access changed" in page.content
    assert b"added to Tournament Manager" in page.content
