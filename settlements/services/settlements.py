"""Settlements: prepared by the engine, submitted, approved or rejected by another Tournament
Manager, and corrected by linked adjustments once approved.
"""

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import count, repeat
from operator import add, attrgetter

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from settlements import audit_log, seals
from settlements.access import permissions
from settlements.errors import DomainError, InvalidTransition
from settlements.models import (
    Case,
    Event,
    LineKind,
    Settlement,
    SettlementLine,
    SettlementPayout,
    Source,
    Unit,
)
from settlements.money import UNIT_ORDER
from settlements.rules import (
    ENGINE_VERSION,
    ExplanationTerms,
    InvalidInput,
    Policy,
    parse_snapshot,
    settle,
)
from settlements.services.common import (
    BULK_BATCH,
    MAX_AMOUNT,
    entrants_among,
    insert_rows,
    lock_case,
    lock_settlement,
    record_event,
    required_text,
    save_with_history,
)
from settlements.services.icm import icm_valuation_begin
from settlements.services.payments import release_lines, unit_totals
from settlements.workflow import SettlementStatus, case_next_status, settlement_next_status

# Which unit and source each kind of line may have (SNAPSHOT.md, "lines").
LINE_SHAPES: dict[str, tuple[frozenset[str], str]] = {
    LineKind.REFUND_BUY_IN: (frozenset({Unit.CASH}), Source.POOL),
    LineKind.REFUND_FEE: (frozenset({Unit.CASH}), Source.HOUSE),
    LineKind.REFUND_BOUNTY: (frozenset({Unit.CASH}), Source.HOUSE),
    LineKind.REFUND_FPP: (frozenset({Unit.FPP}), Source.HOUSE),
    LineKind.PRIZE: (frozenset({Unit.CASH, Unit.TDOLLARS}), Source.POOL),
    LineKind.TICKET: (frozenset({Unit.TICKETS}), Source.POOL),
    LineKind.BOUNTY: (frozenset({Unit.CASH}), Source.BOUNTY),
}


# What a settlement's step changes of its case: its status (and the time of the change).
CASE_MOVED = ("status", "updated_at")


@dataclass(frozen=True)
class AdjustmentEntry:
    """One correction of an approved settlement: a positive amount pays more, a negative one
    takes back part of what was paid under the same player, kind, unit and source."""

    player: str
    kind: str
    unit: str
    amount: int
    source: str


@transaction.atomic
def settlement_prepare(*, case: Case, actor, note: str = "") -> Settlement:
    """Run the engine on the case's snapshot, decision and policy; store its result."""
    case = lock_case(case)
    permissions.enforce(permissions.settlement_prepare(case=case, user=actor))
    next_status = case_next_status(case.status, "prepare", label=str(case))
    parsed = parse_snapshot(case.snapshot.text)
    try:
        result = settle(parsed, decision=case.decision or None, policy=Policy(**case.policy))
    except InvalidInput as exc:
        problems = "; ".join(str(problem) for problem in exc.problems)
        raise DomainError(f"The rules cannot settle {case}: {problems}") from exc

    _check_storable(result)
    settlement = _settlement_of(result, case=case, actor=actor, note=note)
    try:
        with transaction.atomic():
            save_with_history(settlement, actor=actor, reason=note.strip() or "Settlement prepared")
    except IntegrityError:
        raise InvalidTransition(f"{case} already has a settlement in progress.") from None
    payouts = _insert_payouts_and_lines(settlement.pk, result)
    # Before the event, which then seals the figures of a field valued here and now.
    valuation = icm_valuation_begin(settlement=settlement, snapshot=parsed, actor=actor)
    case.status = next_status
    save_with_history(case, actor=actor, reason=f"{settlement} prepared", fields=CASE_MOVED)
    record_event(
        Event.Type.SETTLEMENT_PREPARED,
        actor=actor,
        case=case,
        subject=settlement,
        reason=settlement.note,
        facts={"payout_rows": payouts},
        sealed=[valuation] if valuation is not None else [],
        data={
            "remedy": settlement.remedy,
            "decision": settlement.decision,
            "lines": settlement.line_count,
            "payouts": settlement.payout_count,
            "pool_distributed": settlement.pool_distributed,
            "totals": settlement.totals,
            "engine_version": ENGINE_VERSION,
        },
    )
    return settlement


def _settlement_of(result, *, case: Case, actor, note: str) -> Settlement:
    """The settlement row of an engine result (rules.Settlement), not saved yet."""
    return Settlement(
        case=case,
        kind=Settlement.Kind.SETTLEMENT,
        status=SettlementStatus.PREPARED,
        currency=result.currency,
        stage=result.stage,
        remedy=result.remedy or "",
        decision=result.decision or "",
        policy=result.policy.to_dict(),
        engine_version=ENGINE_VERSION,
        entrants=result.entrants,
        eliminated=result.eliminated,
        remaining=result.remaining,
        pool=result.pool,
        pool_distributed=result.pool_distributed,
        totals=result.line_totals,
        basis=result.basis.to_dict(),
        line_count=len(result.lines),
        payout_count=len(result.payouts),
        # A pass of its own: the settlement row, which seals it, is written before the lines.
        ledger_digest=audit_log.new_ledger_digest(result.lines),
        note=note.strip(),
        loaded_by_id=case.created_by_id,
        prepared_by=actor,
    )


def _insert_payouts_and_lines(settlement_id: int, result) -> str:
    """Write the payouts and lines; the payouts' digest, for the event to seal. The payout
    rows are built and digested a chunk at a time on their way to the database, while it
    inserts the chunks before."""
    payouts = seals.rows_digest(seals.PAYOUTS, fields=SETTLEMENT_PAYOUT_FIELDS)
    rows = payouts.passing(payout_rows(settlement_id, result))
    insert_rows(SettlementPayout, SETTLEMENT_PAYOUT_FIELDS, rows)
    insert_rows(
        SettlementLine,
        ("settlement", "line_no", "player", "kind", "unit", "amount", "source", "reversal"),
        (
            (
                settlement_id,
                line_no,
                line.player,
                line.kind,
                line.unit,
                line.amount,
                line.source,
                False,
            )
            for line_no, line in enumerate(result.lines, start=1)
        ),
    )
    return payouts.hexdigest()


@transaction.atomic
def settlement_submit(*, settlement: Settlement, actor) -> Settlement:
    """Send a prepared settlement (or adjustment) to the Tournament Managers for approval."""
    case, settlement = lock_settlement(settlement)
    permissions.enforce(permissions.settlement_submit(settlement=settlement, user=actor))
    settlement.status = settlement_next_status(settlement.status, "submit", label=str(settlement))
    if not settlement.is_adjustment:
        case.status = case_next_status(case.status, "submit", label=str(case))
    settlement.submitted_by = actor
    settlement.submitted_at = timezone.now()
    save_with_history(
        settlement,
        actor=actor,
        reason="Submitted for approval",
        fields=("status", "submitted_by", "submitted_at"),
    )
    if not settlement.is_adjustment:
        save_with_history(case, actor=actor, reason=f"{settlement} submitted", fields=CASE_MOVED)
    record_event(Event.Type.SETTLEMENT_SUBMITTED, actor=actor, case=case, subject=settlement)
    return settlement


@transaction.atomic
def settlement_approve(*, settlement: Settlement, actor, reason: str = "") -> Settlement:
    """Make a submitted settlement (or adjustment) final. Never the preparer's own."""
    case, settlement = lock_settlement(settlement)
    permissions.enforce(permissions.settlement_approve(settlement=settlement, user=actor))
    permissions.enforce(permissions.step_up(user=actor, action="approve settlements"))
    new_status = settlement_next_status(settlement.status, "approve", label=str(settlement))
    if settlement.is_adjustment:
        _check_adjustment_nets(settlement.corrects, list(settlement.lines.all()))
    else:
        case.status = case_next_status(case.status, "approve", label=str(case))
    settlement.status = new_status
    settlement.approved_by = actor
    settlement.reviewed_at = timezone.now()
    settlement.review_reason = reason.strip()
    save_with_history(
        settlement,
        actor=actor,
        reason=reason.strip() or "Approved",
        fields=("status", "approved_by", "reviewed_at", "review_reason"),
    )
    if not settlement.is_adjustment:
        save_with_history(case, actor=actor, reason=f"{settlement} approved", fields=CASE_MOVED)
    release_lines(
        actor=actor,
        case=case,
        currency=settlement.currency,
        line_count=settlement.line_count,
        totals=unit_totals(settlement.totals),
        settlement=settlement,
    )
    record_event(
        Event.Type.SETTLEMENT_APPROVED,
        actor=actor,
        case=case,
        subject=settlement,
        reason=settlement.review_reason,
        data={"totals": settlement.totals, "lines": settlement.line_count},
    )
    return settlement


@transaction.atomic
def settlement_reject(*, settlement: Settlement, actor, reason: str) -> Settlement:
    """Send a submitted settlement back; the case can then be decided or prepared again."""
    case, settlement = lock_settlement(settlement)
    permissions.enforce(permissions.settlement_reject(settlement=settlement, user=actor))
    new_status = settlement_next_status(settlement.status, "reject", label=str(settlement))
    reason = required_text(reason, "reason")
    if not settlement.is_adjustment:
        case.status = case_next_status(case.status, "reject", label=str(case))
    settlement.status = new_status
    settlement.rejected_by = actor
    settlement.reviewed_at = timezone.now()
    settlement.review_reason = reason
    save_with_history(settlement, actor=actor, reason=reason)
    if not settlement.is_adjustment:
        save_with_history(case, actor=actor, reason=f"{settlement} rejected: {reason}")
    record_event(
        Event.Type.SETTLEMENT_REJECTED, actor=actor, case=case, subject=settlement, reason=reason
    )
    return settlement


@transaction.atomic
def settlement_adjust(
    *, settlement: Settlement, actor, reason: str, entries: Sequence[AdjustmentEntry]
) -> Settlement:
    """Correct an approved settlement by a new linked adjustment (prepared, to be approved).

    The approved settlement is never edited. A negative entry takes back part of what the
    settlement (with its approved adjustments) paid under the same player, kind, unit and
    source; it can never take back more than was paid.
    """
    case, original = lock_settlement(settlement)
    permissions.enforce(permissions.settlement_adjust(settlement=original, user=actor))
    if original.is_adjustment:
        original = original.corrects
    reason = required_text(reason, "reason")
    if not entries:
        raise DomainError("List at least one correction.", field="entries")
    players = {entry.player for entry in entries}
    known = entrants_among(case, players)
    for number, entry in enumerate(entries, start=1):
        _check_adjustment_entry(entry, number, known)
    lines = [
        SettlementLine(
            line_no=line_no,
            player=entry.player,
            kind=entry.kind,
            unit=entry.unit,
            amount=abs(entry.amount),
            source=entry.source,
            reversal=entry.amount < 0,
        )
        for line_no, entry in enumerate(entries, start=1)
    ]
    _check_adjustment_nets(original, lines)

    adjustment = Settlement(
        case=case,
        kind=Settlement.Kind.ADJUSTMENT,
        corrects=original,
        status=SettlementStatus.PREPARED,
        currency=original.currency,
        stage=original.stage,
        remedy=original.remedy,
        decision=original.decision,
        policy=original.policy,
        engine_version=original.engine_version,
        entrants=original.entrants,
        eliminated=original.eliminated,
        remaining=original.remaining,
        pool=original.pool,
        pool_distributed=None,
        totals=line_totals((ln.unit, ln.source, ln.signed_amount) for ln in lines),
        line_count=len(lines),
        payout_count=len(players),
        ledger_digest=audit_log.ledger_digest(
            (ln.line_no, ln.player, ln.kind, ln.unit, ln.amount, ln.source, ln.reversal)
            for ln in lines
        ),
        note=reason,
        loaded_by_id=case.created_by_id,
        prepared_by=actor,
    )
    save_with_history(adjustment, actor=actor, reason=reason)
    for line in lines:
        line.settlement = adjustment
    SettlementLine.objects.bulk_create(lines, batch_size=BULK_BATCH)
    record_event(
        Event.Type.ADJUSTMENT_PREPARED,
        actor=actor,
        case=case,
        subject=adjustment,
        reason=reason,
        data={"corrects": original.pk, "lines": len(lines), "totals": adjustment.totals},
    )
    return adjustment


SETTLEMENT_PAYOUT_FIELDS = (
    "settlement",
    "position",
    "player",
    "chips",
    "cash",
    "tdollars",
    "tickets",
    "fpp",
    "guaranteed",
    "share",
    "exact",
    "capped",
    "rounding_cent",
    "weight",
    "place_first",
    "place_last",
)


def payout_rows(settlement_id: int, result) -> Iterator[tuple]:
    """The rows of SETTLEMENT_PAYOUT_FIELDS of an engine result (rules.Settlement), made as
    they are read. 300,000 of them are written while the caller waits, so each is put together
    from columns at C speed, and the stored form of each explanation (its texts) is worked out
    once for every player who shares it."""
    payouts, explained = result.payouts, result.payout_terms()
    stored = {terms: _stored_terms(terms) for terms in set(explained) if terms is not None}
    stored[None] = UNEXPLAINED
    return map(
        add,
        zip(
            repeat(settlement_id),
            count(),
            [row.player for row in payouts],
            result.payout_chips(),
            [row.cash for row in payouts],
            [row.tdollars for row in payouts],
            [row.tickets for row in payouts],
            [row.fpp for row in payouts],
        ),
        map(stored.__getitem__, explained),
    )


# The explanation columns of a payout the engine explains nothing about (a refund).
UNEXPLAINED = (None, "", "", None, None, "", None, None)


def _stored_terms(terms: ExplanationTerms) -> tuple:
    """guaranteed .. place_last of SETTLEMENT_PAYOUT_FIELDS for one explanation."""
    denominator, weight, places = terms.denominator, terms.weight, terms.places
    return (
        terms.guaranteed,
        _fraction_text(terms.share, denominator),
        _fraction_text(terms.exact, denominator),
        terms.capped,
        terms.rounding_cent,
        _fraction_text(*weight) if weight else "",
        places[0] if places else None,
        places[1] if places else None,
    )


def _fraction_text(numerator: int, denominator: int) -> str:
    """A reduced fraction as str(Fraction) writes it: "n/d", or "n" for a whole number."""
    return f"{numerator}/{denominator}" if denominator != 1 else str(numerator)


def _check_storable(result) -> None:
    """Refuse, before anything is written, a settlement with an amount beyond a bigint; one
    maximum per column rather than a check per value."""
    columns = [map(attrgetter(unit), result.payouts) for unit in UNIT_ORDER]
    columns.append(map(attrgetter("amount"), result.lines))
    largest = max(max(column, default=0) for column in columns)
    if largest > MAX_AMOUNT:
        raise DomainError(f"An amount of this settlement ({largest}) is too large to store.")


def line_totals(lines: Iterable[tuple[str, str, int]]) -> dict[str, dict[str, int]]:
    """{unit: {source: amount}} over (unit, source, amount) triples."""
    sums: dict[tuple[str, str], int] = defaultdict(int)
    for unit, source, amount in lines:
        sums[unit, source] += amount
    totals: dict[str, dict[str, int]] = {}
    for (unit, source), amount in sums.items():
        totals.setdefault(unit, {})[source] = amount
    return totals


def _check_adjustment_entry(entry: AdjustmentEntry, number: int, known: set[str]) -> None:
    where = f"Correction {number}"
    if entry.player not in known:
        raise DomainError(f"{where}: {entry.player!r} is not an entrant.", field="entries")
    shape = LINE_SHAPES.get(entry.kind)
    if shape is None:
        raise DomainError(f"{where}: unknown kind {entry.kind!r}.", field="entries")
    units, source = shape
    if entry.unit not in units or entry.source != source:
        raise DomainError(
            f"{where}: a {entry.kind} line is paid in {' or '.join(sorted(units))} "
            f"from the {source}.",
            field="entries",
        )
    if isinstance(entry.amount, bool) or not isinstance(entry.amount, int) or entry.amount == 0:
        raise DomainError(f"{where}: give a whole non-zero amount.", field="entries")
    if abs(entry.amount) > MAX_AMOUNT:
        raise DomainError(f"{where}: the amount is too large.", field="entries")


def _check_adjustment_nets(original: Settlement, lines: Sequence[SettlementLine]) -> None:
    """Refuse corrections that would take back more than was paid under any line key."""
    keys = {(ln.player, ln.kind, ln.unit, ln.source) for ln in lines}
    players = {key[0] for key in keys}
    paid: dict[tuple, int] = defaultdict(int)
    earlier = SettlementLine.objects.filter(
        Q(settlement=original)
        | Q(settlement__corrects=original, settlement__status=SettlementStatus.APPROVED),
        player__in=players,
    ).values_list("player", "kind", "unit", "source", "reversal", "amount")
    for player, kind, unit, source, reversal, amount in earlier:
        paid[(player, kind, unit, source)] += -amount if reversal else amount
    for line in lines:
        paid[(line.player, line.kind, line.unit, line.source)] += line.signed_amount
    for (player, kind, unit, _source), net in sorted(paid.items()):
        if net < 0:
            raise DomainError(
                f"This would take back more {unit} from {player} ({kind}) than was paid.",
                field="entries",
            )
