"""Journeys from a loaded snapshot to money paid, in Chromium.

(a) a regular tournament crashed in the middle stage: the operator reports and loads it,
    prepares, reviews and submits; a Tournament Manager approves; the ledger downloads.
(b) a freeroll in the middle stage: the Marketing Manager reschedules it.
(c) a satellite in the middle stage: the Marketing Manager chooses a split and the operator
    prepares the settlement; (d) compensation is proposed and approved; (e) an auditor finds
    all of it in the history browser.
"""

import csv
import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from settlements.models import Case, Compensation, Decision, Settlement
from settlements.services.snapshots import case_load_snapshot
from settlements.workflow import CaseStatus, CompensationStatus, SettlementStatus
from tests.conftest import make_user, snapshot_bytes
from tests.e2e.test_report_crash import report_incident

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def load_case(**snapshot) -> Case:
    """A case loaded through the service by the operator (the wizard has its own journey)."""
    operator = make_user(get_user_model(), "operator", "operator")
    return case_load_snapshot(actor=operator, snapshot=snapshot_bytes(**snapshot))


def test_a_regular_middle_stage_crash_is_prepared_approved_and_paid(
    signed_in_page, screenshot, tmp_path
):
    page = signed_in_page("operator")
    incident = report_incident(page, "Cluster B outage")
    page.get_by_role("link", name="Upload a snapshot").click()
    snapshot = tmp_path / "warm-up.json"
    snapshot.write_bytes(
        snapshot_bytes(type="regular", stage="middle", entrants=40, tournament_id="T-0042")
    )
    page.get_by_label("Snapshot file").set_input_files(str(snapshot))
    page.get_by_role("button", name="Load the snapshot").click()
    expect(page.get_by_role("heading", name="Stage: Middle")).to_be_visible()
    page.get_by_role("button", name="Prepare the settlement").click()
    expect(page.get_by_text(re.compile(r"Settlement #\d+ prepared"))).to_be_visible()
    settlement = Settlement.objects.get(case__incident=incident)

    # The review: 20 players share the 400.00 USD pool; each amount can be explained.
    page.get_by_role("link", name=f"Settlement #{settlement.pk}").click()
    expect(page).to_have_url(re.compile(rf"/settlements/{settlement.pk}/$"))
    expect(page.get_by_role("img", name=re.compile("Payout by chip rank"))).to_be_visible()
    table = page.locator("#payouts-table")
    expect(table.locator("tbody tr")).to_have_count(20)
    expect(table.locator("tfoot tr").first).to_have_text(
        re.compile(r"All 20 players\s+400\.00 USD")
    )
    page.get_by_role("link", name="Explain the amount of p000001").click()
    detail = page.locator("#player-detail")
    expect(detail).to_contain_text("Guaranteed first: buy-in back10.00 USD")
    expect(detail).to_contain_text("Capped at the first prizeno")
    screenshot(page, "10-settlement-review")

    page.get_by_label("Find a player").fill("p000003")
    expect(table.locator("tbody tr")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"\?q=p000003"))
    page.reload()
    expect(page.locator("#payouts-table tbody tr")).to_have_count(1)
    page.get_by_role("button", name="Submit for approval").click()
    expect(page.get_by_text("was sent to the Tournament Managers")).to_be_visible()

    # A Tournament Manager approves after reading what will be paid.
    manager = signed_in_page("tournament_manager", username="manager")
    manager.locator("#waiting").get_by_role("link", name=f"Settlement #{settlement.pk}").click()
    expect(manager).to_have_url(re.compile(rf"/settlements/{settlement.pk}/$"))
    manager.get_by_role("link", name="Approve…").click()
    statement = manager.locator("#confirm-statement")
    expect(statement).to_have_text(
        f"Approve settlement #{settlement.pk}: 20 players, 400.00 USD from the pool."
    )
    expect(manager).to_have_url(re.compile(rf"/settlements/{settlement.pk}/approve/$"))
    screenshot(manager, "11-approval-confirmation")
    approve = manager.get_by_role("button", name=f"Approve settlement #{settlement.pk}")
    expect(approve).to_have_class(re.compile("button--danger"))
    manager.get_by_label("Reason").fill("Chip counts match the server log.")
    approve.click()
    expect(manager.get_by_text(f"Settlement #{settlement.pk} approved.")).to_be_visible()
    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.APPROVED

    with manager.expect_download() as download:
        manager.get_by_role("link", name="Download the ledger (CSV)").click()
    assert download.value.suggested_filename == f"crashdesk-settlement-{settlement.pk}-T-0042.csv"
    with open(download.value.path(), newline="") as ledger:
        rows = list(csv.DictReader(ledger))
    assert len(rows) == 20
    assert {row["kind"] for row in rows} == {"prize"}
    assert sum(int(row["amount_minor"]) for row in rows) == 40_000
    assert rows[0]["idempotency_key"] == f"{settlement.pk}-1"


def test_a_freeroll_in_the_middle_stage_is_rescheduled(signed_in_page, screenshot):
    case = load_case(type="freeroll", stage="middle", entrants=60, tournament_id="F-0007")
    page = signed_in_page("marketing_manager", username="marketing")
    # The dashboard opens a case waiting for a decision where it is decided.
    page.get_by_role("link", name=f"Case #{case.pk}").first.click()
    expect(page).to_have_url(re.compile(rf"/cases/{case.pk}/decision/$"))

    page.get_by_role("radio", name="Reschedule").check()
    invitees = page.locator("#invitees")
    expect(page.get_by_text("Invited by default: the 30 remaining players")).to_be_visible()
    expect(invitees).to_contain_text("p000001")
    invitees.get_by_role("link", name="Next").click()
    expect(invitees).to_contain_text("p000030")
    expect(invitees).not_to_contain_text("p000001")
    new_date = timezone.localtime() + timedelta(days=7)
    page.get_by_label("New date").fill(new_date.strftime("%Y-%m-%dT20:00"))
    page.get_by_label("Why this option").fill(
        "The crash hit prime time; players asked for a rerun."
    )
    screenshot(page, "12-decision-reschedule")
    page.get_by_role("button", name="Review the decision").click()

    confirm = page.locator("#decision-form")
    expect(confirm).to_contain_text("The freeroll runs again on")
    expect(confirm).to_contain_text("Invited: the 30 remaining players.")
    expect(confirm).to_contain_text("Nothing is paid now.")
    page.get_by_role("button", name="Record the decision").click()
    expect(page).to_have_url(re.compile(rf"/cases/{case.pk}/$"))
    expect(page.get_by_role("heading", name="Remedy: Reschedule")).to_be_visible()
    decision = Decision.objects.get(case=case)
    assert decision.option == "reschedule"
    assert decision.invite_scope == Decision.InviteScope.REMAINING
    assert timezone.localtime(decision.reschedule_at).date() == new_date.date()


def test_a_satellite_split_then_compensation_then_the_audit(signed_in_page, screenshot):
    case = load_case(
        type="satellite", stage="middle", entrants=40, seat_value=3000, tournament_id="S-0099"
    )

    # (c) The Marketing Manager compares the two splits and chooses the proportional one.
    marketing = signed_in_page("marketing_manager", username="marketing")
    marketing.goto(f"/cases/{case.pk}/decision/")
    proportional = marketing.locator("#option-chip_proportional")
    equity = marketing.locator("#option-chip_equity")
    expect(proportional).to_contain_text("Players paid20")
    expect(equity).to_contain_text("Players paid20")
    expect(proportional.get_by_role("img")).to_be_visible()
    expect(proportional).to_contain_text("1 seat")  # the leader passes one seat's value
    marketing.get_by_role("radio", name="Split in proportion to chips").check()
    marketing.get_by_label("Why this option").fill("Site custom for satellites.")
    screenshot(marketing, "13-decision")
    marketing.get_by_role("button", name="Review the decision").click()
    expect(marketing.locator("#decision-form")).to_contain_text("20 players will be paid")
    marketing.get_by_role("button", name="Change").click()
    expect(marketing.get_by_role("radio", name="Split in proportion to chips")).to_be_checked()
    marketing.get_by_role("button", name="Review the decision").click()
    marketing.get_by_role("button", name="Record the decision").click()
    expect(marketing.get_by_role("heading", name="Remedy: Chip proportional split")).to_be_visible()

    # The operator prepares the settlement: seats for the top stacks, T$ for the rest.
    operator = signed_in_page("operator")
    operator.goto(f"/cases/{case.pk}/")
    operator.get_by_role("button", name="Prepare the settlement").click()
    expect(operator.get_by_text(re.compile(r"Settlement #\d+ prepared"))).to_be_visible()
    settlement = Settlement.objects.get(case=case)
    operator.get_by_role("link", name=f"Settlement #{settlement.pk}").click()
    expect(operator.locator("#payouts-table thead")).to_contain_text("Seats")
    expect(operator.locator("#payouts-table tbody tr").first).to_contain_text("1 seat")

    # (d) Compensation for two players, proposed by the operator, approved by a manager.
    operator.goto(f"/cases/{case.pk}/")
    operator.get_by_role("link", name="Propose compensation").click()
    operator.get_by_label("Players and amounts").fill("p000019 12.50\np000020 12.50")
    operator.get_by_label("What went wrong for these players").fill(
        "Disconnected by our lobby bug ten minutes before the crash."
    )
    operator.get_by_role("button", name="Propose").click()
    expect(operator).to_have_url(re.compile(r"/compensation/\d+/$"))
    expect(operator.locator("#compensation-items tfoot")).to_contain_text("25.00 USD")
    compensation = Compensation.objects.get(case=case)

    manager = signed_in_page("tournament_manager", username="manager")
    manager.get_by_role("link", name="Compensation", exact=True).click()
    queue = manager.locator("#compensation-list")
    expect(queue).to_contain_text("25.00 USD")
    screenshot(manager, "14-compensation-queue")
    queue.get_by_role("link", name=f"Compensation #{compensation.pk}").click()
    manager.get_by_role("link", name="Approve…").click()
    expect(manager.locator("#confirm-statement")).to_have_text(
        f"Approve compensation #{compensation.pk}: 2 players, 25.00 USD paid by the house."
    )
    manager.get_by_label("Reason").fill("Lobby bug confirmed by support.")
    manager.get_by_role("button", name=f"Approve compensation #{compensation.pk}").click()
    expect(manager.get_by_text(f"Compensation #{compensation.pk} approved.")).to_be_visible()
    compensation.refresh_from_db()
    assert compensation.status == CompensationStatus.APPROVED

    # (e) The auditor finds every step: events, versions with their diffs, the timeline.
    auditor = signed_in_page("auditor")
    auditor.get_by_role("link", name="History").click()
    auditor.get_by_label("Incident #").fill(str(case.incident_id))
    auditor.get_by_role("button", name="Filter").click()
    expect(auditor).to_have_url(re.compile(rf"incident={case.incident_id}"))
    browser = auditor.locator("#history-browser")
    expect(browser).to_contain_text(f"Compensation #{compensation.pk}")
    expect(browser).to_contain_text(f"Settlement #{settlement.pk}")
    expect(browser).to_contain_text("Lobby bug confirmed by support.")
    auditor.get_by_role("link", name="Business events").click()
    expect(auditor).to_have_url(re.compile(r"view=events"))
    for event in (
        "Decision recorded",
        "Settlement prepared",
        "Compensation proposed",
        "Compensation approved",
    ):
        expect(browser).to_contain_text(event)
    expect(browser).to_contain_text("Site custom for satellites.")
    screenshot(auditor, "15-history-browser")

    with auditor.expect_download() as download:
        auditor.get_by_role("link", name="Export as CSV").click()
    with open(download.value.path(), newline="") as exported:
        events = [row["event"] for row in csv.DictReader(exported)]
    assert {"decision_recorded", "settlement_prepared", "compensation_approved"} <= set(events)

    auditor.get_by_role("link", name="Compensation approved").click()
    expect(
        auditor.get_by_role("heading", name=f"History of Compensation #{compensation.pk}")
    ).to_be_visible()
    # The status change reads in words: "Awaiting approval" became "Approved".
    expect(auditor.locator(".version").first).to_contain_text("StatusAwaiting approvalApproved")
    screenshot(auditor, "16-history-record")
    auditor.go_back()
    auditor.get_by_role("link", name=f"Incident #{case.incident_id}").first.click()
    timeline = auditor.locator("#timeline")
    expect(timeline).to_contain_text("Snapshot loaded")
    expect(timeline.locator("li").first).to_contain_text("Incident reported")
    case.refresh_from_db()
    assert case.status == CaseStatus.PREPARED
