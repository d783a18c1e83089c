"""In Chromium, the places issue 22 found people left guessing: every approval waiting in one
list, whether a player was paid, bulk steps that say what they will do, the grouped decision
checked before it is recorded, and an incident page that says where it is. Each screen is
saved at desktop width and at 390 px; the page fixture fails the test on any console error
or Content-Security-Policy report (tests/e2e/conftest.py)."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from settlements.access import roles
from settlements.selectors.cases import case_status_counts
from settlements.services import reissues as reissue_services
from settlements.services import settlements as settlement_services
from settlements.services.incidents import incident_report
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import make_user, snapshot_bytes
from tests.e2e.test_guides import wait_for_job
from tests.payment_helpers import paid_out

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def both_widths(screenshot):
    """``both_widths(page, name)``: the page saved at desktop width and at 390 px."""

    def shoot(page, name: str) -> None:
        screenshot(page, f"22-{name}")
        page.set_viewport_size(PHONE)
        screenshot(page, f"22-{name}-390")
        page.set_viewport_size(DESKTOP)

    return shoot


def _people():
    users = get_user_model()
    return {
        "operator": make_user(users, "operator", roles.OPERATOR),
        "tournament_manager": make_user(users, "manager", roles.TOURNAMENT_MANAGER),
        "second_manager": make_user(users, "manager2", roles.TOURNAMENT_MANAGER),
        "cashier": make_user(users, "wallet", roles.CASHIER),
    }


def _load(operator, incident, **kwargs):
    return case_load_snapshot(actor=operator, snapshot=snapshot_bytes(**kwargs), incident=incident)


def test_a_second_manager_finds_the_reissue_and_support_sees_what_was_paid(
    signed_in_page, both_widths
):
    people = _people()
    operator, manager = people["operator"], people["tournament_manager"]
    incident = incident_report(
        actor=operator, title="Rack 4", started_at=timezone.now() - timedelta(hours=1)
    )
    case = _load(operator, incident, type="regular", stage="middle", tournament_id="P1")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=manager, reason="checked")
    out = paid_out(settlement, people)
    # Another failed line, proposed for paying again by the first manager: the second answers.
    waiting = reissue_services.reissue_propose(
        actor=manager, idempotency_key=out.failed.key, reason="account reopened"
    )

    page = signed_in_page("tournament_manager", username="manager2")
    panel = page.locator("#waiting")
    expect(panel).to_contain_text("Re-issues to approve (1)")
    both_widths(page, "waiting-reissue")
    panel.get_by_role("link", name=str(waiting)).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(str(waiting))

    # Who gets the most, first: the order is the server's and stays in the address.
    page.goto(f"/settlements/{settlement.pk}/")
    page.locator("#payout-sort").get_by_role("link", name="Largest first").click()
    expect(page).to_have_url(re.compile(r"sort=amount"))
    expect(page.locator("#payout-sort strong")).to_have_text("Largest first")
    both_widths(page, "payouts-largest-first")

    support = signed_in_page("auditor")
    support.goto(f"/players/?q={out.reissued.player}")
    row = support.locator("#player-cases tbody tr").first
    expect(row.locator('[data-payment="reissued"]')).to_contain_text(
        f"paid again as {out.reissue_key}"
    )
    expect(support.locator("#player-totals")).to_contain_text("USD")
    both_widths(support, "player-payments")
    row.get_by_role("link", name="Statement").click()
    expect(support.locator('[data-payment="reissued"]')).to_contain_text("wallet reference")
    both_widths(support, "statement-payment")


def test_bulk_steps_and_the_grouped_decision_say_what_they_will_do(signed_in_page, both_widths):
    people = _people()
    operator = people["operator"]
    incident = incident_report(
        actor=operator, title="Rack 9", started_at=timezone.now() - timedelta(hours=1)
    )
    for name in ("R1", "R2"):
        _load(operator, incident, type="regular", stage="late", entrants=12, tournament_id=name)
    deciding = [
        _load(operator, incident, type="freeroll", stage="middle", entrants=12, tournament_id=name)
        for name in ("F1", "F2")
    ]

    page = signed_in_page("operator")
    page.goto(f"/incidents/{incident.pk}/tournaments/")
    expect(page.locator('[aria-current="step"]')).to_have_text("Stage and remedy")
    expect(page.get_by_role("link", name="Submit every prepared settlement")).to_have_count(0)
    page.get_by_role("link", name="Prepare every ready case").click()
    expect(page.locator("#confirm-statement")).to_contain_text("Prepare 2 settlements")
    expect(page.locator("#bulk-skipped")).to_contain_text("waiting for the Marketing Manager")
    both_widths(page, "bulk-prepare-check")
    page.get_by_role("button", name="Prepare 2").click()
    wait_for_job(page, 2)

    # A decision form sent back with its errors (422) draws without a CSP report.
    marketing = signed_in_page("marketing_manager", username="marketing")
    marketing.goto(f"/cases/{deciding[0].pk}/decision/")
    marketing.get_by_role("radio", name="Split by chip equity").check()
    marketing.get_by_role("button", name="Review the decision").click()
    expect(marketing.locator("#decision-form")).to_contain_text("required")

    marketing.goto("/")
    together = marketing.locator("#waiting").get_by_role("link", name="decide alike cases together")
    together.first.click()
    expect(marketing.locator("#decide-options")).to_contain_text("Reschedule")
    expect(marketing.locator("#decide-previews")).to_contain_text("nothing paid now")
    both_widths(marketing, "grouped-decision")
    marketing.get_by_label("Split by chip equity").check()
    marketing.get_by_label("Reason").fill("Players prefer their share now.")
    marketing.get_by_role("button", name="Record the decision for 2 cases").click()
    expect(marketing.locator("#confirm-statement")).to_contain_text("for 2 freeroll cases")
    both_widths(marketing, "grouped-decision-check")
    marketing.get_by_role("button", name="Record the decision for these cases").click()
    wait_for_job(marketing, 2)
    assert all(case.decisions.count() == 1 for case in deciding)

    page.goto(f"/incidents/{incident.pk}/tournaments/")
    expect(page.locator('[aria-current="step"]')).to_have_count(0)
    expect(page.locator("#bulk-actions")).not_to_contain_text("Close the incident")
    both_widths(page, "incident-state")
    assert case_status_counts(incident=incident)["ready"] == 2
