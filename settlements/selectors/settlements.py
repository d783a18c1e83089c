"""Stored settlements: their payouts, lines, totals and adjustments, and their
crash-settlement/1 documents.
"""

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connections, router
from django.db.models import QuerySet

from settlements.models import (
    Case,
    Incident,
    Settlement,
    SettlementLine,
    SettlementPayout,
    Tournament,
)
from settlements.rules import Line, PayoutRow, SettlementDocument
from settlements.selectors.common import BIG_TOURNAMENT_FIELDS, _rank

# The people a settlement's pages name, on the settlement and on its case.
_SETTLEMENT_PEOPLE = ("prepared_by", "submitted_by", "approved_by", "rejected_by")
_CASE_PEOPLE = ("withdrawn_by",)


def settlement_detail(settlement_id: int, *, people: bool = True) -> Settlement:
    """A settlement with its case, tournament and incident, and the people its pages name
    (read in one more query; ``people=False`` for a page that names nobody); the settlement
    it corrects is read only if asked for.

    Joining all of them (ten tables) through ``.get()`` took PostgreSQL 3 ms to plan, with
    ``.get()``'s LIMIT 21, for a query that ran in 0.1 ms. Building the four-table query
    through the ORM then cost more Python than reading it, so its SQL is compiled once per
    process (``_settlement_query``) and each read fills in the id.
    """
    db = router.db_for_read(Settlement)
    if db not in _settlement_queries:
        _settlement_queries[db] = _settlement_query(db)
    sql, params, at, compiler, converters, models = _settlement_queries[db]
    params = [*params]
    params[at] = settlement_id
    with connections[db].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        raise Settlement.DoesNotExist(f"No settlement #{settlement_id}.")
    if converters:
        rows = list(compiler.apply_converters(rows, converters))
    row, records = rows[0], []
    for model, names, start in models:
        records.append(model.from_db(db, names, row[start : start + len(names)]))
    settlement, case, tournament, incident = records
    case.tournament, case.incident = tournament, incident
    settlement.case = case
    if people:
        _attach_people(settlement)
    return settlement


_settlement_queries: dict[str, tuple] = {}
_NO_SETTLEMENT = -7_310_201  # stands for the id while compiling; no settlement has it


def _settlement_query(db: str) -> tuple:
    """The SQL of a settlement with its case, tournament (less its bulky fields) and incident
    as one row, where the sentinel id is in its parameters, and each model's slice of the row:
    (model, field names, first column)."""
    parts = (
        (Settlement, ""),
        (Case, "case__"),
        (Tournament, "case__tournament__"),
        (Incident, "case__incident__"),
    )
    models, paths = [], []
    for model, prefix in parts:
        names = [
            field.attname
            for field in model._meta.concrete_fields
            if not (model is Tournament and field.name in BIG_TOURNAMENT_FIELDS)
        ]
        models.append((model, names, len(paths)))
        paths += [f"{prefix}{name}" for name in names]
    queryset = Settlement.objects.using(db).filter(pk=_NO_SETTLEMENT).order_by()
    compiler = queryset.values_list(*paths).query.get_compiler(using=db)
    sql, params = compiler.as_sql()
    params = list(params)
    converters = compiler.get_converters([col[0] for col in compiler.select[: compiler.col_count]])
    return sql, tuple(params), params.index(_NO_SETTLEMENT), compiler, converters, models


def _attach_people(settlement: Settlement) -> None:
    """Set the user foreign keys the pages show, on the settlement and its case, from one
    query, as select_related would have, so that e.g. ``settlement.prepared_by`` reads no
    more. Its SQL too is compiled once per process, with a slot for each of them."""
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
    db = router.db_for_read(model)
    if db not in _people_queries:
        _people_queries[db] = _people_query(model, db)
    sql, params, slots, compiler, converters, names = _people_queries[db]
    params = [*params]
    # Unused slots repeat an id: "IN (7, 7)" finds user 7 once.
    for at, user_id in zip(slots, wanted + wanted[:1] * (len(slots) - len(wanted)), strict=True):
        params[at] = user_id
    with connections[db].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if converters:
        rows = compiler.apply_converters(rows, converters)
    users = {user.pk: user for user in (model.from_db(db, names, row) for row in rows)}
    for record, fields in records:
        for field in fields:
            user_id = getattr(record, f"{field}_id")
            if user_id in users:
                setattr(record, field, users[user_id])


_people_queries: dict[str, tuple] = {}


def _people_query(model, db: str) -> tuple:
    stand_ins = [-7_310_211 - slot for slot in range(len(_SETTLEMENT_PEOPLE + _CASE_PEOPLE))]
    names = [field.attname for field in model._meta.concrete_fields]
    queryset = model._default_manager.using(db).filter(pk__in=stand_ins).order_by()
    compiler = queryset.values_list(*names).query.get_compiler(using=db)
    sql, params = compiler.as_sql()
    params = list(params)
    converters = compiler.get_converters([col[0] for col in compiler.select[: compiler.col_count]])
    slots = [params.index(stand_in) for stand_in in stand_ins]
    return sql, tuple(params), slots, compiler, converters, names


def settlement_payouts(settlement: Settlement, *, search: str = "") -> QuerySet[SettlementPayout]:
    """Per-player totals with the engine's explanation, in the engine's order (player ids in
    code-point order); ``search`` matches part of the id. Paginate it: a settlement may pay
    300,000 players (by ``position`` ranges when unsearched, see views.paging)."""
    payouts = SettlementPayout.objects.filter(settlement=settlement)
    if search.strip():
        payouts = payouts.filter(player__icontains=search.strip())
    return payouts.order_by("position")


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
