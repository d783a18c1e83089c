"""Signed-cookie sessions: what a page reads per request, and how a session ends."""

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from settlements.access import roles
from settlements.access.authentication import _user_with_roles
from settlements.models import SignInEpoch
from tests.conftest import DEMO_PASSWORD, make_user
from tests.views.conftest import signed_in

pytestmark = pytest.mark.django_db


def _copy(client: Client) -> Client:
    """Another browser holding a copy of `client`'s cookies (a stolen or shared cookie)."""
    other = Client()
    other.cookies = client.cookies.__class__(client.cookies)
    return other


def _sees_dashboard(client: Client) -> bool:
    return client.get(reverse("dashboard")).status_code == 200


def test_a_signed_in_page_reads_the_user_and_roles_in_one_query(
    operator, django_assert_num_queries
):
    client = signed_in(operator)
    # No session row and no roles query: the user's row brings the roles along. The second
    # query is the page's own: the `default` rulebook's version in force.
    with django_assert_num_queries(2):
        response = client.get(reverse("policy"))
    assert response.status_code == 200


def test_signing_out_ends_a_copy_of_the_session_cookie(operator):
    browser = signed_in(operator)
    copy = _copy(browser)
    assert _sees_dashboard(copy)

    browser.post(reverse("logout"))

    assert not _sees_dashboard(browser)
    assert not _sees_dashboard(copy)
    # Signing in again works, and a new session is not refused.
    answer = browser.post(
        reverse("login"), {"username": operator.username, "password": DEMO_PASSWORD}
    )
    assert answer.status_code == 302
    assert _sees_dashboard(browser)
    assert not _sees_dashboard(copy)


def test_a_password_change_ends_other_sessions(operator):
    browser = signed_in(operator)
    operator.set_password("a completely different passphrase")
    operator.save()
    assert not _sees_dashboard(browser)


def test_a_role_taken_away_applies_at_the_next_request(auditor):
    browser = signed_in(auditor)
    assert browser.get(reverse("history")).status_code == 200

    auditor.groups.remove(Group.objects.get(name=roles.AUDITOR))

    assert browser.get(reverse("history")).status_code == 403


def test_a_role_given_applies_at_the_next_request(operator):
    browser = signed_in(operator)
    assert browser.get(reverse("history")).status_code == 403

    operator.groups.add(Group.objects.get_or_create(name=roles.AUDITOR)[0])

    assert browser.get(reverse("history")).status_code == 200


def test_a_deactivated_user_is_signed_out(operator):
    browser = signed_in(operator)
    operator.is_active = False
    operator.save()
    assert not _sees_dashboard(browser)


def test_the_signed_in_users_query_reads_what_the_orm_reads(users, django_user_model):
    """The one query written out for its speed (access.authentication._user_with_roles): the
    same row, roles and sign-in epoch as Django's ORM gives, for every kind of user."""
    everyone = [*users.values(), make_user(django_user_model, "all_roles", *roles.KNOWN_ROLES)]
    SignInEpoch.objects.create(user=users[roles.AUDITOR], epoch=3)
    fields = [field.attname for field in django_user_model._meta.concrete_fields]
    for expected in everyone:
        found = _user_with_roles(expected.pk)
        assert type(found) is django_user_model
        assert [getattr(found, name) for name in fields] == [
            getattr(django_user_model.objects.get(pk=expected.pk), name) for name in fields
        ]
        held = expected.groups.filter(name__in=roles.KNOWN_ROLES).values_list("name", flat=True)
        assert roles.user_roles(found) == frozenset(held), expected.username
        epoch = SignInEpoch.objects.filter(user=expected).values_list("epoch", flat=True)
        assert found.sign_in_epoch == (epoch.first() or 0), expected.username
    assert _user_with_roles(max(user.pk for user in everyone) + 1) is None
