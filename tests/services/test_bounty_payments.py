"""The line kinds of RULES.md §8 on their way to the wallet: the ledger export, the cashier's
feed, the incident's payment batch, confirmations and reconciliation."""

import csv
import io
import json

import pytest
from django.utils import timezone

from settlements.exports import ledger
from settlements.models import LedgerRelease
from settlements.selectors.payments.lines import approved_lines
from settlements.selectors.payments.reconciliation import reconciliation
from settlements.services import payments
from settlements.services import settlements as settlement_services
from settlements.services.payments import ConfirmationEntry
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import snapshot_bytes

pytestmark = pytest.mark.django_db


@pytest.fixture
def knock_outs(operator, tournament_manager):
    """Two approved rebuy knock-out settlements of one incident: one refunded before the start
    (bounty refunds), one settled in the middle stage (bounties to the players still in)."""
    settled = []
    incident = None
    for stage in ("pre", "middle"):
        data = snapshot_bytes(rebuys=True, entrants=24, stage=stage, tournament_id=f"KO-{stage}")
        case = case_load_snapshot(actor=operator, snapshot=data, incident=incident)
        incident = case.incident
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
        settled.append(
            settlement_services.settlement_approve(
                settlement=settlement, actor=tournament_manager, reason="checked"
            )
        )
    return settled


def test_the_ledger_export_carries_bounty_lines_as_cash(knock_outs):
    refunded, middle = knock_outs
    rows = list(csv.DictReader(io.StringIO("".join(ledger.settlement_ledger_csv(refunded)))))
    refunds = [r for r in rows if r["kind"] == "refund_bounty"]
    assert refunds and {(r["unit"], r["source"], r["currency"]) for r in refunds} == {
        ("cash", "house", "USD")
    }
    rows = list(csv.DictReader(io.StringIO("".join(ledger.settlement_ledger_csv(middle)))))
    bounties = [r for r in rows if r["kind"] == "bounty"]
    assert {(r["unit"], r["source"]) for r in bounties} == {("cash", "bounty")}
    assert sum(int(r["amount_minor"]) for r in bounties) == middle.totals["cash"]["bounty"]


def test_the_feed_the_batch_and_reconciliation_count_the_bounties(knock_outs, cashier):
    refunded, middle = knock_outs
    feed = list(approved_lines())
    assert {"refund_bounty", "bounty"} <= {line.kind for line in feed}
    batch = json.loads(b"".join(ledger.incident_batch_json(middle.case.incident)))
    assert {"refund_bounty", "bounty"} <= {line["kind"] for line in batch["lines"]}

    bounty_lines = [line for line in feed if line.kind == "bounty"]
    answers = payments.payment_confirm(
        actor=cashier,
        confirmations=[
            ConfirmationEntry(line.key, "paid", f"tx-{i}", timezone.now(), line.amount)
            for i, line in enumerate(bounty_lines)
        ],
    )
    assert {answer.outcome for answer in answers} == {"recorded"}
    state = reconciliation(LedgerRelease.objects.all())
    assert state.paid_lines == len(bounty_lines)
    assert state.paid["USD", "cash"] == sum(line.amount for line in bounty_lines)
    total_cash = sum(sum(s.totals["cash"].values()) for s in knock_outs)
    assert state.approved["USD", "cash"] == total_cash
