"""After approval, in Chromium: the cashier's answers reach the screens, a failed line is paid
again under four eyes, and the auditor finds every line paid exactly once.

The wallet system talks to the live server over HTTP with its bearer token, as it would in
production; the people use the pages.
"""

import json
import re
import urllib.request

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from settlements.access import roles
from settlements.models import Reissue
from settlements.services import settlements as settlement_services
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create
from tests.conftest import make_user, snapshot_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


class Wallet:
    """The cashier's side of the API, as a wallet system would call it."""

    def __init__(self, base_url: str):
        user = make_user(get_user_model(), "wallet", roles.CASHIER)
        _, self.token = api_token_create(user=user, name="wallet system")
        self.base_url = base_url

    def call(self, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def lines(self) -> list[dict]:
        return self.call("/api/v1/ledger?limit=1000")["lines"]

    def confirm(self, lines: list[dict], status: str, reference: str) -> dict:
        at = timezone.now().isoformat()
        return self.call(
            "/api/v1/ledger/confirmations",
            {
                "confirmations": [
                    {
                        "idempotency_key": line["idempotency_key"],
                        "status": status,
                        "external_reference": f"{reference}-{line['sequence']}",
                        "at": at,
                        "amount": line["amount"],
                    }
                    for line in lines
                ]
            },
        )


def test_a_failed_payment_is_reissued_under_four_eyes_and_every_line_is_paid_once(
    signed_in_page, screenshot, live_server
):
    users = get_user_model()
    operator = make_user(users, "operator", roles.OPERATOR)
    manager = make_user(users, "manager", roles.TOURNAMENT_MANAGER)
    case = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_bytes(type="regular", stage="late", entrants=12, tournament_id="T-PAY"),
    )
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=manager, reason="checked")

    # The wallet pays every line but one, which the player's bank refuses.
    wallet = Wallet(live_server.url)
    lines = wallet.lines()
    assert len(lines) == settlement.line_count > 1
    bounced, paid = lines[0], lines[1:]
    assert wallet.confirm(paid, "paid", "wal")["recorded"] == len(paid)
    assert wallet.confirm([bounced], "failed", "account closed")["recorded"] == 1
    # Sent again after a lost answer: nothing is written twice.
    assert wallet.confirm([bounced], "failed", "account closed")["already_recorded"] == 1

    # The operator sees where the settlement's money stands.
    page = signed_in_page("operator")
    page.goto(f"/settlements/{settlement.pk}/")
    summary = page.locator(".payments-summary")
    expect(summary.locator("tbody tr").first).to_have_text(
        re.compile(rf"Lines\s+{len(lines)}\s+{len(paid)}\s+1\s+0\s+0")
    )
    screenshot(page, "60-settlement-payments")

    # The payments queue lists the failed line; a Tournament Manager proposes to pay it again.
    proposer = signed_in_page(roles.TOURNAMENT_MANAGER, username="manager")
    proposer.get_by_role("link", name="Payments").first.click()
    expect(proposer).to_have_url(re.compile(r"/payments/"))
    failed = proposer.locator("#payments-queue tbody tr")
    expect(failed).to_have_count(1)
    expect(failed).to_contain_text(bounced["idempotency_key"])
    expect(failed).to_contain_text(f"account closed-{bounced['sequence']}")
    screenshot(proposer, "61-payments-failed")
    failed.get_by_role("link", name="Re-issue").click()
    expect(
        proposer.get_by_role("heading", name=f"Pay line {bounced['idempotency_key']} again")
    ).to_be_visible()
    proposer.get_by_label("Reason").fill("The player gave a new bank account by chat.")
    proposer.get_by_role("button", name="Propose the re-issue").click()
    expect(proposer.get_by_text("another Tournament Manager decides on it")).to_be_visible()
    reissue = Reissue.objects.get()
    waiting = proposer.locator("#payments-queue tbody tr")
    expect(waiting).to_contain_text(str(reissue))
    # Four eyes: the proposer is offered no way to approve their own re-issue.
    expect(waiting.get_by_role("link", name="Approve")).to_have_count(0)

    # A second Tournament Manager approves it after reading what will be paid.
    approver = signed_in_page(roles.TOURNAMENT_MANAGER, username="manager2")
    approver.goto("/payments/?tab=reissues")
    approver.locator("#payments-queue tbody tr").get_by_role("link", name="Approve").click()
    expect(approver.locator("#confirm-statement")).to_contain_text(
        f"in place of the failed line {bounced['idempotency_key']}"
    )
    approver.get_by_label("Reason").fill("New account checked with the player.")
    screenshot(approver, "62-reissue-approve")
    approver.get_by_role("button", name=re.compile("^Approve re-issue")).click()
    expect(approver.get_by_text(f"{reissue} approved.")).to_be_visible()

    # The feed now carries the new line under its own key; the wallet pays it.
    again = [line for line in wallet.lines() if line["reissue_of"] == bounced["idempotency_key"]]
    assert [line["idempotency_key"] for line in again] == [f"R{reissue.pk}-1"]
    assert wallet.confirm(again, "paid", "wal")["recorded"] == 1

    page.reload()
    expect(summary.locator("tbody tr").first).to_have_text(
        re.compile(rf"Lines\s+{len(lines)}\s+{len(paid)}\s+0\s+1\s+0")
    )

    # The auditor's one page: every approved line paid exactly once.
    auditor = signed_in_page(roles.AUDITOR, username="auditor")
    auditor.get_by_role("link", name="Payments").first.click()
    auditor.get_by_role("link", name="Was every approved line paid exactly once?").click()
    answer = auditor.locator("#payments-answer")
    expect(answer.get_by_role("heading")).to_have_text("Yes: every approved line was paid once")
    expect(answer).to_contain_text("0 lines paid more than once")
    expect(answer).to_contain_text(
        f"{len(lines)} of {len(lines) + 1} approved lines paid; 1 failed and replaced"
    )
    expect(answer).to_contain_text("The counts on every page agree with the confirmations")
    screenshot(auditor, "63-payments-audit")
