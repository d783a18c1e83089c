"""The auditor verifies the whole event log from the history page, as background work with its
progress; the outcome is recorded as an event and shown on the history page."""

import re

import pytest

from settlements.models import Event, Job, JobItem
from settlements.services import jobs
from tests.db.conftest import behind_the_apps_back
from tests.services.helpers import approved
from tests.views.conftest import HTMX

pytestmark = pytest.mark.django_db


@pytest.fixture
def settled(users, snapshot_factory):
    return approved(users["operator"], users["tournament_manager"], snapshot_factory)


def verification() -> Event:
    return Event.objects.get(type=Event.Type.AUDIT_VERIFIED)


def test_the_history_page_offers_the_verification_and_its_partial_does_not(settled, as_auditor):
    page = as_auditor.get("/history/")
    assert b'action="/history/verify/"' in page.content
    partial = as_auditor.get("/history/", headers={"HX-Request": "true"})
    assert partial.status_code == 200
    assert b"/history/verify/" not in partial.content
    assert b'id="history-browser"' in partial.content


def test_a_verification_runs_as_a_job_and_its_outcome_is_an_event(
    settled, as_auditor, auditor, monkeypatch
):
    # Small parts, so that even this short chain is verified in several.
    monkeypatch.setattr(jobs, "VERIFY_EVENTS_PER_ITEM", 3)
    events = Event.objects.count()
    response = as_auditor.post("/history/verify/")
    job = Job.objects.get(kind=Job.Kind.VERIFY)
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    items = list(job.items.order_by("position").values_list("label", "status"))
    assert len(items) == -(-events // 3) + 1
    assert {status for _, status in items} == {JobItem.Status.DONE}
    assert job.status == Job.Status.DONE
    event = verification()
    assert event.actor == auditor
    assert event.data["verified"] is True and event.data["events"] == events
    assert event.data["head"] == Event.objects.get(seq=events).hash
    progress = as_auditor.get(f"/jobs/{job.pk}/")
    assert b"Verify the event log" in progress.content
    assert b"Nothing to do" in progress.content and b"Back to the history" in progress.content
    polled = as_auditor.get(f"/jobs/{job.pk}/", headers={"HX-Request": "true"})
    assert b'id="job-progress"' in polled.content and b"<html" not in polled.content
    assert b"Verifies" in as_auditor.get("/history/").content


def test_htmx_follows_the_job_with_a_client_redirect(settled, as_auditor):
    response = as_auditor.post("/history/verify/", **HTMX)
    job = Job.objects.get(kind=Job.Kind.VERIFY)
    assert response["HX-Redirect"] == f"/jobs/{job.pk}/"


def test_a_tampered_record_is_recorded_as_not_verified_and_shown(settled, as_auditor, users):
    behind_the_apps_back(
        "UPDATE settlements_settlement SET approved_by_id = %s WHERE id = %s",
        [users["second_manager"].pk, settled.pk],
    )
    as_auditor.post("/history/verify/")
    event = verification()
    assert event.data["verified"] is False
    assert "approved by no longer match" in event.data["problem"]
    job = Job.objects.get(kind=Job.Kind.VERIFY)
    # Both the events' seals and the rows-against-their-versions check catch it.
    failed, unversioned = job.items.filter(status=JobItem.Status.FAILED).order_by("pk")
    assert "settlements_settlement row" in unversioned.message
    # The page says it in words: the event's kind by name, a time as people write it.
    assert "approved by no longer match" in failed.message
    assert "settlement approved" in failed.message and "UTC)" in failed.message
    assert not re.search(r"\d{4}-\d{2}-\d{2}T", failed.message)
    html = as_auditor.get(f"/jobs/{job.pk}/").content.decode()
    assert "The record does not verify" in html and "tell whoever runs the database" in html
    assert 'href="/history/">Back to the history' in html
    assert '<li><a href="/history/">History</a></li>' in html
    page = as_auditor.get("/history/")
    assert b"Does not verify" in page.content


def test_a_tally_that_no_longer_counts_its_rows_fails_the_last_part(settled, as_auditor):
    behind_the_apps_back("UPDATE settlements_paymenttally SET paid_lines = 7")
    as_auditor.post("/history/verify/")
    assert "payment tally" in verification().data["problem"]


@pytest.mark.parametrize("who", ["as_operator", "as_manager", "as_marketing", "as_nobody"])
def test_only_the_auditor_may_start_it(settled, who, request):
    client = request.getfixturevalue(who)
    assert client.post("/history/verify/").status_code == 403
    assert not Job.objects.filter(kind=Job.Kind.VERIFY).exists()


def test_it_answers_post_only(settled, as_auditor):
    assert as_auditor.get("/history/verify/").status_code == 405
