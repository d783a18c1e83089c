"""The figures behind the statements of settlements prepared before they were kept.

Since migration 0013 a settlement keeps the engine's basis (``Settlement.basis``) and each
payout its weight and places by chips, and a player's statement prints its arithmetic from
them. A settlement prepared earlier has none of these: its statements give the words and the
amounts, but no working. This puts them back, once, by running the engine again on what the
settlement was computed from (its case's snapshot, its decision and its policy) and keeping
the figures only when the engine gives back exactly what is stored: every ledger line, every
payout and its explanation, the counts and totals. The engine may have changed since; when
it no longer gives the same result, the settlement is left as it is, with an event that says
why, and its statements say that no working is shown.

Not a migration: a migration is frozen, while this runs today's engine, which is the point
(and the reason for comparing); it takes an administrator's decision and leaves an audit
trail, and on a desk with 300,000-entrant settlements it is a long job better run apart
from a deploy (``manage.py restore_statement_bases``).

An approved settlement is final and payouts are written once (settlements.triggers). The
database lets only the tables' owner lift those guards (``pgtrigger.ignore``, hardened), so
this runs as the owner, like ``migrate``, and the app's own role still can change nothing.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import zip_longest
from operator import itemgetter

import pgtrigger
from django.db import connection, transaction

from settlements.access import permissions
from settlements.errors import DomainError
from settlements.models import Event, Settlement, SettlementLine, SettlementPayout, Snapshot
from settlements.rules import ENGINE_VERSION, InvalidInput, Policy, parse_snapshot, settle
from settlements.services.common import BULK_BATCH, lock_settlement, record_event, save_with_history
from settlements.services.settlements import (
    SETTLEMENT_PAYOUT_FIELDS,
    payout_rows,
)
from settlements.triggers import may_lift_triggers

# The payout columns added with the basis: empty on an older payout, filled from the engine.
_FILLED = ("weight", "place_first", "place_last")
_compared = itemgetter(
    *(at for at, name in enumerate(SETTLEMENT_PAYOUT_FIELDS) if name not in _FILLED)
)
_filled = itemgetter(*map(SETTLEMENT_PAYOUT_FIELDS.index, _FILLED))
_PLAYER_AT = SETTLEMENT_PAYOUT_FIELDS.index("player")
_POSITION_AT = SETTLEMENT_PAYOUT_FIELDS.index("position")
_LINE_FIELDS = ("line_no", "player", "kind", "unit", "amount", "source", "reversal")
_HEADER = (
    "currency",
    "stage",
    "remedy",
    "decision",
    "entrants",
    "eliminated",
    "remaining",
    "pool",
    "pool_distributed",
    "line_count",
    "payout_count",
)
_LIFTED = ("settlements.Settlement:final_when_approved", "settlements.SettlementPayout:write_once")
_READ_CHUNK = 5000


def settlements_without_basis():
    """Settlements proper (not adjustments) that keep no basis, oldest first."""
    return Settlement.objects.filter(kind=Settlement.Kind.SETTLEMENT, basis={}).order_by("id")


def settlements_awaiting_basis():
    """Settlements without a basis not yet tried with this engine version: one it could not
    match is tried again by id, or once the engine changes."""
    tried = Event.objects.filter(
        type=Event.Type.BASIS_NOT_RESTORED,
        subject_type="settlement",
        data__engine_version=ENGINE_VERSION,
    ).values("subject_id")
    return settlements_without_basis().exclude(pk__in=tried)


@dataclass(frozen=True)
class BasisCheck:
    """What running the engine again on a settlement gave: ``difference`` is empty when it
    gave exactly what is stored, else says the first thing that differs."""

    difference: str
    result: object = None  # the engine's rules.Settlement, when it ran
    fills: tuple[tuple[int, str, int | None, int | None], ...] = ()  # (payout id, weight, places)

    @property
    def matches(self) -> bool:
        return not self.difference


def settlement_basis_check(settlement: Settlement) -> BasisCheck:
    """Run the engine again on ``settlement``'s snapshot, decision and policy and compare its
    result with what is stored. Reads only."""
    snapshot = Snapshot.objects.values_list("text", flat=True).get(case__pk=settlement.case_id)
    try:
        parsed = parse_snapshot(snapshot)
        result = settle(
            parsed, decision=settlement.decision or None, policy=Policy(**settlement.policy)
        )
    except (InvalidInput, TypeError, ValueError) as problem:
        return BasisCheck(f"the engine no longer settles its snapshot: {problem}")
    if result.basis is None:
        return BasisCheck("the engine gives no figures for it")
    recomputed = {
        "currency": result.currency,
        "stage": result.stage,
        "remedy": result.remedy or "",
        "decision": result.decision or "",
        "entrants": result.entrants,
        "eliminated": result.eliminated,
        "remaining": result.remaining,
        "pool": result.pool,
        "pool_distributed": result.pool_distributed,
        "line_count": len(result.lines),
        "payout_count": len(result.payouts),
    }
    for name in _HEADER:
        if getattr(settlement, name) != recomputed[name]:
            return BasisCheck(
                f"its {name.replace('_', ' ')} is {getattr(settlement, name)!r} where the engine "
                f"now gives {recomputed[name]!r}"
            )
    if settlement.totals != result.line_totals:
        return BasisCheck("its totals differ from the engine's")
    difference = _lines_difference(settlement, result)
    if difference:
        return BasisCheck(difference)
    difference, fills = _payouts_difference(settlement, result)
    return BasisCheck(difference, result, () if difference else tuple(fills))


@transaction.atomic
def settlement_basis_restore(*, settlement: Settlement, actor=None) -> BasisCheck:
    """Keep the engine's figures with ``settlement`` if running it again gives exactly the
    stored result; otherwise change nothing. Either way an event records the outcome.
    ``actor`` is None: an administrator on the server (permissions.settlement_basis_restore)."""
    case, settlement = lock_settlement(settlement)
    permissions.enforce(permissions.settlement_basis_restore(settlement=settlement, user=actor))
    if not may_lift_triggers(connection):
        raise DomainError(
            "Restoring statement figures writes past the guards of approved settlements and "
            "payouts, which only the tables' owner may lift: run it as the owner (the role "
            "that migrates, MIGRATE_DATABASE_URL)."
        )
    check = settlement_basis_check(settlement)
    data = {"engine_version": ENGINE_VERSION, "prepared_with": settlement.engine_version}
    if not check.matches:
        record_event(
            Event.Type.BASIS_NOT_RESTORED,
            actor=actor,
            case=case,
            subject=settlement,
            reason=f"Not restored: {check.difference}",
            data=data,
        )
        return check
    reason = "Statement figures restored: the engine, run again, gave the same ledger lines"
    with pgtrigger.ignore(*_LIFTED):
        _fill_payouts(settlement, check.fills)
        settlement.basis = check.result.basis.to_dict()
        save_with_history(settlement, actor=actor, reason=reason)
    record_event(
        Event.Type.BASIS_RESTORED,
        actor=actor,
        case=case,
        subject=settlement,
        reason=reason,
        data={**data, "payouts_completed": len(check.fills)},
    )
    return check


def _lines_difference(settlement: Settlement, result) -> str:
    stored = _stored(SettlementLine, settlement, _LINE_FIELDS, "line_no")
    recomputed = (
        (line_no, line.player, line.kind, line.unit, line.amount, line.source, False)
        for line_no, line in enumerate(result.lines, start=1)
    )
    for number, (kept, fresh) in enumerate(zip_longest(stored, recomputed), start=1):
        if kept != fresh:
            return f"ledger line {number} is {_line_words(kept)} where the engine now gives " + (
                _line_words(fresh)
            )
    return ""


def _payouts_difference(settlement: Settlement, result) -> tuple[str, list[tuple]]:
    """The first payout that differs from the engine's, else the weights and places to write
    on the payouts that lack them, as (position, weight, first place, last place)."""
    # Rows in SETTLEMENT_PAYOUT_FIELDS order, as the prepare wrote them.
    stored = _stored(SettlementPayout, settlement, SETTLEMENT_PAYOUT_FIELDS, "position")
    recomputed = payout_rows(settlement.pk, result)
    fills = []
    for kept, fresh in zip_longest(stored, recomputed):
        if kept is None or fresh is None:
            return "the engine now pays a different number of players", []
        player = kept[_PLAYER_AT]
        if _compared(kept) != _compared(fresh):
            return f"the payout of {player} differs from the engine's", []
        if _filled(kept) == _filled(fresh):
            continue
        if _filled(kept) != ("", None, None):
            return f"the weight or places by chips of {player} differ from the engine's", []
        fills.append((kept[_POSITION_AT], *_filled(fresh)))
    return "", fills


def _fill_payouts(settlement: Settlement, fills) -> None:
    """Write the weights and places of payouts (position, weight, first, last): on PostgreSQL
    one UPDATE per BULK_BATCH payouts from arrays, some ten times faster than the CASE per row
    of bulk_update, which SQLite (a developer's few rows) keeps."""
    for start in range(0, len(fills), BULK_BATCH):
        batch = fills[start : start + BULK_BATCH]
        if connection.vendor != "postgresql":
            payouts = [
                SettlementPayout(
                    settlement=settlement,
                    position=position,
                    weight=weight,
                    place_first=first,
                    place_last=last,
                )
                for position, weight, first, last in batch
            ]
            SettlementPayout.objects.bulk_update(payouts, _FILLED)
            continue
        table = SettlementPayout._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} AS p SET weight = f.weight, place_first = f.first,"
                " place_last = f.last FROM unnest(%s::int[], %s::text[], %s::int[], %s::int[])"
                " AS f(position, weight, first, last)"
                " WHERE p.settlement_id = %s AND p.position = f.position",
                [*(list(column) for column in zip(*batch, strict=True)), settlement.pk],
            )


def _stored(model, settlement: Settlement, fields: tuple[str, ...], order: str) -> Iterator:
    rows = model.objects.filter(settlement=settlement).order_by(order).values_list(*fields)
    return rows.iterator(chunk_size=_READ_CHUNK)


def _line_words(line: tuple | None) -> str:
    if line is None:
        return "nothing"
    _, player, kind, unit, amount, source, reversal = line
    return f"{player} {kind} {amount} {unit} from the {source}" + (" reversed" if reversal else "")
