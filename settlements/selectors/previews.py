"""What the engine would pay under each decision option, and the payout charts: both costly
to compute for a large field, so both are computed once and kept in the shared cache.
"""

import json
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import F, Q
from django.db.models.expressions import Window
from django.db.models.functions import RowNumber

from settlements.charts import ChartPoint, sample_by_rank
from settlements.models import Case, Settlement, SettlementPayout
from settlements.rules import ENGINE_VERSION, InvalidInput, Policy, parse_snapshot, settle
from settlements.selectors.common import MISSING
from settlements.selectors.settlements import Totals, _totals_from


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


# Previews are cached by everything that decides them, so a snapshot of 300,000 entrants is
# settled once per option rather than on every view of the decision page.
PREVIEW_CACHE_SECONDS = 24 * 60 * 60


def decision_previews(case: Case) -> list[DecisionPreview]:
    """A preview of every option the case's decision offers, in the rules' order."""
    options = list(case.decision_options)
    if not options:
        return []
    keys = {option: _preview_key(case, option) for option in options}
    found = cache.get_many(list(keys.values()))
    missing = [option for option in options if keys[option] not in found]
    if missing:
        snapshot = parse_snapshot(case.snapshot.text)
        computed = {option: _preview(snapshot, case, option) for option in missing}
        cache.set_many(
            {keys[option]: preview for option, preview in computed.items()},
            PREVIEW_CACHE_SECONDS,
        )
        found.update({keys[option]: preview for option, preview in computed.items()})
    return [found[keys[option]] for option in options]


def payout_worth(*, cash: int, tdollars: int, tickets: int, seat_value: int | None) -> int:
    """What a payout is worth in the currency, for charts and for ordering payouts: cash and
    T$ at face value, a seat at the seat value. FPP are points, not money, and are left out."""
    return cash + tdollars + tickets * (seat_value or 0)


def _preview_key(case: Case, option: str) -> str:
    policy = json.dumps(case.policy, sort_keys=True, separators=(",", ":"))
    return f"crashdesk:preview:{ENGINE_VERSION}:{case.snapshot.sha256}:{policy}:{option}"


def _preview(snapshot, case: Case, option: str) -> DecisionPreview:
    try:
        result = settle(snapshot, decision=option, policy=Policy(**case.policy))
    except InvalidInput as exc:
        return DecisionPreview(
            option=option,
            remedy=None,
            players_paid=0,
            pool_distributed=0,
            totals=_totals_from({}),
            biggest=None,
            smallest=None,
            chart=[],
            problem="; ".join(problem.message for problem in exc.problems),
        )
    totals: dict[str, dict[str, int]] = {}
    for line in result.lines:
        by_source = totals.setdefault(line.unit, {})
        by_source[line.source] = by_source.get(line.source, 0) + line.amount
    seat_value = getattr(snapshot.tournament, "seat_value", None)
    chips = {player.id: player.chips for player in snapshot.players}
    ranked = sorted(result.payouts, key=lambda row: (-chips[row.player], row.player))
    examples = [
        PayoutExample(
            player=row.player,
            chips=chips[row.player],
            rank=rank,
            cash=row.cash,
            tdollars=row.tdollars,
            tickets=row.tickets,
            fpp=row.fpp,
        )
        for rank, row in enumerate(ranked, start=1)
    ]
    worth = [
        payout_worth(cash=e.cash, tdollars=e.tdollars, tickets=e.tickets, seat_value=seat_value)
        for e in examples
    ]
    # Points-only payouts (FPP refunds) are ordered by points; money payouts by their worth.
    order = worth if any(worth) else [e.fpp for e in examples]
    biggest = smallest = None
    if examples:
        top = max(range(len(examples)), key=lambda i: (order[i], -i))
        bottom = min(range(len(examples)), key=lambda i: (order[i], -i))
        biggest, smallest = examples[top], examples[bottom]
    return DecisionPreview(
        option=option,
        remedy=result.remedy,
        players_paid=len(result.payouts),
        pool_distributed=result.pool_distributed,
        totals=_totals_from(totals),
        biggest=biggest,
        smallest=smallest,
        chart=sample_by_rank(worth) if any(worth) else [],
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
    settlement pays nothing in money (an FPP refund, an adjustment).

    A settlement's payout rows are written once and never changed, so the points (a ranking
    of up to 300,000 rows) are computed once and cached."""
    if settlement.is_adjustment:
        return []
    key = f"crashdesk:chart:{settlement.pk}:{settlement.prepared_at.isoformat()}"
    points = cache.get(key, MISSING)
    if points is MISSING:
        points = _chart_points(settlement)
        cache.set(key, points, PREVIEW_CACHE_SECONDS)
    return points


def _chart_points(settlement: Settlement) -> list[ChartPoint]:
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
