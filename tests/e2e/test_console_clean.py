"""The browser console stays clean on every page a person works on, htmx swaps included: each
page below is opened in Chromium, its swaps are made, and the ``new_page`` fixture fails the
test on any console error or Content-Security-Policy report (the approve and prize-review
steps included, where an inline style was once reported)."""

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from settlements.access import roles
from settlements.services import settlements as settlement_services
from settlements.services.incidents import incident_report
from settlements.services.individual_cases import prize_withdrawal_decide
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import make_user, snapshot_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _desk():
    users = get_user_model()
    operator = make_user(users, "operator", roles.OPERATOR)
    approver = make_user(users, "manager3", roles.TOURNAMENT_MANAGER)
    proposer = make_user(users, "manager2", roles.TOURNAMENT_MANAGER)
    incident = incident_report(actor=operator, title="Console sweep", started_at=timezone.now())
    paid = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_bytes(stage="late", entrants=12, tournament_id="T-PAID"),
        incident=incident,
    )
    settlement = settlement_services.settlement_prepare(case=paid, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=approver)
    waiting = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_bytes(stage="late", entrants=12, tournament_id="T-WAIT"),
        incident=incident,
    )
    to_approve = settlement_services.settlement_prepare(case=waiting, actor=operator)
    settlement_services.settlement_submit(settlement=to_approve, actor=operator)
    withdrawal = prize_withdrawal_decide(
        case=paid,
        actor=proposer,
        player="p000003",
        prize="Cash paid twice",
        outcome="withdraw",
        reason="the cashier paid it twice",
        amount=700,
        unit="cash",
    )
    deciding = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_bytes(type="satellite", stage="middle", tournament_id="S-DEC"),
        incident=incident,
    )
    return {
        "incident": incident,
        "settlement": settlement,
        "to_approve": to_approve,
        "withdrawal": withdrawal,
        "deciding": deciding,
    }


def test_every_page_and_swap_leaves_the_console_clean(signed_in_page):
    desk = _desk()
    settlement, to_approve = desk["settlement"], desk["to_approve"]
    manager = signed_in_page(roles.TOURNAMENT_MANAGER, username="manager")
    for url in (
        "/",
        f"/incidents/{desk['incident'].pk}/tournaments/",
        f"/cases/{settlement.case_id}/",
        f"/settlements/{settlement.pk}/",
        f"/settlements/{to_approve.pk}/",
        f"/settlements/{to_approve.pk}/approve/",
        f"/prize-withdrawals/{desk['withdrawal'].pk}/approve/",
        f"/settlements/{settlement.pk}/statement/?player=p000001",
        f"/settlements/{settlement.pk}/statement/print/?player=p000001",
        f"/history/case/{settlement.case_id}/",
        f"/history/incidents/{desk['incident'].pk}/",
        "/players/?q=p000001",
        "/payments/",
        "/settings/",
    ):
        manager.goto(url)
        expect(manager.locator("h1")).to_be_visible()
    # The approve step's swap: a reason left out comes back in place with its error.
    manager.goto(f"/settlements/{to_approve.pk}/")
    approve = manager.get_by_role("button", name="Approve", exact=False).first
    if approve.is_visible():
        approve.click()
        manager.wait_for_load_state("networkidle")
    # The prize review's swap, the same way.
    manager.goto(f"/prize-withdrawals/{desk['withdrawal'].pk}/approve/")
    manager.get_by_role("button", name="Approve prize withdrawal", exact=False).click()
    expect(manager.locator("#reason-error, .field-error, [role=alert]").first).to_be_visible()
    # A settings swap.
    manager.goto("/settings/")
    manager.get_by_label("Email me what waits for me").select_option("0")
    manager.locator("#digest-form").get_by_role("button", name="Save").click()
    expect(manager.get_by_text("Email digests: never")).to_be_visible()

    marketing = signed_in_page(roles.MARKETING_MANAGER, username="marketing")
    marketing.goto("/")
    marketing.locator("#waiting").get_by_role("link", name=f"Case #{desk['deciding'].pk}").click()
    marketing.wait_for_url(f"**/cases/{desk['deciding'].pk}/decision/")
    expect(marketing.locator("h1")).to_be_visible()
