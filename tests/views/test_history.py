"""The auditor's history browser: changes and events, filters, diffs, timeline, CSV."""

import csv
import io
import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from settlements import audit_log
from settlements.models import Event, Settlement
from settlements.services import compensation, tokens
from settlements.services import settlements as settlement_services
from settlements.services.decisions import decision_record
from settlements.services.incidents import incident_report
from settlements.services.snapshots import case_withdraw
from tests.conftest import clear_caches
from tests.views.conftest import HISTORY_RESTORE, HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


@pytest.fixture
def approved(operator, tournament_manager, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-HIST")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    return settlement_services.settlement_approve(
        settlement=settlement, actor=tournament_manager, reason="Matches the server log"
    )


def csv_rows(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_only_auditors_browse_and_only_by_reading(
    client, as_operator, as_manager, as_auditor, approved
):
    urls = [
        reverse("history"),
        reverse("history_export"),
        reverse("history_record", args=["settlement", approved.pk]),
        reverse("incident_timeline", args=[approved.case.incident_id]),
    ]
    for url in urls:
        assert client.get(url).status_code == 302
        assert as_operator.get(url).status_code == 403
        assert as_auditor.get(url).status_code == 200
        assert as_auditor.post(url).status_code == 405
        assert as_auditor.delete(url).status_code == 405
    for url in urls[:2]:
        assert as_manager.get(url).status_code == 403


def test_managers_read_the_history_of_the_cases_they_approve(as_manager, operator, approved):
    """The Tournament Manager who approves a case's settlement reads its versions and its
    incident's timeline, from the case page, but not the desk-wide browser or a token's."""
    case_page = assert_full_page(as_manager.get(reverse("case_detail", args=[approved.case_id])))
    record = reverse("history_record", args=["case", approved.case_id])
    timeline = reverse("incident_timeline", args=[approved.case.incident_id])
    assert f'href="{record}"' in case_page and f'href="{timeline}"' in case_page
    for url in (record, reverse("history_record", args=["settlement", approved.pk]), timeline):
        html = assert_full_page(as_manager.get(url))
        assert f'href="{reverse("history")}"' not in html
    assert_partial(as_manager.get(timeline, **HTMX), "timeline")
    token, _raw = tokens.api_token_create(user=operator, name="feed", actor=operator)
    assert as_manager.get(reverse("history_record", args=["apitoken", token.pk])).status_code == 403


def test_every_change_is_listed_newest_first(as_auditor, approved):
    html = assert_full_page(as_auditor.get(reverse("history")))
    record = reverse("history_record", args=["settlement", approved.pk])
    assert f'href="{record}#version-' in html
    assert "Matches the server log" in html
    assert html.index("Matches the server log") < html.index("Snapshot loaded")


def test_filters_narrow_the_changes(as_auditor, approved):
    url = reverse("history")
    incident_link = f">Incident #{approved.case.incident_id}</a>"
    settlement_link = f">Settlement #{approved.pk}</a>"
    by_user = as_auditor.get(url, {"user": "manager"}).content.decode()
    assert "Matches the server log" in by_user and "Snapshot loaded" not in by_user
    by_model = as_auditor.get(url, {"model": "incident"}).content.decode()
    assert incident_link in by_model and settlement_link not in by_model
    by_case = as_auditor.get(url, {"case": approved.case_id}).content.decode()
    assert settlement_link in by_case and incident_link not in by_case
    by_tournament = as_auditor.get(url, {"tournament": "T-HIST"}).content.decode()
    assert f">Tournament #{approved.case.tournament_id}</a>" in by_tournament
    by_incident = as_auditor.get(url, {"incident": approved.case.incident_id}).content.decode()
    assert incident_link in by_incident and settlement_link in by_incident
    assert "Timeline of incident" in by_incident
    tomorrow = (timezone.localdate() + timedelta(days=1)).isoformat()
    later = as_auditor.get(url, {"since": tomorrow}).content.decode()
    assert "Nothing recorded matches these filters." in later
    today = timezone.localdate().isoformat()
    assert settlement_link in as_auditor.get(url, {"since": today, "until": today}).content.decode()


def test_bad_filters_are_named_and_show_nothing(as_auditor, approved):
    response = as_auditor.get(reverse("history"), {"user": "ghost", "tournament": "NOPE"}, **HTMX)
    assert response.status_code == 422
    html = assert_partial(response, "history-browser")
    assert "No user is called “ghost”." in html
    assert "No tournament has the id “NOPE”." in html
    assert "Correct the filters above" in html


def test_events_are_a_tab_with_the_same_filters(as_auditor, approved):
    url = reverse("history")
    html = assert_partial(
        as_auditor.get(url, {"view": "events", "case": approved.case_id}, **HTMX), "history-browser"
    )
    for label in ("Snapshot loaded", "Settlement prepared", "Settlement submitted"):
        assert label in html
    assert "Settlement approved" in html and "Matches the server log" in html
    only = as_auditor.get(url, {"view": "events", "model": "settlement"}).content.decode()
    assert "Settlement approved" in only and "Snapshot loaded" not in only
    assert f'href="?case={approved.case_id}&amp;view=changes"' in html
    assert_full_page(as_auditor.get(url, {"view": "events"}, **HISTORY_RESTORE))


def test_a_record_shows_each_version_with_its_diff(as_auditor, approved):
    url = reverse("history_record", args=["settlement", approved.pk])
    html = assert_full_page(as_auditor.get(url))
    assert f"History of Settlement #{approved.pk}" in html
    assert html.count('class="panel version"') == 3  # prepared, submitted, approved
    # The approval changed the status from awaiting approval to approved, in words.
    assert '<td class="diff-old">Awaiting approval</td><td class="diff-new">Approved</td>' in html
    # Versions are numbered within the record, newest first; the record links to itself.
    numbers = re.findall(r">Version (\d+): ", html)
    assert numbers == ["3", "2", "1"]
    assert f'<a href="{reverse("settlement_review", args=[approved.pk])}" id="live-record">' in html
    assert "Reason: “Matches the server log”" in html
    assert "200.00 USD" in html  # amounts in the currency, not in cents
    assert "Settlement approved</strong> by manager" in html
    partial = assert_partial(as_auditor.get(url, **HTMX), "versions")
    assert "History of" not in partial
    missing = as_auditor.get(reverse("history_record", args=["settlement", 999_999]))
    assert missing.status_code == 404
    assert as_auditor.get(reverse("history_record", args=["user", 1])).status_code == 404


def test_codes_and_policies_read_as_words(as_auditor, marketing_manager, load_case):
    case = load_case(type="satellite", stage="middle", tournament_id="S-WORDS")
    decision = decision_record(
        case=case, actor=marketing_manager, option="chip_equity", reason="flatter"
    )
    html = as_auditor.get(reverse("history_record", args=["case", case.pk])).content.decode()
    assert "Split in proportion to chips or Split by chip equity" in html
    assert "stage marks at 5 % and 25 %, late stage by chip equity split" in html
    status = '<td class="diff-old">Awaiting decision</td><td class="diff-new">Ready to prepare</td>'
    assert status in html
    assert '<td class="diff-new">Split by chip equity</td>' in html
    assert "chip_equity" not in html and "awaiting_decision" not in html
    assert "Reason: “Decision: Split by chip equity”" in html
    record = reverse("history_record", args=["decision", decision.pk])
    html = as_auditor.get(record).content.decode()
    assert f"History of Decision #{decision.pk}: Split by chip equity" in html
    assert f'href="{reverse("case_detail", args=[case.pk])}" id="live-record">' in html
    assert f"See its case, #{case.pk} as it is now" in html


def test_the_incident_timeline_reads_oldest_first(as_auditor, approved):
    url = reverse("incident_timeline", args=[approved.case.incident_id])
    html = assert_full_page(as_auditor.get(url))
    order = ["Incident reported", "Snapshot loaded", "Settlement prepared", "Settlement approved"]
    positions = [html.index(label) for label in order]
    assert positions == sorted(positions)
    assert_partial(as_auditor.get(url, **HTMX), "timeline")


def test_long_histories_page_without_counting(as_auditor, operator):
    for number in range(55):
        incident_report(actor=operator, title=f"Outage {number:02d}", started_at=timezone.now())
    url = reverse("history")
    first = as_auditor.get(url, {"model": "incident"}).content.decode()
    assert "Page 1" in first and "Older" in first and "Newer" not in first
    second = assert_partial(
        as_auditor.get(url, {"model": "incident", "page": 2}, **HTMX), "history-browser"
    )
    assert "Page 2" in second and "Newer" in second and "Older" not in second
    assert second.count('class="nowrap"') == 5


def test_the_export_streams_what_is_filtered(as_auditor, approved):
    changes = as_auditor.get(reverse("history_export"), {"case": approved.case_id})
    assert changes.streaming and changes["Content-Type"] == "text/csv; charset=utf-8"
    assert "crashdesk-changes-" in changes["Content-Disposition"]
    rows = csv_rows(changes)
    assert {row["record_type"] for row in rows} == {"case", "settlement"}
    settlement_rows = [row for row in rows if row["record_type"] == "settlement"]
    assert len(settlement_rows) == Settlement.history.filter(id=approved.pk).count() == 3
    assert "Matches the server log" in {row["reason"] for row in settlement_rows}
    # The history id, as in a record page's #version- anchors (not the version's number there).
    assert {int(row["history_id"]) for row in settlement_rows} == set(
        Settlement.history.filter(id=approved.pk).values_list("history_id", flat=True)
    )

    events = csv_rows(
        as_auditor.get(reverse("history_export"), {"view": "events", "user": "manager"})
    )
    assert [row["event"] for row in events] == ["settlement_approved"]
    assert events[0]["tournament"] == "T-HIST"
    assert '"lines"' in events[0]["data"]
    assert len(csv_rows(as_auditor.get(reverse("history_export"), {"view": "events"}))) == (
        Event.objects.count()
    )
    assert as_auditor.get(reverse("history_export"), {"user": "ghost"}).status_code == 404


def test_the_auditor_finds_history_in_the_navigation(as_auditor, as_operator):
    assert f'href="{reverse("history")}"' in as_auditor.get(reverse("dashboard")).content.decode()
    assert (
        f'href="{reverse("history")}"' not in as_operator.get(reverse("dashboard")).content.decode()
    )


def test_history_pages_run_as_many_queries_whatever_the_history(as_auditor, operator):
    def count(url, **params) -> int:
        clear_caches()  # a first view: the browser is kept once drawn
        with CaptureQueriesContext(connection) as queries:
            assert as_auditor.get(url, params).status_code == 200
        return len(queries)

    incident_report(actor=operator, title="First", started_at=timezone.now())
    before = [count(reverse("history")), count(reverse("history"), view="events")]
    for number in range(30):
        incident_report(actor=operator, title=f"More {number}", started_at=timezone.now())
    after = [count(reverse("history")), count(reverse("history"), view="events")]
    assert before == after


def test_an_api_tokens_history_shows_its_versions(as_auditor, operator):
    # Its last use is left out of the history, so the first version cannot list that field.
    token, _raw = tokens.api_token_create(user=operator, name="EU game server", actor=operator)
    tokens.api_token_authenticate(raw=_raw)
    tokens.api_token_revoke(token=token, actor=operator)
    url = reverse("history_record", args=["apitoken", token.pk])
    html = assert_full_page(as_auditor.get(url))
    assert html.count('class="panel version"') == 2  # created, revoked
    assert "EU game server" in html
    assert "last used" not in html.lower()
    assert_partial(as_auditor.get(url, **HTMX), "versions")


def test_the_player_filter_keeps_what_concerns_that_player(
    as_auditor, operator, tournament_manager, second_manager, approved, load_case
):
    other = load_case(
        type="regular",
        stage="middle",
        tournament_id="T-OTHER",
        players=[{"id": f"q{n:03d}", "chips": n % 3} for n in range(1, 21)],
    )
    proposal = compensation.compensation_propose(
        case=approved.case,
        actor=operator,
        reason="frozen table",
        entries=[compensation.CompensationEntry("p000002", 300)],
    )
    compensation.compensation_approve(compensation=proposal, actor=second_manager)
    url = reverse("history")
    mine = as_auditor.get(url, {"player": "p000001"}).content.decode()
    assert f"Case #{approved.case_id}" in mine and f"Settlement #{approved.pk}" in mine
    assert f"Case #{other.pk}" not in mine
    assert f"Compensation #{proposal.pk}" not in mine  # it names another player
    theirs = as_auditor.get(url, {"player": "p000002"}).content.decode()
    assert f"Compensation #{proposal.pk}" in theirs
    events = as_auditor.get(url, {"player": "q001", "view": "events"}).content.decode()
    assert f"Case #{other.pk}" in events and f"Case #{approved.case_id}" not in events
    # A space is part of an id: "p000001 " is nobody.
    nobody = as_auditor.get(url, {"player": "p000001 "}).content.decode()
    assert "Nothing recorded matches these filters." in nobody
    rows = csv_rows(as_auditor.get(reverse("history_export"), {"player": "q001"}))
    assert rows and {row["record_type"] for row in rows} <= {"case", "tournament", "incident"}
    assert all(
        row["record_id"] in (str(other.pk), str(other.tournament_id), str(other.incident_id))
        for row in rows
    )


def test_the_page_shows_the_event_logs_head_and_that_it_verifies(client, users, approved):
    client.force_login(users["auditor"])
    count, head = audit_log.head()
    page = client.get("/history/")
    assert b"Verifies" in page.content and head.encode() in page.content
    assert f"{count} events chained".encode() in page.content
    partial = client.get("/history/?view=events", **HTMX)
    assert b"Event log" not in partial.content


def test_the_head_exports_as_a_small_download(client, users, approved):
    client.force_login(users["auditor"])
    response = client.get("/history/audit-head.json")
    assert response["Content-Disposition"].startswith('attachment; filename="crashdesk-audit-head')
    exported = response.json()
    assert (exported["events"], exported["head"], exported["verified"]) == (
        *audit_log.head(),
        True,
    )


def _browser(client, **params) -> str:
    html = client.get(reverse("history"), params).content.decode()
    return html[html.index('<div id="history-browser">') : html.index("</main>")]


def test_the_kept_browser_shows_what_was_recorded_since_at_once(as_auditor, operator, load_case):
    """The browser is a cached fragment keyed by the latest event and the latest version of
    every record type: a change through the services, or one made outside them (a shell, a
    data migration: a version without an event), shows on the very next view."""
    case = load_case(type="regular", stage="middle", tournament_id="T-SEEN")
    first = _browser(as_auditor)
    assert _browser(as_auditor) == first

    case_withdraw(case=case, actor=operator, reason="Loaded the wrong tournament")
    withdrawn = _browser(as_auditor)
    assert withdrawn != first and "Loaded the wrong tournament" in withdrawn

    case.refresh_from_db()
    case.description = "Corrected by hand"
    case._change_reason = "A correction in the shell"
    case.save()
    assert "A correction in the shell" in _browser(as_auditor)
    # The events view and other filters are kept apart.
    assert "A correction in the shell" not in _browser(as_auditor, view="events")
