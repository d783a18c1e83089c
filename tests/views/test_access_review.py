"""The auditor's access review: every user with their roles, how they sign in, their second
factor, last sign-in and tokens; every grant and revocation in a chosen period, paged and as
CSV; the review recorded as an event with the note; its due date under "Waiting for you"."""

import csv
import io
from datetime import timedelta

import pytest
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth.models import Group
from django.utils import timezone

from settlements.access import roles, second_factor
from settlements.models import Event, TokenScope
from settlements.selectors.access_review import access_review_due
from settlements.services.access_review import access_review_complete
from settlements.services.sign_on import user_roles_follow_provider
from settlements.services.tokens import api_token_create
from tests.conftest import TEST_TOTP_SECRET
from tests.views.conftest import HTMX

pytestmark = pytest.mark.django_db


def rows(response) -> list[dict]:
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def desk(operator, tournament_manager, auditor, django_user_model):
    second_factor.set_totp_secret(user=tournament_manager, secret=TEST_TOTP_SECRET)
    api_token_create(user=operator, name="eu-1", scopes=[TokenScope.SNAPSHOTS_WRITE])
    sso = django_user_model.objects.create(username="ana")
    sso.set_unusable_password()
    sso.save()
    SocialAccount.objects.create(user=sso, provider="sso", uid="ana-1", extra_data={})
    user_roles_follow_provider(user=sso, granted={roles.AUDITOR}, source="identity provider sso")
    return {"operator": operator, "manager": tournament_manager, "sso": sso}


def test_every_user_is_listed_with_what_they_hold(desk, as_auditor):
    page = as_auditor.get("/access-review/").content.decode()

    for username in ("operator", "manager", "auditor", "ana"):
        assert username in page
    assert "Yes: authenticator app" in page
    assert "Single sign-on" in page
    assert "eu-1" in page and "snapshots:write" in page


def test_the_users_csv_says_the_same(desk, as_auditor):
    by_name = {row["username"]: row for row in rows(as_auditor.get("/access-review/users.csv"))}

    assert by_name["manager"]["second factor"] == "yes"
    assert by_name["manager"]["factors"] == "authenticator app"
    assert by_name["manager"]["roles"] == "Tournament Manager"
    assert by_name["operator"]["second factor"] == "no"
    assert by_name["operator"]["signs in with"] == "password"
    assert "snapshots:write" in by_name["operator"]["tokens"]
    assert "0 days old" in by_name["operator"]["tokens"]
    assert by_name["ana"]["signs in with"] == "single sign-on"
    assert by_name["ana"]["roles"] == "Auditor"


def test_grants_and_revocations_of_the_period_are_listed_and_exported(desk, as_auditor):
    with_role = Group.objects.get(name=roles.OPERATOR)
    desk["manager"].groups.add(with_role)
    desk["manager"].groups.remove(with_role)
    today = timezone.localdate().isoformat()

    page = as_auditor.get(f"/access-review/?start={today}&end={today}").content.decode()
    exported = rows(as_auditor.get(f"/access-review/changes.csv?start={today}&end={today}"))

    assert "added to Operator" in page and "removed from Operator" in page
    assert "API token created" in page
    whats = [row["what"] for row in exported]
    assert any("removed from Operator" in what for what in whats)
    provider = [row for row in exported if row["source"]]
    assert provider and provider[0]["source"] == "identity provider sso"


def test_a_period_before_the_changes_lists_none(desk, as_auditor):
    long_ago = (timezone.localdate() - timedelta(days=400)).isoformat()
    page = as_auditor.get(f"/access-review/?start={long_ago}&end={long_ago}").content.decode()
    assert "No access changed" in page


def test_the_changes_are_paged(desk, as_auditor, settings):
    group = Group.objects.get(name=roles.OPERATOR)
    for _ in range(30):
        desk["manager"].groups.add(group)
        desk["manager"].groups.remove(group)

    first = as_auditor.get("/access-review/", **HTMX).content.decode()
    second = as_auditor.get("/access-review/?page=2", **HTMX).content.decode()

    assert "Page 1 of 2" in first
    assert "Page 2 of 2" in second


@pytest.mark.parametrize(
    "query", ["start=yesterday", "start=2026-01-05&end=2025-01-01", "start=9999-01-01", "page=x"]
)
def test_a_bad_period_falls_back_without_a_server_error(desk, as_auditor, query):
    assert as_auditor.get(f"/access-review/?{query}").status_code == 200
    assert as_auditor.get(f"/access-review/changes.csv?{query}").status_code == 200


def test_completing_the_review_is_an_event_with_the_note(desk, as_auditor, auditor):
    today = timezone.localdate()
    start = today - timedelta(days=90)

    answer = as_auditor.post(
        "/access-review/complete",
        {"start": start.isoformat(), "end": today.isoformat(), "note": "All fit; ana checked."},
    )

    assert answer.status_code == 302
    event = Event.objects.get(type=Event.Type.ACCESS_REVIEW_COMPLETED)
    assert event.actor == auditor
    assert event.reason == "All fit; ana checked."
    assert event.data == {"from": start.isoformat(), "to": today.isoformat()}
    due = access_review_due()
    assert due.due == today + timedelta(days=90)
    assert not due.overdue


@pytest.mark.parametrize(
    ("fields", "words"),
    [
        ({"note": " "}, "This field is required"),
        ({"start": "2026-02-02", "end": "2026-01-01"}, "before the start"),
        ({"end": "2999-01-01"}, "cannot end after today"),
    ],
)
def test_a_review_that_does_not_hold_is_shown_again(desk, as_auditor, fields, words):
    today = timezone.localdate().isoformat()
    data = {"start": today, "end": today, "note": "ok", **fields}

    answer = as_auditor.post("/access-review/complete", data)

    assert answer.status_code == 422
    assert words in answer.content.decode()
    assert not Event.objects.filter(type=Event.Type.ACCESS_REVIEW_COMPLETED).exists()


def test_only_an_auditor_may_complete_a_review(desk, tournament_manager):
    from django.core.exceptions import PermissionDenied

    from settlements.errors import NotAllowed

    today = timezone.localdate()
    with pytest.raises((NotAllowed, PermissionDenied)):
        access_review_complete(actor=tournament_manager, start=today, end=today, note="mine")


def test_the_due_review_waits_for_auditors_only(desk, as_auditor, as_manager, auditor, settings):
    assert "Access review due now" in as_auditor.get("/").content.decode()
    assert "Access review" not in as_manager.get("/").content.decode()

    today = timezone.localdate()
    access_review_complete(actor=auditor, start=today, end=today, note="done")
    page = as_auditor.get("/").content.decode()

    assert f"Access review due {today + timedelta(days=settings.ACCESS_REVIEW_DAYS)}" in page
