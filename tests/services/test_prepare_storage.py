"""What settlement_prepare writes for a large settlement, and what it refuses to write."""

import pytest

from settlements.errors import DomainError
from settlements.models import Settlement, SettlementLine, SettlementPayout
from settlements.rules import parse_snapshot, settle
from settlements.services.settlements import settlement_prepare
from settlements.services.snapshots import case_load_snapshot
from settlements.workflow import CaseStatus
from tests.services.helpers import load

pytestmark = pytest.mark.django_db


def test_an_amount_beyond_what_the_database_holds_is_refused_before_anything_is_written(
    operator, snapshot_factory, monkeypatch
):
    # The engine keeps amounts far below a bigint; a lower limit shows the check at work.
    case = load(operator, snapshot_factory, stage="pre", entrants=8, buy_in=1000, fee=100)
    monkeypatch.setattr("settlements.services.settlements.MAX_AMOUNT", 1099)
    with pytest.raises(DomainError, match=r"\(1100\) is too large to store"):
        settlement_prepare(case=case, actor=operator)
    assert not Settlement.objects.exists()
    case.refresh_from_db()
    assert case.status == CaseStatus.READY


@pytest.mark.parametrize("stage", ["pre", "early", "middle", "late"])
def test_stored_rows_are_the_engines_output_in_order(operator, snapshot_factory, stage):
    data = snapshot_factory(stage=stage, entrants=30)
    case = case_load_snapshot(actor=operator, snapshot=data)
    settlement = settlement_prepare(case=case, actor=operator)
    engine = settle(parse_snapshot(data))

    lines = SettlementLine.objects.filter(settlement=settlement).order_by("line_no")
    assert [
        (ln.line_no, ln.player, ln.kind, ln.unit, ln.amount, ln.source, ln.reversal) for ln in lines
    ] == [
        (n, ln.player, ln.kind, ln.unit, ln.amount, ln.source, False)
        for n, ln in enumerate(engine.lines, start=1)
    ]
    payouts = SettlementPayout.objects.filter(settlement=settlement).order_by("position")
    assert [(p.player, p.cash, p.tdollars, p.tickets, p.fpp) for p in payouts] == [
        (p.player, p.cash, p.tdollars, p.tickets, p.fpp) for p in engine.payouts
    ]
    totals: dict = {}
    for line in engine.lines:
        by_source = totals.setdefault(line.unit, {})
        by_source[line.source] = by_source.get(line.source, 0) + line.amount
    assert settlement.totals == totals
