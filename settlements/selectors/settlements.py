"""Stored settlements: their payouts, lines, totals and adjustments, and their
crash-settlement/1 documents.
"""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import QuerySet, Value

from settlements.models import (
    Case,
    Incident,
    Settlement,
    SettlementLine,
    SettlementPayout,
    Tournament,
)
from settlements.rules import Line, PayoutRow, SettlementDocument
from settlements.selectors.common import (
    BIG_TOURNAMENT_FIELDS,
    _rank,
    from_row,
    model_fields,
    read_compiled,
)

# The people a settlement's pages name, on the settlement and on its case.
_SETTLEMENT_PEOPLE = ("prepared_by", "submitted_by", "approved_by", "rejected_by")
_CASE_PEOPLE = ("withdrawn_by",)


def settlement_detail(settlement_id: int, *, people: bool = True) -> Settlement:
    """A settlement with its case, tournament and incident, and the people its pages name
    (read in one more query; ``people=False`` for a page that names nobody); the settlement
    it corrects is read only if asked for.

    Joining all of them (ten tables) through ``.get()`` took PostgreSQL 3 ms to plan, with
    ``.get()``'s LIMIT 21, for a query that ran in 0.1 ms. Building the four-table query
    through the ORM then cost more Python than reading it: both reads are compiled once per
    process (selectors.common.read_compiled).
    """
    rows = read_compiled(Settlement, "settlement_detail", _settlement_query, settlement_id)
    if not rows:
        raise Settlement.DoesNotExist(f"No settlement #{settlement_id}.")
    records, start = [], 0
    for model, names in _SETTLEMENT_PARTS:
        records.append(from_row(model, names, rows[0], start))
        start += len(names)
    settlement, case, tournament, incident = records
    case.tournament, case.incident = tournament, incident
    settlement.case = case
    if people:
        _attach_people(settlement)
    return settlement


# The settlement's row and those joined to it, each as (model, its fields read).
_SETTLEMENT_PARTS = (
    (Settlement, model_fields(Settlement)),
    (Case, model_fields(Case)),
    (Tournament, model_fields(Tournament, leaving_out=BIG_TOURNAMENT_FIELDS)),
    (Incident, model_fields(Incident)),
)


def _settlement_query(settlement_id: int) -> QuerySet:
    prefixes = ("", "case__", "case__tournament__", "case__incident__")
    paths = [
        f"{prefix}{name}"
        for prefix, (_, names) in zip(prefixes, _SETTLEMENT_PARTS, strict=True)
        for name in names
    ]
    return Settlement.objects.filter(pk=settlement_id).order_by().values_list(*paths)


# The settlement's people and its case's: at most this many users.
_PEOPLE_SLOTS = len(_SETTLEMENT_PEOPLE + _CASE_PEOPLE)


def _attach_people(settlement: Settlement) -> None:
    """Set the user foreign keys the pages show, on the settlement and its case, from one
    query, as select_related would have, so that e.g. ``settlement.prepared_by`` reads no
    more."""
    records = ((settlement, _SETTLEMENT_PEOPLE), (settlement.case, _CASE_PEOPLE))
    wanted = [
        user_id
        for record, fields in records
        for field in fields
        if (user_id := getattr(record, f"{field}_id")) is not None
    ]
    if not wanted:
        return
    model = get_user_model()
    names = model_fields(model)
    # Unused slots repeat an id: "IN (7, 7)" finds user 7 once.
    ids = wanted + wanted[:1] * (_PEOPLE_SLOTS - len(wanted))
    rows = read_compiled(model, "settlement_people", _people_query, *ids)
    users = {user.pk: user for user in (from_row(model, names, row) for row in rows)}
    for record, fields in records:
        for field in fields:
            user_id = getattr(record, f"{field}_id")
            if user_id in users:
                setattr(record, field, users[user_id])


def _people_query(*ids: int) -> QuerySet:
    model = get_user_model()
    return model._default_manager.filter(pk__in=ids).order_by().values_list(*model_fields(model))


def settlement_payouts(settlement: Settlement, *, search: str = "") -> QuerySet[SettlementPayout]:
    """Per-player totals with the engine's explanation, in the engine's order (player ids in
    code-point order); ``search`` matches part of the id. Paginate it: a settlement may pay
    300,000 players (by ``position`` ranges when unsearched, see views.paging)."""
    payouts = SettlementPayout.objects.filter(settlement=settlement)
    if search.strip():
        payouts = payouts.filter(player__icontains=search.strip())
    return payouts.order_by("position")


def settlement_payout_range(settlement: Settlement, bottom: int, top: int) -> list:
    """The payouts at positions ``bottom`` to ``top - 1``, in order: a page of the review.

    Built through the ORM, the query of a page cost about as much Python as drawing its rows;
    its SQL is compiled once per process (selectors.common.read_compiled)."""
    rows = read_compiled(
        SettlementPayout, "payout_range", _payout_range_query, settlement.pk, bottom, top
    )
    return [from_row(SettlementPayout, _PAYOUT_FIELDS, row) for row in rows]


_PAYOUT_FIELDS = model_fields(SettlementPayout)


def _payout_range_query(settlement_id: int, bottom: int, top: int) -> QuerySet:
    # The positions as expressions: compiled with negative stand-ins, plain values would be
    # found outside a positive field's range and the query judged empty.
    return (
        SettlementPayout.objects.filter(
            settlement_id=settlement_id, position__gte=Value(bottom), position__lt=Value(top)
        )
        .order_by("position")
        .values_list(*_PAYOUT_FIELDS)
    )


# A kept page of rows is never stale (its key holds all it was drawn from); the timeout only
# lets the entries of pages nobody opens again leave the cache.
PAYOUT_ROWS_CACHE_SECONDS = 60 * 60


def payout_rows_key(settlement: Settlement, *, variant: tuple) -> str:
    """The cache key of a review page's rendered payout rows.

    The rows show the settlement's payouts, which are written once and never change (a
    trigger refuses it, settlements.triggers), formatted with the settlement's own figures
    (currency, remedy, remaining, basis, totals): those are in the key, read from the row just
    loaded, so a correction made to them outside the services still shows at once. ``variant``
    is what else the markup depends on: the page, the search, the player whose row is marked,
    the code that draws it.
    """
    drawn_from = (
        settlement.pk,
        settlement.prepared_at.isoformat(),
        settlement.currency,
        settlement.remedy,
        settlement.remaining,
        json.dumps([settlement.basis, settlement.totals], sort_keys=True),
        variant,
    )
    digest = hashlib.blake2b(repr(drawn_from).encode(), digest_size=16).hexdigest()
    return f"payout-rows:{settlement.pk}:{digest}"


def kept_payout_rows(key: str) -> tuple[tuple[str, ...], str] | None:
    """The page's rows as kept under ``key``: the labels of the parts shown, and the rows."""
    return cache.get(key)


def keep_payout_rows(key: str, labels: tuple[str, ...], html: str) -> None:
    """Keep a page's rows under ``key`` for kept_payout_rows (one statement: crashdesk/cache.py)."""
    cache.set(key, (labels, html), PAYOUT_ROWS_CACHE_SECONDS)


def settlement_payout(settlement: Settlement, player: str) -> SettlementPayout | None:
    """One player's payout row with the engine's explanation, or None if not paid."""
    return SettlementPayout.objects.filter(settlement=settlement, player=player).first()


def settlement_lines(settlement: Settlement, *, player: str | None = None):
    lines = SettlementLine.objects.filter(settlement=settlement)
    if player is not None:
        lines = lines.filter(player=player)
    return lines.order_by("line_no")


@dataclass(frozen=True)
class Totals:
    """Sums of a settlement's lines: ``by_unit`` {unit: amount}, ``by_source``
    {source: {unit: amount}} and ``rows`` [(unit, source, amount)] in a stable order."""

    by_unit: dict[str, int]
    by_source: dict[str, dict[str, int]]
    rows: list[tuple[str, str, int]]


_UNIT_ORDER = ("cash", "tdollars", "tickets", "fpp")


_SOURCE_ORDER = ("pool", "house")


def settlement_totals(settlement: Settlement) -> Totals:
    """Totals by unit and by source, from the sums stored when the settlement was written."""
    return _totals_from(settlement.totals)


def _totals_from(totals: dict[str, dict[str, int]]) -> Totals:
    rows = sorted(
        (
            (unit, source, amount)
            for unit, by_source in totals.items()
            for source, amount in by_source.items()
        ),
        key=lambda row: (_rank(_UNIT_ORDER, row[0]), _rank(_SOURCE_ORDER, row[1])),
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
