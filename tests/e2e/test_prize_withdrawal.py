"""Taking back a prize given in error, in Chromium: one Tournament Manager proposes it, the
cashier's feed does not carry it, another finds it waiting on the dashboard and approves it,
and only then is its line on the feed."""

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from settlements.access import roles
from settlements.models import PrizeWithdrawal
from settlements.selectors.payments.lines import approved_lines
from settlements.services import settlements as settlement_services
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import make_user, snapshot_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def withdrawal_keys() -> list[str]:
    return [line.key for line in approved_lines() if line.key.startswith("W")]


def test_a_prize_is_taken_back_only_once_a_second_manager_approves(signed_in_page, screenshot):
    users = get_user_model()
    operator = make_user(users, "operator", roles.OPERATOR)
    approver_of_settlement = make_user(users, "manager3", roles.TOURNAMENT_MANAGER)
    case = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_bytes(type="regular", stage="late", entrants=12, tournament_id="T-PW"),
    )
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=approver_of_settlement)

    proposer = signed_in_page(roles.TOURNAMENT_MANAGER, username="manager")
    proposer.goto(f"/cases/{case.pk}/")
    proposer.get_by_role("link", name="A prize given in error…").click()
    proposer.get_by_label("Player id").fill("p000002")
    proposer.get_by_label("The prize given in error").fill("Cash paid twice for 2nd place")
    proposer.get_by_label("Amount", exact=False).and_(proposer.get_by_role("textbox")).fill("25.00")
    proposer.get_by_label("Unit of the amount").select_option("cash")
    proposer.get_by_label("Withdraw the prize").check()
    proposer.get_by_label("Why").fill("The cashier paid the prize twice.")
    proposer.get_by_role("button", name="Review the decision").click()
    expect(proposer.get_by_text("this is a proposal")).to_be_visible()
    proposer.get_by_role("button", name="Propose the withdrawal").click()
    expect(proposer.get_by_text("another Tournament Manager approves it")).to_be_visible()
    withdrawal = PrizeWithdrawal.objects.get()
    row = proposer.locator(f"#withdrawal-{withdrawal.pk}")
    expect(row).to_contain_text("Awaiting approval")
    # Four eyes: the proposer is offered no answer to their own proposal.
    expect(row.get_by_role("link", name="Approve…")).to_have_count(0)
    assert withdrawal_keys() == []

    approver = signed_in_page(roles.TOURNAMENT_MANAGER, username="manager2")
    waiting = approver.locator("#waiting")
    expect(waiting).to_contain_text("Prize withdrawals to approve")
    # The waiting item opens the approval itself, which restates what is taken back.
    waiting.get_by_role("link", name=str(withdrawal)).click()
    expect(approver.locator("#confirm-statement")).to_contain_text(
        "The cashier will collect 25.00 USD back from p000002"
    )
    approver.get_by_label("Reason").fill("Checked the double payment in the wallet.")
    screenshot(approver, "63-prize-withdrawal-approve")
    approver.get_by_role("button", name=re.compile("^Approve prize withdrawal")).click()
    expect(approver.get_by_text("its line goes to the cashier")).to_be_visible()
    expect(approver.locator(f"#withdrawal-{withdrawal.pk}")).to_contain_text("approved by manager2")
    assert withdrawal_keys() == [f"W{withdrawal.pk}-1"]
