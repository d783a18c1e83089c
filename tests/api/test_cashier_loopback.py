"""End to end over HTTP on PostgreSQL: the desk approves, a fake wallet (tests/api/fake_wallet.py)
reads the feed, pays, fails some, retries, confirms; the desk re-issues what failed for good.

At the end every player holds exactly what was approved for them, no key was paid twice, and
the reconciliation shows nothing failed or unconfirmed.
"""

from collections import defaultdict
from itertools import count

import pytest
from django.db import connection

from settlements.access import roles
from settlements.models import (
    CompensationItem,
    LedgerRelease,
    PaymentConfirmation,
    PrizeWithdrawal,
    SettlementLine,
)
from settlements.selectors.payments import lines as payment_lines
from settlements.selectors.payments import reconciliation as payment_reconciliation
from settlements.services import settlements as settlement_services
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.individual_cases import prize_withdrawal_approve, prize_withdrawal_decide
from settlements.services.reissues import reissue_approve, reissue_propose
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create
from tests.api.fake_wallet import FakeWallet
from tests.conftest import make_user

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="runs on PostgreSQL"),
    pytest.mark.slow,  # a live server answering a wallet over HTTP
]


def approved_amounts() -> dict:
    """What each player is owed, read straight from the approved records (not the feed)."""
    owed = defaultdict(int)
    lines = SettlementLine.objects.filter(settlement__status="approved").values_list(
        "player", "unit", "amount", "reversal", "settlement__currency"
    )
    for player, unit, amount, reversal, currency in lines:
        owed[player, unit, currency if unit in ("cash", "tdollars") else None] += (
            -amount if reversal else amount
        )
    items = CompensationItem.objects.filter(compensation__status="approved").values_list(
        "player", "unit", "amount", "compensation__currency"
    )
    for player, unit, amount, currency in items:
        owed[player, unit, currency if unit in ("cash", "tdollars") else None] += amount
    taken = PrizeWithdrawal.objects.filter(outcome="withdraw").values_list(
        "player", "unit", "amount", "case__tournament__currency"
    )
    for player, unit, amount, currency in taken:
        owed[player, unit, currency if unit in ("cash", "tdollars") else None] -= amount
    return {key: amount for key, amount in owed.items() if amount}


def test_a_wallet_pays_every_approved_line_exactly_once(
    live_server, django_user_model, snapshot_factory
):
    operator = make_user(django_user_model, "op", roles.OPERATOR)
    manager = make_user(django_user_model, "tm", roles.TOURNAMENT_MANAGER)
    other = make_user(django_user_model, "tm2", roles.TOURNAMENT_MANAGER)
    cashier = make_user(django_user_model, "wallet", roles.CASHIER)
    _, token = api_token_create(user=cashier, name="wallet")

    def submitted(**kwargs):
        case = case_load_snapshot(actor=operator, snapshot=snapshot_factory(**kwargs))
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        return settlement_services.settlement_submit(settlement=settlement, actor=operator)

    early = submitted(tournament_id="E-1", stage="early")
    satellite = submitted(tournament_id="S-1", type="satellite", stage="late")
    middle = submitted(tournament_id="M-1", stage="middle", entrants=40)
    settlement_services.settlement_approve(settlement=early, actor=manager)
    settlement_services.settlement_approve(settlement=satellite, actor=manager)
    proposal = compensation_propose(
        case=early.case,
        actor=operator,
        reason="disconnected",
        entries=[CompensationEntry("p000004", 1500), CompensationEntry("p000005", 300, "fpp")],
    )
    compensation_approve(compensation=proposal, actor=manager)

    calls = count()

    def declines(key: str) -> str | None:
        if key.startswith("R"):
            return None
        n = next(calls)
        return "permanent" if n % 9 == 4 else "transient" if n % 9 == 7 else None

    wallet = FakeWallet(live_server.url, token, declines)
    wallet.confirm(wallet.pay(wallet.read_feed()), lose_answer_of_batch=1)

    # More is approved while the wallet works: it picks up from its cursor.
    settlement_services.settlement_approve(settlement=middle, actor=other)
    proposal = prize_withdrawal_decide(
        case=satellite.case,
        actor=manager,
        player="p000002",
        prize="A seat from the wrong satellite",
        outcome="withdraw",
        reason="seat given twice",
        amount=1,
        unit="tickets",
    )
    prize_withdrawal_approve(withdrawal=proposal, actor=other, reason="checked")
    wallet.confirm(wallet.pay(wallet.read_feed()))

    # The desk re-issues what failed for good, with four eyes.
    read = list(payment_lines.approved_lines())
    failed = [p.line for p in payment_reconciliation.with_payments(read) if p.state == "failed"]
    assert failed, "the wallet's rule declined nothing for good; the test would prove little"
    for line in failed:
        reissue = reissue_propose(
            actor=operator, idempotency_key=line.key, reason="account details corrected"
        )
        reissue_approve(reissue=reissue, actor=manager)
    reissued = wallet.read_feed()
    assert sorted(line["reissue_of"] for line in reissued) == sorted(line.key for line in failed)
    wallet.confirm(wallet.pay(reissued))

    # Every approved line read once, in order; none paid twice; each player paid in full.
    everything = [line.key for line in payment_lines.approved_lines()]
    assert [line["idempotency_key"] for line in wallet.lines_read] == everything
    assert set(wallet.credited.values()) == {1}
    assert {k: v for k, v in wallet.balances.items() if v} == approved_amounts()
    assert wallet.answers["already_recorded"] > 0  # the lost answer was sent again
    transient = [key for key in wallet.failed if declines_kind(wallet, key) == "transient"]
    assert transient, "no failure was retried by the wallet"

    paid = PaymentConfirmation.objects.filter(status="paid")
    assert paid.count() == len(everything) - len(failed)
    assert len(set(paid.values_list("release_id", "line_no"))) == paid.count()
    summary = payment_reconciliation.reconciliation(LedgerRelease.objects.all())
    assert (summary.failed_lines, summary.unconfirmed_lines) == (0, 0)
    assert summary.reissued_lines == len(failed)
    assert summary.paid_lines == summary.lines - len(failed)
    assert payment_reconciliation.tallies_agree(LedgerRelease.objects.all()) == []


def declines_kind(wallet: FakeWallet, key: str) -> str:
    """How the wallet's failure of ``key`` ended: paid on retry (transient) or not."""
    return "transient" if wallet.credited[key] else "permanent"
