"""Stored settlements: their payouts, lines, totals and adjustments, and their
crash-settlement/1 documents.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import QuerySet

from settlements.models import (
    Settlement,
    SettlementLine,
    SettlementPayout,
    Source,
)
from settlements.money import UNIT_ORDER, unit_rank
from settlements.rules import Line, PayoutRow, SettlementDocument
from settlements.selectors.common import lean

# The people a settlement's pages name, on the settlement and on its case.
_SETTLEMENT_PEOPLE = ("prepared_by", "submitted_by", "approved_by", "rejected_by")
_CASE_PEOPLE = ("withdrawn_by",)


def settlement_detail(settlement_id: int, *, people: bool = True) -> Settlement:
    """A settlement with its case, tournament and incident, and the people its pages name
    (read in one more query; ``people=False`` for a page that names nobody); the settlement
    it corrects is read only if asked for.

    The people are not joined: joining all of them (ten tables) took PostgreSQL 3 ms to plan,
    for a query that ran in 0.1 ms.
    """
    settlement = lean(
        Settlement.objects.select_related(
            "case__tournament", "case__incident", "case__rulebook_version__rulebook"
        ),
        "case__tournament",
    ).get(pk=settlement_id)
    if people:
        _attach_people(settlement)
    return settlement


def _attach_people(settlement: Settlement) -> None:
    """Set the user foreign keys the pages show, on the settlement and its case, from one
    query, so that e.g. ``settlement.prepared_by`` reads no more."""
    records = ((settlement, _SETTLEMENT_PEOPLE), (settlement.case, _CASE_PEOPLE))
    wanted = {
        user_id
        for record, fields in records
        for field in fields
        if (user_id := getattr(record, f"{field}_id")) is not None
    }
    if not wanted:
        return
    users = get_user_model()._default_manager.in_bulk(wanted)
    for record, fields in records:
        for field in fields:
            user_id = getattr(record, f"{field}_id")
            if user_id in users:
                setattr(record, field, users[user_id])


# Who gets the most first, unit by unit in the order the review's columns show them
# (money.UNIT_ORDER); ties stay in the engine's order.
BY_AMOUNT = (*(f"-{unit}" for unit in UNIT_ORDER), "position")


def settlement_payouts(
    settlement: Settlement, *, search: str = "", by_amount: bool = False
) -> QuerySet[SettlementPayout]:
    """Per-player totals with the engine's explanation, in the engine's order (player ids in
    code-point order) or, ``by_amount``, the largest first; ``search`` matches part of the id.
    Paginate it: a settlement may pay 300,000 players (by ``position`` ranges when unsearched
    in the engine's order, see views.paging)."""
    payouts = SettlementPayout.objects.filter(settlement=settlement)
    if search.strip():
        payouts = payouts.filter(player__icontains=search.strip())
    return payouts.order_by(*BY_AMOUNT) if by_amount else payouts.order_by("position")


def settlement_payout_range(settlement: Settlement, bottom: int, top: int) -> list:
    """The payouts at positions ``bottom`` to ``top - 1``, in order: a page of the review."""
    return list(
        SettlementPayout.objects.filter(
            settlement=settlement, position__gte=bottom, position__lt=top
        ).order_by("position")
    )


def settlement_payout(settlement: Settlement, player: str) -> SettlementPayout | None:
    """One player's payout row with the engine's explanation, or None if not paid."""
    return SettlementPayout.objects.filter(settlement=settlement, player=player).first()


def settlement_lines(settlement: Settlement, *, player: str | None = None, search: str = ""):
    """The lines in order; of one ``player``, or of those whose id holds ``search``."""
    lines = SettlementLine.objects.filter(settlement=settlement)
    if player is not None:
        lines = lines.filter(player=player)
    if search.strip():
        lines = lines.filter(player__icontains=search.strip())
    return lines.order_by("line_no")


def line_amounts_by_kind(settlement: Settlement, players: list[str]) -> dict[str, dict]:
    """{player: {line kind: amount}} of ``players``' lines in ``settlement``, through the
    (settlement, player) index: the parts a page of the review shows."""
    amounts: dict[str, dict[str, int]] = {}
    rows = SettlementLine.objects.filter(settlement=settlement, player__in=players)
    for player, kind, amount in rows.values_list("player", "kind", "amount"):
        by_kind = amounts.setdefault(player, {})
        by_kind[kind] = by_kind.get(kind, 0) + amount
    return amounts


@dataclass(frozen=True)
class Totals:
    """Sums of a settlement's lines: ``by_unit`` {unit: amount}, ``by_source``
    {source: {unit: amount}} and ``rows`` [(unit, source, amount)] in a stable order."""

    by_unit: dict[str, int]
    by_source: dict[str, dict[str, int]]
    rows: list[tuple[str, str, int]]


# Totals list sources in the one order their registry (models.Source) gives them.
_SOURCE_ORDER = tuple(Source.values)


def _source_rank(source: str) -> int:
    return _SOURCE_ORDER.index(source) if source in _SOURCE_ORDER else len(_SOURCE_ORDER)


def settlement_totals(settlement: Settlement) -> Totals:
    """Totals by unit and by source, from the sums stored when the settlement was written."""
    return totals_from(settlement.totals)


def totals_from(totals: dict[str, dict[str, int]]) -> Totals:
    rows = sorted(
        (
            (unit, source, amount)
            for unit, by_source in totals.items()
            for source, amount in by_source.items()
        ),
        key=lambda row: (unit_rank(row[0]), _source_rank(row[1])),
    )
    by_unit: dict[str, int] = {}
    by_source: dict[str, dict[str, int]] = {}
    for unit, source, amount in rows:
        by_unit[unit] = by_unit.get(unit, 0) + amount
        by_source.setdefault(source, {})[unit] = amount
    return Totals(by_unit=by_unit, by_source=by_source, rows=rows)


def settlements_as_dicts(settlements: Sequence[Settlement]) -> list[dict]:
    """Settlements (a settlement and its adjustments) in the ``crash-settlement/1`` format of
    ``manage.py settle``, rebuilt from the stored rows (adjustments list their take-backs as
    negative amounts), with two queries in all, however many they are."""
    if not settlements:
        return []
    ids = [settlement.pk for settlement in settlements]
    payouts: dict[int, list[PayoutRow]] = {pk: [] for pk in ids}
    rows = (
        SettlementPayout.objects.filter(settlement__in=ids)
        .order_by("settlement", "position")
        .values_list("settlement", "player", "cash", "tdollars", "tickets", "fpp")
    )
    for settlement_id, *payout in rows:
        payouts[settlement_id].append(PayoutRow(*payout))
    lines: dict[int, list[Line]] = {pk: [] for pk in ids}
    rows = (
        SettlementLine.objects.filter(settlement__in=ids)
        .order_by("settlement", "line_no")
        .values_list("settlement", "player", "kind", "unit", "amount", "source", "reversal")
    )
    for settlement_id, player, kind, unit, amount, source, reversal in rows:
        lines[settlement_id].append(
            Line(player, kind, unit, -amount if reversal else amount, source)
        )
    return [
        SettlementDocument(
            tournament_id=settlement.case.tournament.operator_id,
            policy=settlement.policy,
            stage=settlement.stage,
            remedy=settlement.remedy or None,
            decision=settlement.decision or None,
            decision_options=[] if settlement.remedy else list(settlement.case.decision_options),
            entrants=settlement.entrants,
            eliminated=settlement.eliminated,
            remaining=settlement.remaining,
            pool=settlement.pool,
            pool_distributed=settlement.pool_distributed,
            payouts=payouts[settlement.pk],
            lines=lines[settlement.pk],
        ).to_dict()
        for settlement in settlements
    ]


def settlement_adjustments(settlement: Settlement) -> QuerySet[Settlement]:
    """The adjustments that correct ``settlement``, oldest first."""
    return Settlement.objects.filter(corrects=settlement, kind=Settlement.Kind.ADJUSTMENT).order_by(
        "prepared_at", "id"
    )
