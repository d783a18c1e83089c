"""Reads of one settlement: its payouts, searched, and its totals."""

import pytest

from settlements.selectors.settlements import settlement_payouts, settlement_totals
from settlements.services.settlements import settlement_prepare
from tests.services.helpers import load

pytestmark = pytest.mark.django_db


def test_payouts_search_and_totals(operator, snapshot_factory):
    case = load(operator, snapshot_factory, stage="early", entrants=40)
    settlement = settlement_prepare(case=case, actor=operator)
    payouts = settlement_payouts(settlement)
    assert [p.player for p in payouts] == sorted(p.player for p in payouts)
    assert [p.player for p in settlement_payouts(settlement, search="0001")] == [
        "p000001",
        "p000010",
        "p000011",
        "p000012",
        "p000013",
        "p000014",
        "p000015",
        "p000016",
        "p000017",
        "p000018",
        "p000019",
    ]
    totals = settlement_totals(settlement)
    lines = list(settlement.lines.all())
    by_source_cash = {
        source: sum(ln.amount for ln in lines if ln.source == source)
        for source in ("pool", "house")
    }
    assert totals.by_unit == {"cash": sum(ln.amount for ln in lines)}
    assert totals.by_source == {s: {"cash": v} for s, v in by_source_cash.items()}
    assert totals.rows == [
        ("cash", "pool", by_source_cash["pool"]),
        ("cash", "house", by_source_cash["house"]),
    ]
    assert by_source_cash["pool"] == settlement.pool_distributed
