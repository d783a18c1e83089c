"""Sessions a person controls (issue 43): they see where they are signed in and end any of
those sessions or all; an administrator ends all of a user's; a role taken away ends the
sessions that held it; nobody ends another person's session from their page."""

from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from settlements.access import roles
from settlements.models import SignedInSession
from tests.conftest import DEMO_PASSWORD
from tests.views.conftest import HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


def browser(user, agent: str) -> Client:
    """A browser signed in through the sign-in form, as a person does."""
    client = Client(HTTP_USER_AGENT=agent)
    response = client.post(
        reverse("login"), {"username": user.get_username(), "password": DEMO_PASSWORD}
    )
    assert response.status_code == 302, response.content.decode()[:500]
    return client


def signed_in_still(client: Client) -> bool:
    return client.get(reverse("dashboard")).status_code == 200


def test_the_page_lists_each_browser_and_marks_this_one(operator):
    laptop, phone = browser(operator, "Laptop Firefox"), browser(operator, "Phone Safari")
    html = assert_full_page(laptop.get(reverse("user_sessions")))
    assert "Laptop Firefox" in html and "Phone Safari" in html
    this = html[html.index('aria-current="true"') :].split("</tr>")[0]
    assert "Laptop Firefox" in this and "This browser" in this
    partial = assert_partial(laptop.get(reverse("user_sessions"), **HTMX), "user-sessions")
    assert "Phone Safari" in partial
    assert signed_in_still(phone)


def test_ending_another_browsers_session_signs_it_out_and_keeps_this_one(operator):
    laptop, phone = browser(operator, "Laptop"), browser(operator, "Phone")
    other = SignedInSession.objects.get(user=operator, user_agent="Phone")
    response = laptop.post(reverse("user_sessions_end"), {"session": other.session_id})
    assert response.status_code == 302
    assert not signed_in_still(phone)
    assert signed_in_still(laptop)


def test_nobody_ends_another_persons_session(operator, marketing_manager):
    theirs = browser(marketing_manager, "Theirs")
    key = SignedInSession.objects.get(user=marketing_manager).session_id
    mine = browser(operator, "Mine")
    mine.post(reverse("user_sessions_end"), {"session": key})
    assert signed_in_still(theirs)
    page = mine.get(reverse("user_sessions")).content.decode()
    assert "not one of yours" in page


def test_signing_out_everywhere_ends_every_session(operator):
    laptop, phone = browser(operator, "Laptop"), browser(operator, "Phone")
    response = laptop.post(reverse("user_sessions_end"), {"all": "1"})
    assert response.status_code == 302 and response.url == reverse("login")
    assert not signed_in_still(laptop) and not signed_in_still(phone)
    assert not SignedInSession.objects.filter(user=operator).exists()


def test_a_role_taken_away_ends_the_sessions_that_held_it(marketing_manager):
    desk = browser(marketing_manager, "Desk")
    assert SignedInSession.objects.filter(user=marketing_manager).exists()
    marketing_manager.groups.remove(Group.objects.get(name=roles.MARKETING_MANAGER))
    assert not SignedInSession.objects.filter(user=marketing_manager).exists()
    assert desk.get(reverse("dashboard")).status_code == 302  # to the sign-in


def test_an_administrator_ends_all_of_a_users_sessions(operator):
    laptop = browser(operator, "Laptop")
    out = StringIO()
    call_command("end_sessions", "operator", stdout=out)
    assert "Ended 1 session of operator" in out.getvalue()
    assert not signed_in_still(laptop)
