"""What the engine would pay under each decision option, and the payout charts. Previews are
costly for a large field: the pages keep them in the shared cache (views.previews) under the
keys given here, which hold everything that decides them.
"""

import json
from dataclasses import dataclass

from django.db.models import F, Q
from django.db.models.expressions import Window
from django.db.models.functions import RowNumber

from settlements.charts import ChartPoint, sample_by_rank
from settlements.models import Case, Settlement, SettlementPayout
from settlements.money import MONEY_UNITS
from settlements.rules import ENGINE_VERSION, InvalidInput, Policy, parse_snapshot, settle
from settlements.selectors.approvals import sorted_totals
from settlements.selectors.settlements import Totals, totals_from


@dataclass(frozen=True)
class PayoutExample:
    """One player's payout in a preview, with their chips and chip rank (1 = most chips)."""

    player: str
    chips: int
    rank: int
    cash: int
    tdollars: int
    tickets: int
    fpp: int


@dataclass(frozen=True)
class DecisionPreview:
    """What one decision option would pay, summarised from the engine's output.

    ``chart`` holds at most MAX_CHART_POINTS payouts by chip rank (see ``payout_worth``) out
    of ``players_paid``; it is empty when nothing is paid in money. ``problem`` is the
    engine's refusal when the option cannot be settled.
    """

    option: str
    remedy: str | None
    players_paid: int
    pool_distributed: int
    totals: "Totals"
    biggest: PayoutExample | None
    smallest: PayoutExample | None
    chart: list[ChartPoint]
    problem: str = ""


@dataclass(frozen=True)
class Amounts:
    """What one player receives under one option (all zero when they get nothing)."""

    cash: int = 0
    tdollars: int = 0
    tickets: int = 0
    fpp: int = 0


@dataclass(frozen=True)
class PlayerDifference:
    """One player's payouts under the two options and the difference, second minus first
    (in minor units of the currency, a seat at its value; in points when neither option pays
    money)."""

    player: str
    chips: int
    first: Amounts
    second: Amounts
    difference: int


@dataclass(frozen=True)
class Comparison:
    """Who gains and who loses between the two options of a decision, largest differences
    first (at most COMPARISON_ROWS of them)."""

    options: tuple[str, str]
    in_points: bool  # FPP, where neither option pays money
    better_first: int  # players who get more under the first option
    better_second: int
    same: int  # players paid the same (and something) under both
    largest: list[PlayerDifference]


@dataclass(frozen=True)
class DecisionReads:
    previews: list[DecisionPreview]
    comparison: Comparison | None


# How many players the comparison lists, the largest differences first.
COMPARISON_ROWS = 20

PREVIEW_CACHE_SECONDS = 24 * 60 * 60

COMPARISON = "comparison"


def preview_keys(case: Case, *, compare: bool) -> dict[str, str]:
    """The cache key of each option's preview and, for a choice between two options when
    ``compare``, of their per-player comparison (under COMPARISON)."""
    options = list(case.decision_options)
    keys = {option: _preview_key(case, option) for option in options}
    if compare and len(options) == 2:
        keys[COMPARISON] = _preview_key(case, ":".join([COMPARISON, *options]))
    return keys


def decision_reads_computed(case: Case, names: list[str]) -> dict:
    """The previews (and comparison) named, each computed from one settling per option."""
    options = list(case.decision_options)
    snapshot = parse_snapshot(case.snapshot.text)
    needed = options if COMPARISON in names else names
    results = {option: _settled(snapshot, case, option) for option in needed}
    return {
        name: _comparison(snapshot, options, results)
        if name == COMPARISON
        else _preview(snapshot, case, name, results[name])
        for name in names
    }


@dataclass(frozen=True)
class OptionTotals:
    """What one option pays over many cases, as (currency, unit, amount) the way
    ``unit_totals`` counts it, and how many of the cases the engine refuses under it."""

    totals: list[tuple[str, str, int]]
    refused: int


def option_totals(cases, previews: dict[int, list[DecisionPreview]], option: str) -> OptionTotals:
    """``option``'s previews of ``cases`` added up: the same figures their rows show, so the
    check before a grouped decision agrees with the table the choice was made from."""
    sums: dict[tuple[str, str], int] = {}
    refused = 0
    for case in cases:
        preview = next((p for p in previews[case.pk] if p.option == option), None)
        if preview is None or preview.problem:
            refused += 1
            continue
        for unit, amount in preview.totals.by_unit.items():
            # Seats and points are counts, not money: they add up across currencies.
            key = (case.tournament.currency if unit in MONEY_UNITS else "", unit)
            sums[key] = sums.get(key, 0) + amount
    return OptionTotals(sorted_totals(sums), refused)


def payout_worth(*, cash: int, tdollars: int, tickets: int, seat_value: int | None) -> int:
    """What a payout is worth in the currency, for charts and for ordering payouts: cash and
    T$ at face value, a seat at the seat value. FPP are points, not money, and are left out."""
    return cash + tdollars + tickets * (seat_value or 0)


def _preview_key(case: Case, option: str) -> str:
    policy = json.dumps(case.policy, sort_keys=True, separators=(",", ":"))
    return f"crashdesk:preview:{ENGINE_VERSION}:{case.snapshot.sha256}:{policy}:{option}"


def _settled(snapshot, case: Case, option: str):
    """The engine's settlement under ``option``, or its refusal (InvalidInput)."""
    try:
        return settle(snapshot, decision=option, policy=Policy(**case.policy))
    except InvalidInput as refusal:
        return refusal


def _preview(snapshot, case: Case, option: str, result) -> DecisionPreview:
    """The summary of ``result``, the engine's settlement under ``option`` or its refusal."""
    if isinstance(result, InvalidInput):
        return DecisionPreview(
            option=option,
            remedy=None,
            players_paid=0,
            pool_distributed=0,
            totals=totals_from({}),
            biggest=None,
            smallest=None,
            chart=[],
            problem="; ".join(problem.message for problem in result.problems),
        )
    totals: dict[str, dict[str, int]] = {}
    for line in result.lines:
        by_source = totals.setdefault(line.unit, {})
        by_source[line.source] = by_source.get(line.source, 0) + line.amount
    seat_value = getattr(snapshot.tournament, "seat_value", None)
    chips = {player.id: player.chips for player in snapshot.players}
    ranked = sorted(result.payouts, key=lambda row: (-chips[row.player], row.player))
    worth = [
        payout_worth(
            cash=row.cash, tdollars=row.tdollars, tickets=row.tickets, seat_value=seat_value
        )
        for row in ranked
    ]
    # Points-only payouts (FPP refunds) are ordered by points; money payouts by their worth.
    order = worth if any(worth) else [row.fpp for row in ranked]
    biggest = smallest = None
    if ranked:
        # The first of the largest and the last of the smallest, in chip rank order. Only these
        # two are shown; building an example of every payout cost more than the settling.
        top = order.index(max(order))
        lowest = min(order)
        bottom = len(order) - 1 - order[::-1].index(lowest)
        biggest, smallest = _example(ranked, top, chips), _example(ranked, bottom, chips)
    return DecisionPreview(
        option=option,
        remedy=result.remedy,
        players_paid=len(result.payouts),
        pool_distributed=result.pool_distributed,
        totals=totals_from(totals),
        biggest=biggest,
        smallest=smallest,
        chart=sample_by_rank(worth) if any(worth) else [],
    )


def _example(ranked, index: int, chips: dict[str, int]) -> PayoutExample:
    row = ranked[index]
    return PayoutExample(
        player=row.player,
        chips=chips[row.player],
        rank=index + 1,
        cash=row.cash,
        tdollars=row.tdollars,
        tickets=row.tickets,
        fpp=row.fpp,
    )


def _comparison(snapshot, options: list[str], results: dict) -> Comparison | None:
    first, second = options
    if any(isinstance(results[option], InvalidInput) for option in options):
        return None
    seat_value = getattr(snapshot.tournament, "seat_value", None)
    chips = {player.id: player.chips for player in snapshot.players}
    paid = {
        option: {
            row.player: Amounts(row.cash, row.tdollars, row.tickets, row.fpp)
            for row in results[option].payouts
        }
        for option in options
    }
    nothing = Amounts()

    def worth(amounts: Amounts) -> int:
        return payout_worth(
            cash=amounts.cash,
            tdollars=amounts.tdollars,
            tickets=amounts.tickets,
            seat_value=seat_value,
        )

    players = paid[first].keys() | paid[second].keys()
    in_points = not any(worth(amounts) for rows in paid.values() for amounts in rows.values())
    measure = (lambda amounts: amounts.fpp) if in_points else worth
    differences = [
        PlayerDifference(
            player=player,
            chips=chips[player],
            first=paid[first].get(player, nothing),
            second=paid[second].get(player, nothing),
            difference=measure(paid[second].get(player, nothing))
            - measure(paid[first].get(player, nothing)),
        )
        for player in players
    ]
    changed = [row for row in differences if row.difference]
    changed.sort(key=lambda row: (-abs(row.difference), -row.chips, row.player))
    return Comparison(
        options=(first, second),
        in_points=in_points,
        better_first=sum(row.difference < 0 for row in changed),
        better_second=sum(row.difference > 0 for row in changed),
        same=len(differences) - len(changed),
        largest=changed[:COMPARISON_ROWS],
    )


def settlement_payout_curve(settlement: Settlement, *, points: int = 200) -> list[dict]:
    """Payouts by chip rank (1 = most chips), thinned to about ``points`` evenly spaced
    ranks in the database so that a 300,000-player settlement stays a small chart."""
    count = settlement.payout_count
    step = max(1, -(-count // points))
    ranked = SettlementPayout.objects.filter(settlement=settlement).annotate(
        rank=Window(RowNumber(), order_by=[F("chips").desc(), F("player").asc()])
    )
    if step > 1:
        ranked = ranked.annotate(offset=(F("rank") - 1) % step).filter(Q(offset=0) | Q(rank=count))
    return list(
        ranked.order_by("rank").values(
            "rank", "player", "chips", "cash", "tdollars", "tickets", "fpp"
        )
    )


def settlement_chart_points(settlement: Settlement) -> list[ChartPoint]:
    """The payout chart's points by chip rank (see ``payout_worth``); empty when the
    settlement pays nothing in money (an FPP refund, an adjustment). A ranking of up to
    300,000 rows: the review page keeps the chart it draws from them in a cached fragment."""
    if settlement.is_adjustment:
        return []
    seat_value = settlement.case.tournament.seat_value
    points = [
        ChartPoint(
            row["rank"],
            payout_worth(
                cash=row["cash"],
                tdollars=row["tdollars"],
                tickets=row["tickets"],
                seat_value=seat_value,
            ),
        )
        for row in settlement_payout_curve(settlement)
    ]
    return points if any(point.amount for point in points) else []
