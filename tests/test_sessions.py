"""Database sessions through django.contrib.auth: what a page reads, and how a session ends."""

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from settlements.access import roles
from settlements.models import SignedInSession
from tests.conftest import DEMO_PASSWORD
from tests.views.conftest import signed_in

pytestmark = pytest.mark.django_db


def _copy(client: Client) -> Client:
    """Another browser holding a copy of `client`'s cookies (a stolen or shared cookie)."""
    other = Client()
    other.cookies = client.cookies.__class__(client.cookies)
    return other


def _sees_dashboard(client: Client) -> bool:
    return client.get(reverse("dashboard")).status_code == 200


def test_a_signed_in_page_reads_the_session_the_user_and_the_roles(
    operator, django_assert_num_queries
):
    client = signed_in(operator)
    # The session, the user, their roles, and the page's own query: the `default` rulebook's
    # version in force.
    with django_assert_num_queries(4):
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


def test_signing_out_ends_the_users_sessions_in_other_browsers(operator, auditor):
    browser, elsewhere, someone_else = signed_in(operator), signed_in(operator), signed_in(auditor)
    assert SignedInSession.objects.filter(user=operator).count() == 2

    browser.post(reverse("logout"))

    assert not _sees_dashboard(elsewhere)
    assert _sees_dashboard(someone_else)
    assert not SignedInSession.objects.filter(user=operator).exists()


def test_a_password_change_ends_other_sessions(operator):
    browser = signed_in(operator)
    operator.set_password("a completely different passphrase")
    operator.save()
    assert not _sees_dashboard(browser)


def test_a_role_taken_away_signs_the_person_out_at_the_next_request(auditor):
    browser = signed_in(auditor)
    assert browser.get(reverse("history")).status_code == 200

    auditor.groups.remove(Group.objects.get(name=roles.AUDITOR))

    # The sessions that held the role end (services.sessions): back to the sign-in.
    assert browser.get(reverse("history")).status_code == 302


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
