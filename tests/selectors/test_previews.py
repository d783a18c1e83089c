"""Selectors behind the decision and review screens: previews of each option (cached),
chart points by chip rank, the payout curve thinned in the database, one player's payout,
and events about one record."""

import pytest
from django.core.cache import cache

from settlements.rules import InvalidInput, Policy, Problem, parse_snapshot, settle
from settlements.selectors import previews as preview_selectors
from settlements.selectors.audit import event_list
from settlements.selectors.settlements import settlement_payout
from settlements.services.settlements import settlement_prepare
from settlements.views import cached_previews
from tests.services.helpers import approved, load

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def test_each_option_is_previewed_from_the_engine(operator, snapshot_factory):
    case = load(
        operator, snapshot_factory, type="satellite", stage="middle", entrants=40, seat_value=3000
    )
    previews = cached_previews.decision_previews(case)
    assert [p.option for p in previews] == ["chip_proportional", "chip_equity"]
    for preview in previews:
        engine = settle(
            parse_snapshot(case.snapshot.text),
            decision=preview.option,
            policy=Policy(**case.policy),
        )
        assert preview.remedy == engine.remedy
        assert preview.players_paid == len(engine.payouts)
        assert preview.pool_distributed == engine.pool_distributed
        totals: dict = {}
        for line in engine.lines:
            totals.setdefault(line.source, {}).setdefault(line.unit, 0)
            totals[line.source][line.unit] += line.amount
        assert preview.totals.by_source == totals
        # The biggest payout goes to the chip leader, p000001; the smallest to the shortest stack.
        assert preview.biggest.player == "p000001" and preview.biggest.rank == 1
        # Only the proportional split lifts the leader past one seat (30.00).
        assert preview.biggest.tickets == (1 if preview.option == "chip_proportional" else 0)
        assert preview.smallest.rank == preview.players_paid
        assert [point.rank for point in preview.chart] == list(range(1, 21))
        top = next(row for row in engine.payouts if row.player == "p000001")
        assert preview.chart[0].amount == top.tickets * 3000 + top.tdollars + top.cash


def test_a_reschedule_preview_pays_nothing(operator, snapshot_factory):
    case = load(operator, snapshot_factory, type="freeroll", stage="middle")
    reschedule, equity = cached_previews.decision_previews(case)
    assert reschedule.option == "reschedule" and reschedule.players_paid == 0
    assert reschedule.biggest is None and reschedule.chart == []
    assert equity.players_paid == case.remaining and equity.chart


def test_fpp_refunds_are_ordered_by_points_and_not_charted(operator, snapshot_factory):
    case = load(operator, snapshot_factory, type="freeroll", stage="early", entrants=20)
    for preview in cached_previews.decision_previews(case):
        assert preview.players_paid == 20
        assert preview.totals.by_source == {"house": {"fpp": 20 * 250}}
        assert preview.biggest.fpp == 250 and preview.chart == []


def test_previews_are_computed_once_then_cached(operator, snapshot_factory, monkeypatch):
    case = load(operator, snapshot_factory, type="satellite", stage="middle")
    first = cached_previews.decision_previews(case)

    def refuse(*args, **kwargs):
        raise AssertionError("the snapshot was parsed again")

    monkeypatch.setattr("settlements.selectors.previews.parse_snapshot", refuse)
    assert cached_previews.decision_previews(case) == first
    # A different policy is a different preview.
    case.policy = {**case.policy, "early_pct": 30}
    with pytest.raises(AssertionError, match="parsed again"):
        cached_previews.decision_previews(case)


def test_the_comparison_is_computed_with_the_previews_then_cached(
    operator, snapshot_factory, monkeypatch
):
    case = load(operator, snapshot_factory, type="satellite", stage="middle", entrants=40)
    settled = []
    original = preview_selectors._settled
    monkeypatch.setattr(
        "settlements.selectors.previews._settled",
        lambda *args: settled.append(args[2]) or original(*args),
    )
    reads = cached_previews.decision_page_reads(case)
    assert sorted(settled) == ["chip_equity", "chip_proportional"]  # each option once
    assert reads.previews == cached_previews.decision_previews(case)
    comparison = reads.comparison
    assert comparison.options == ("chip_proportional", "chip_equity")
    assert comparison.better_first + comparison.better_second + comparison.same == 20
    gaps = [abs(row.difference) for row in comparison.largest]
    assert gaps == sorted(gaps, reverse=True) and 0 not in gaps
    assert cached_previews.decision_page_reads(case) == reads
    assert len(settled) == 2


def test_a_case_without_options_has_no_previews(operator, snapshot_factory):
    assert cached_previews.decision_previews(load(operator, snapshot_factory)) == []


def test_payout_worth_counts_a_seat_at_its_value():
    assert preview_selectors.payout_worth(cash=5, tdollars=7, tickets=2, seat_value=100) == 212
    assert preview_selectors.payout_worth(cash=5, tdollars=0, tickets=0, seat_value=None) == 5


def test_chart_points_follow_chip_rank(operator, tournament_manager, snapshot_factory):
    settlement = approved(operator, tournament_manager, snapshot_factory, entrants=40)
    points = preview_selectors.settlement_chart_points(settlement)
    assert [p.rank for p in points] == list(range(1, 21))
    cash = {row.player: row.cash for row in settlement.payouts.all()}
    assert points[0].amount == cash["p000001"] and points[-1].amount == cash["p000020"]


def test_chart_points_are_empty_for_points_only_settlements(operator, snapshot_factory):
    case = load(operator, snapshot_factory, type="freeroll", stage="pre")
    settlement = settlement_prepare(case=case, actor=operator)
    assert preview_selectors.settlement_chart_points(settlement) == []


def test_one_players_payout(operator, snapshot_factory):
    settlement = settlement_prepare(case=load(operator, snapshot_factory), actor=operator)
    payout = settlement_payout(settlement, "p000001")
    assert payout.player == "p000001" and payout.cash > 0 and payout.exact
    assert settlement_payout(settlement, "nobody") is None


def test_events_about_one_record(operator, tournament_manager, snapshot_factory):
    settlement = approved(operator, tournament_manager, snapshot_factory)
    events = event_list(subject_type="settlement", subject_id=settlement.pk)
    assert [e.type for e in events] == [
        "settlement_approved",
        "settlement_submitted",
        "settlement_prepared",
    ]


def test_an_option_the_engine_refuses_is_previewed_as_its_problem(
    operator, snapshot_factory, monkeypatch
):
    case = load(operator, snapshot_factory, type="satellite", stage="middle")

    def refuse(snapshot, *, decision=None, policy=None):
        raise InvalidInput([Problem("--decision", "no split can honour these bounds")])

    monkeypatch.setattr("settlements.selectors.previews.settle", refuse)
    previews = cached_previews.decision_previews(case)
    assert [p.problem for p in previews] == ["no split can honour these bounds"] * 2
    assert all(p.players_paid == 0 and p.biggest is None for p in previews)


def test_the_payout_curve_is_thinned_in_the_database(operator, snapshot_factory):
    case = load(operator, snapshot_factory, stage="pre", entrants=100)
    settlement = settlement_prepare(case=case, actor=operator)
    curve = preview_selectors.settlement_payout_curve(settlement, points=10)
    assert [p["rank"] for p in curve] == [1, 11, 21, 31, 41, 51, 61, 71, 81, 91, 100]
    chips = [p["chips"] for p in curve]
    assert chips == sorted(chips, reverse=True)
    full = preview_selectors.settlement_payout_curve(settlement, points=500)
    assert len(full) == 100
