"""Every write of the workflow: one function per business event.

Each service is atomic, takes keyword-only arguments, checks the actor's role, locks the rows
it moves (always the case before its settlement, so two services never wait on each other in
opposite order), checks the state machine (``settlements.workflow``), records the history user
and reason on every versioned row it saves, and writes one ``Event`` row in the same
transaction; the structured log line follows once the transaction commits.

Services return fresh objects: an instance passed in may be stale after the call.
Refusals raise ``DomainError`` subclasses (see ``settlements.errors``); an invalid snapshot
raises the engine's ``InvalidInput`` with every problem and its path.
"""

import logging
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from operator import attrgetter

from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from settlements import changes, roles
from settlements.errors import DomainError, Duplicate, InvalidTransition, NotAllowed
from settlements.models import (
    ID_MAX_LENGTH,
    ApiToken,
    Case,
    CasePlayer,
    Compensation,
    CompensationItem,
    Decision,
    Event,
    Incident,
    LineKind,
    PrizeWithdrawal,
    Settlement,
    SettlementLine,
    SettlementPayout,
    Snapshot,
    Source,
    Stage,
    Tournament,
    TournamentType,
    Unit,
)
from settlements.rules import (
    ENGINE_VERSION,
    ExplanationTerms,
    InvalidInput,
    Policy,
    Problem,
    assess,
    parse_snapshot,
    settle,
)
from settlements.selectors import crash_case_in_force
from settlements.site_policy import site_policy
from settlements.workflow import (
    CASE_FINAL,
    CaseStatus,
    CompensationStatus,
    SettlementStatus,
    case_next_status,
    compensation_next_status,
    settlement_next_status,
)

log = logging.getLogger("crashdesk.events")

# PostgreSQL bigint; larger numbers are refused with a message rather than a database error.
MAX_AMOUNT = 2**63 - 1
# Rows per round trip when the database cannot stream rows with COPY.
BULK_BATCH = 5000
# How precisely an API token's last use is kept (each finer update would be a row write).
TOKEN_USE_RESOLUTION = timedelta(minutes=1)

# Which unit and source each kind of line may have (SNAPSHOT.md, "lines").
LINE_SHAPES: dict[str, tuple[frozenset[str], str]] = {
    LineKind.REFUND_BUY_IN: (frozenset({Unit.CASH}), Source.POOL),
    LineKind.REFUND_FEE: (frozenset({Unit.CASH}), Source.HOUSE),
    LineKind.REFUND_FPP: (frozenset({Unit.FPP}), Source.HOUSE),
    LineKind.PRIZE: (frozenset({Unit.CASH, Unit.TDOLLARS}), Source.POOL),
    LineKind.TICKET: (frozenset({Unit.TICKETS}), Source.POOL),
}

_CURRENCY = re.compile(r"[A-Z]{3}")


@dataclass(frozen=True)
class AdjustmentEntry:
    """One correction of an approved settlement: a positive amount pays more, a negative one
    takes back part of what was paid under the same player, kind, unit and source."""

    player: str
    kind: str
    unit: str
    amount: int
    source: str


@dataclass(frozen=True)
class CompensationEntry:
    player: str
    amount: int
    unit: str = Unit.CASH


# --- Incidents and tournaments ----------------------------------------------------------------


@transaction.atomic
def incident_report(*, actor, title: str, started_at: datetime, description: str = "") -> Incident:
    roles.require_role(actor, roles.OPERATOR, action="report incidents")
    title = _required_text(title, "title", max_length=200)
    incident = Incident(
        title=title,
        started_at=_aware(started_at, "started_at"),
        description=description.strip(),
        reported_by=actor,
    )
    _save(incident, actor=actor, reason="Incident reported")
    _record(
        Event.Type.INCIDENT_REPORTED,
        actor=actor,
        incident=incident,
        subject=incident,
        data={"title": incident.title, "started_at": incident.started_at.isoformat()},
    )
    return incident


@transaction.atomic
def incident_close(*, incident: Incident, actor, reason: str = "") -> Incident:
    roles.require_role(actor, roles.OPERATOR, roles.TOURNAMENT_MANAGER, action="close incidents")
    incident = Incident.objects.select_for_update().get(pk=incident.pk)
    if not incident.is_open:
        raise InvalidTransition(f"{incident} is already closed.")
    unfinished = list(
        incident.cases.exclude(status__in=CASE_FINAL).values_list("pk", flat=True)[:10]
    )
    if unfinished:
        listed = ", ".join(f"#{pk}" for pk in unfinished)
        raise InvalidTransition(
            f"{incident} still has cases in progress ({listed}); finish them before closing it."
        )
    incident.closed_at = timezone.now()
    incident.closed_by = actor
    _save(incident, actor=actor, reason=reason.strip() or "Incident closed")
    _record(
        Event.Type.INCIDENT_CLOSED, actor=actor, incident=incident, subject=incident, reason=reason
    )
    return incident


@transaction.atomic
def tournament_create(
    *,
    actor,
    operator_id: str,
    type: str,
    currency: str,
    name: str = "",
    buy_in: int | None = None,
    fee: int | None = None,
    guarantee: int | None = None,
    fpp_buy_in: int | None = None,
    prize_pool: int | None = None,
    payouts: Sequence[int] = (),
    seat_value: int | None = None,
    scheduled_start: datetime | None = None,
) -> Tournament:
    """Register a tournament by hand (a snapshot load registers its tournament by itself)."""
    roles.require_role(
        actor, roles.OPERATOR, roles.TOURNAMENT_MANAGER, action="register tournaments"
    )
    operator_id = _required_text(operator_id, "operator_id", max_length=ID_MAX_LENGTH)
    if type not in TournamentType.values:
        raise DomainError("Choose regular, freeroll or satellite.", field="type")
    if not isinstance(currency, str) or not _CURRENCY.fullmatch(currency):
        raise DomainError("Give the currency as three capital letters, e.g. USD.", field="currency")
    amounts = {
        "buy_in": buy_in,
        "fee": fee,
        "guarantee": guarantee,
        "fpp_buy_in": fpp_buy_in,
        "prize_pool": prize_pool,
        "seat_value": seat_value,
    }
    for field, value in amounts.items():
        if value is not None:
            _check_amount(value, field)
    payouts = list(payouts)
    for place, value in enumerate(payouts, start=1):
        _check_amount(value, "payouts", positive=True, what=f"The prize of place {place}")
    existing = Tournament.objects.filter(operator_id=operator_id).first()
    if existing is not None:
        raise Duplicate(
            f"Tournament {operator_id} is already registered.",
            existing=existing,
            field="operator_id",
        )
    tournament = Tournament(
        operator_id=operator_id,
        name=name.strip()[:ID_MAX_LENGTH],
        type=type,
        currency=currency,
        payouts=payouts,
        scheduled_start=_aware(scheduled_start, "scheduled_start") if scheduled_start else None,
        **amounts,
    )
    try:
        with transaction.atomic():
            _save(tournament, actor=actor, reason="Tournament registered")
    except IntegrityError:
        raise Duplicate(
            f"Tournament {operator_id} is already registered.", field="operator_id"
        ) from None
    _record(
        Event.Type.TOURNAMENT_CREATED,
        actor=actor,
        tournament=tournament,
        subject=tournament,
        data={"operator_id": operator_id, "type": type},
    )
    return tournament


# --- Crash cases -----------------------------------------------------------------------------


@transaction.atomic
def case_load_snapshot(
    *,
    actor,
    snapshot: bytes | str,
    incident: Incident | None = None,
    tournament: Tournament | None = None,
    policy: Policy | None = None,
) -> Case:
    """Open a crash case from a snapshot, registering or updating its tournament.

    Without ``incident`` a new incident is reported for this crash. ``tournament``, when
    given, is the tournament the user picked: the snapshot must be about it. The case is
    assessed with ``policy``, by default the site's (settings.CRASH_POLICY), and keeps it. An
    invalid snapshot raises ``InvalidInput`` and nothing at all is stored.
    """
    roles.require_role(actor, roles.OPERATOR, action="load snapshots")
    policy = policy or site_policy()
    parsed = parse_snapshot(snapshot)
    problems = _storage_problems(parsed)
    if problems:
        raise InvalidInput(problems)
    text = snapshot if isinstance(snapshot, str) else snapshot.decode("utf-8")
    assessment = assess(parsed, policy)
    if assessment.pool > MAX_AMOUNT:
        raise InvalidInput([Problem("tournament", "the prize pool is too large to store")])
    info = parsed.tournament

    if tournament is not None and tournament.operator_id != info.id:
        raise DomainError(
            f"This snapshot is about tournament {info.id}, not {tournament.operator_id}.",
            field="snapshot",
        )
    if incident is not None:
        incident = Incident.objects.select_for_update().get(pk=incident.pk)
        if not incident.is_open:
            raise InvalidTransition(f"{incident} is closed; report a new incident instead.")

    tournament = _tournament_for_snapshot(info, actor=actor)
    existing = crash_case_in_force(tournament)
    if existing is not None:
        raise Duplicate(
            f"Tournament {info.id} already has a crash case (#{existing.pk}, "
            f"{existing.get_status_display().lower()}); its snapshot was loaded before. "
            "If that case was loaded in error, withdraw it first.",
            existing=existing,
        )
    crashed_at = _parse_time(parsed.crashed_at)
    if incident is None:
        incident = incident_report(
            actor=actor,
            title=f"Crash of {info.name or info.id}"[:200],
            started_at=crashed_at or timezone.now(),
        )

    stored = Snapshot(
        text=text,
        sha256=Snapshot.digest(text),
        size_bytes=len(text.encode()),
        received_by=actor,
    )
    stored.save()
    case = Case(
        kind=Case.Kind.CRASH,
        incident=incident,
        tournament=tournament,
        status=(CaseStatus.AWAITING_DECISION if assessment.decision_options else CaseStatus.READY),
        snapshot=stored,
        crashed_at=crashed_at,
        started=getattr(info, "started", True),
        stage=assessment.stage,
        entrants=assessment.entrants,
        eliminated=assessment.eliminated,
        remaining=assessment.remaining,
        paid_places=assessment.paid_places,
        pool=assessment.pool,
        policy=policy.to_dict(),
        decision_options=list(assessment.decision_options),
        engine_version=ENGINE_VERSION,
        created_by=actor,
    )
    try:
        with transaction.atomic():
            _save(case, actor=actor, reason=f"Snapshot loaded ({stored.sha256[:12]})")
    except IntegrityError:
        # Another load of the same tournament committed between our check and our insert; it
        # is visible now (the savepoint is gone), so the answer can point at it.
        existing = crash_case_in_force(tournament)
        raise Duplicate(
            f"Tournament {info.id} already has a crash case"
            + (f" (#{existing.pk})." if existing is not None else "."),
            existing=existing,
        ) from None
    _insert_rows(
        CasePlayer,
        ("case", "position", "player", "chips"),
        ((case.pk, position, p.id, p.chips) for position, p in enumerate(parsed.players)),
    )
    _record(
        Event.Type.SNAPSHOT_LOADED,
        actor=actor,
        case=case,
        subject=case,
        data={
            "sha256": stored.sha256,
            "size_bytes": stored.size_bytes,
            "stage": case.stage,
            "entrants": case.entrants,
            "eliminated": case.eliminated,
            "remaining": case.remaining,
            "paid_places": case.paid_places,
            "pool": case.pool,
            "decision_options": case.decision_options,
            "policy": case.policy,
        },
    )
    return case


@transaction.atomic
def decision_record(
    *,
    case: Case,
    actor,
    option: str,
    reason: str,
    reschedule_at: datetime | None = None,
    invited_players: Sequence[str] | None = None,
) -> Decision:
    """The Marketing Manager's choice among the options the rules offer for this case.

    A reschedule needs the new date; its invitations default to every entrant (early stage)
    or the remaining players (middle stage); a list given instead must name entrants.
    """
    roles.require_role(actor, roles.MARKETING_MANAGER, action="record decisions")
    case = _lock_case(case)
    if not case.is_crash or not case.decision_options:
        raise InvalidTransition(f"{case} needs no decision: the rules settle it without one.")
    next_status = case_next_status(case.status, "decide", label=str(case))
    if option not in case.decision_options:
        offered = " or ".join(case.decision_options)
        raise DomainError(f"Choose {offered}.", field="option")
    reason = _required_text(reason, "reason")

    scope = ""
    custom: list[str] = []
    if option == "reschedule":
        if reschedule_at is None:
            raise DomainError("A reschedule needs the new date.", field="reschedule_at")
        reschedule_at = _aware(reschedule_at, "reschedule_at")
        if reschedule_at <= timezone.now():
            raise DomainError("The new date must be in the future.", field="reschedule_at")
        if invited_players is None:
            scope = (
                Decision.InviteScope.ENTRANTS
                if case.stage == Stage.EARLY
                else Decision.InviteScope.REMAINING
            )
        else:
            scope = Decision.InviteScope.CUSTOM
            custom = _checked_invitees(case, invited_players)
    elif reschedule_at is not None or invited_players is not None:
        raise DomainError("Only a reschedule takes a new date and invitations.", field="option")

    decision = Decision(
        case=case,
        role=roles.MARKETING_MANAGER,
        option=option,
        reason=reason,
        decided_by=actor,
        reschedule_at=reschedule_at,
        invite_scope=scope,
        invited_players=custom,
    )
    _save(decision, actor=actor, reason=reason)
    case.decision = option
    case.status = next_status
    _save(case, actor=actor, reason=f"Decision: {option}")
    _record(
        Event.Type.DECISION_RECORDED,
        actor=actor,
        case=case,
        subject=decision,
        reason=reason,
        data={
            "option": option,
            "reschedule_at": reschedule_at.isoformat() if reschedule_at else None,
            "invite_scope": scope,
            "invited": len(custom) if custom else None,
        },
    )
    return decision


@transaction.atomic
def case_withdraw(*, case: Case, actor, reason: str) -> Case:
    """Withdraw a crash case loaded in error (the wrong snapshot, the wrong tournament).

    The snapshot and everything recorded on the case stay on record. A settlement of it not yet
    approved (prepared, or waiting for approval) is withdrawn with it. The tournament may then
    be loaded again. A case with an approved settlement stays: an adjustment corrects it.
    """
    roles.require_role(actor, roles.OPERATOR, roles.TOURNAMENT_MANAGER, action="withdraw cases")
    case = _lock_case(case)
    if not case.is_crash:
        raise InvalidTransition(f"{case} is an individual case; it ends when it is resolved.")
    if case.status == CaseStatus.APPROVED:
        raise InvalidTransition(
            f"{case} has an approved settlement, so it cannot be withdrawn; "
            "correct that settlement with an adjustment instead."
        )
    next_status = case_next_status(case.status, "withdraw", label=str(case))
    reason = _required_text(reason, "reason")
    waiting = list(
        case.compensations.filter(status=CompensationStatus.PROPOSED).values_list("pk", flat=True)
    )
    if waiting:
        listed = ", ".join(f"#{pk}" for pk in waiting)
        raise InvalidTransition(
            f"Compensation {listed} of {case} still waits for a Tournament Manager's answer; "
            "have it approved or rejected before withdrawing the case."
        )

    in_flight = list(
        Settlement.objects.select_for_update(of=("self",))
        .filter(case=case, kind=Settlement.Kind.SETTLEMENT)
        .exclude(status__in=[SettlementStatus.REJECTED, SettlementStatus.WITHDRAWN])
        .order_by("pk")
    )
    for settlement in in_flight:
        settlement.status = settlement_next_status(
            settlement.status, "withdraw", label=str(settlement)
        )
        _save(settlement, actor=actor, reason=f"Withdrawn with case #{case.pk}: {reason}")
    previous = case.status
    case.status = next_status
    case.withdrawn_by = actor
    case.withdrawn_at = timezone.now()
    case.withdrawal_reason = reason
    _save(case, actor=actor, reason=reason)
    _record(
        Event.Type.CASE_WITHDRAWN,
        actor=actor,
        case=case,
        subject=case,
        reason=reason,
        data={
            "status": previous,
            "settlements_withdrawn": [settlement.pk for settlement in in_flight],
            "sha256": case.snapshot.sha256,
        },
    )
    return case


# --- Settlements -----------------------------------------------------------------------------


@transaction.atomic
def settlement_prepare(*, case: Case, actor, note: str = "") -> Settlement:
    """Run the engine on the case's snapshot, decision and policy; store its result."""
    roles.require_role(actor, roles.OPERATOR, action="prepare settlements")
    case = _lock_case(case)
    if not case.is_crash:
        raise InvalidTransition(f"{case} is an individual case; it has no crash settlement.")
    next_status = case_next_status(case.status, "prepare", label=str(case))
    parsed = parse_snapshot(case.snapshot.text)
    try:
        result = settle(parsed, decision=case.decision or None, policy=Policy(**case.policy))
    except InvalidInput as exc:
        problems = "; ".join(str(problem) for problem in exc.problems)
        raise DomainError(f"The rules cannot settle {case}: {problems}") from exc

    _check_storable(result)
    settlement = Settlement(
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
        totals=_line_totals(map(attrgetter("unit", "source", "amount"), result.lines)),
        line_count=len(result.lines),
        payout_count=len(result.payouts),
        note=note.strip(),
        prepared_by=actor,
    )
    try:
        with transaction.atomic():
            _save(settlement, actor=actor, reason=note.strip() or "Settlement prepared")
    except IntegrityError:
        raise InvalidTransition(f"{case} already has a settlement in progress.") from None

    chips = {player.id: player.chips for player in parsed.players}
    explained = {terms.player: terms for terms in result.explanations.terms()}
    settlement_id = settlement.pk
    _insert_rows(
        SettlementPayout,
        SETTLEMENT_PAYOUT_FIELDS,
        _payout_rows(settlement_id, result.payouts, chips, explained),
    )
    _insert_rows(
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
        ),  # fmt: skip
    )
    case.status = next_status
    _save(case, actor=actor, reason=f"{settlement} prepared")
    _record(
        Event.Type.SETTLEMENT_PREPARED,
        actor=actor,
        case=case,
        subject=settlement,
        reason=settlement.note,
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


@transaction.atomic
def settlement_submit(*, settlement: Settlement, actor) -> Settlement:
    """Send a prepared settlement (or adjustment) to the Tournament Managers for approval."""
    roles.require_role(actor, roles.OPERATOR, roles.TOURNAMENT_MANAGER, action="submit settlements")
    case, settlement = _lock_settlement(settlement)
    if not settlement.is_adjustment:
        roles.require_role(actor, roles.OPERATOR, action="submit settlements")
    settlement.status = settlement_next_status(settlement.status, "submit", label=str(settlement))
    if not settlement.is_adjustment:
        case.status = case_next_status(case.status, "submit", label=str(case))
    settlement.submitted_by = actor
    settlement.submitted_at = timezone.now()
    _save(settlement, actor=actor, reason="Submitted for approval")
    if not settlement.is_adjustment:
        _save(case, actor=actor, reason=f"{settlement} submitted")
    _record(Event.Type.SETTLEMENT_SUBMITTED, actor=actor, case=case, subject=settlement)
    return settlement


@transaction.atomic
def settlement_approve(*, settlement: Settlement, actor, reason: str = "") -> Settlement:
    """Make a submitted settlement (or adjustment) final. Never the preparer's own."""
    roles.require_role(actor, roles.TOURNAMENT_MANAGER, action="approve settlements")
    case, settlement = _lock_settlement(settlement)
    new_status = settlement_next_status(settlement.status, "approve", label=str(settlement))
    _refuse_own_work(settlement, actor, "approve")
    if settlement.is_adjustment:
        _check_adjustment_nets(settlement.corrects, list(settlement.lines.all()))
    else:
        case.status = case_next_status(case.status, "approve", label=str(case))
    settlement.status = new_status
    settlement.approved_by = actor
    settlement.reviewed_at = timezone.now()
    settlement.review_reason = reason.strip()
    _save(settlement, actor=actor, reason=reason.strip() or "Approved")
    if not settlement.is_adjustment:
        _save(case, actor=actor, reason=f"{settlement} approved")
    _record(
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
    roles.require_role(actor, roles.TOURNAMENT_MANAGER, action="reject settlements")
    case, settlement = _lock_settlement(settlement)
    new_status = settlement_next_status(settlement.status, "reject", label=str(settlement))
    _refuse_own_work(settlement, actor, "reject")
    reason = _required_text(reason, "reason")
    if not settlement.is_adjustment:
        case.status = case_next_status(case.status, "reject", label=str(case))
    settlement.status = new_status
    settlement.rejected_by = actor
    settlement.reviewed_at = timezone.now()
    settlement.review_reason = reason
    _save(settlement, actor=actor, reason=reason)
    if not settlement.is_adjustment:
        _save(case, actor=actor, reason=f"{settlement} rejected: {reason}")
    _record(
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
    roles.require_role(
        actor, roles.OPERATOR, roles.TOURNAMENT_MANAGER, action="prepare adjustments"
    )
    case, original = _lock_settlement(settlement)
    if original.is_adjustment:
        original = original.corrects
    if original.status != SettlementStatus.APPROVED:
        raise InvalidTransition(
            f"Only an approved settlement can be adjusted; {original} is "
            f"{original.get_status_display().lower()}."
        )
    reason = _required_text(reason, "reason")
    if not entries:
        raise DomainError("List at least one correction.", field="entries")
    players = {entry.player for entry in entries}
    known = _entrants_among(case, players)
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
        totals=_line_totals((ln.unit, ln.source, ln.signed_amount) for ln in lines),
        line_count=len(lines),
        payout_count=len(players),
        note=reason,
        prepared_by=actor,
    )
    _save(adjustment, actor=actor, reason=reason)
    for line in lines:
        line.settlement = adjustment
    SettlementLine.objects.bulk_create(lines, batch_size=BULK_BATCH)
    _record(
        Event.Type.ADJUSTMENT_PREPARED,
        actor=actor,
        case=case,
        subject=adjustment,
        reason=reason,
        data={"corrects": original.pk, "lines": len(lines), "totals": adjustment.totals},
    )
    return adjustment


# --- Compensation, prize withdrawals, individual cases ---------------------------------------


@transaction.atomic
def compensation_propose(
    *, case: Case, actor, reason: str, entries: Sequence[CompensationEntry]
) -> Compensation:
    """Propose that the house pays named players for an injustice; a Tournament Manager
    other than the proposer decides."""
    roles.require_role(
        actor, roles.OPERATOR, roles.TOURNAMENT_MANAGER, action="propose compensation"
    )
    case = _lock_case(case)
    _refuse_withdrawn(case, "propose compensation for")
    if case.is_crash and not case.settlements.exists():
        raise InvalidTransition(
            f"Compensation for {case} can be proposed once its settlement has been prepared."
        )
    if not case.is_crash and case.status != CaseStatus.OPEN:
        raise InvalidTransition(f"{case} is resolved; open a new case for further compensation.")
    reason = _required_text(reason, "reason")
    if not entries:
        raise DomainError("Name at least one player and amount.", field="entries")
    allowed_units = {Unit.CASH, Unit.TDOLLARS, Unit.FPP}
    seen: set[tuple[str, str]] = set()
    for number, entry in enumerate(entries, start=1):
        where = f"Line {number}"
        _check_player_id(entry.player, where)
        if entry.unit not in allowed_units:
            raise DomainError(f"{where}: pay compensation in cash, T$ or FPP.", field="entries")
        _check_amount(entry.amount, "entries", positive=True, what=f"{where}: the amount")
        if (entry.player, entry.unit) in seen:
            raise DomainError(
                f"{where}: {entry.player} is listed twice in {entry.unit}.", field="entries"
            )
        seen.add((entry.player, entry.unit))
    players = {entry.player for entry in entries}
    if case.is_crash:
        outsiders = players - _entrants_among(case, players)
    else:
        outsiders = players - set(case.players)
    if outsiders:
        raise DomainError(
            f"Not a player of {case}: {', '.join(sorted(outsiders)[:5])}.", field="entries"
        )

    totals: dict[str, int] = defaultdict(int)
    for entry in entries:
        totals[entry.unit] += entry.amount
    compensation = Compensation(
        case=case,
        status=CompensationStatus.PROPOSED,
        currency=case.tournament.currency,
        reason=reason,
        proposed_by=actor,
        totals=dict(totals),
    )
    _save(compensation, actor=actor, reason=reason)
    CompensationItem.objects.bulk_create(
        [
            CompensationItem(
                compensation=compensation,
                line_no=line_no,
                player=entry.player,
                unit=entry.unit,
                amount=entry.amount,
            )
            for line_no, entry in enumerate(entries, start=1)
        ],
        batch_size=BULK_BATCH,
    )
    _record(
        Event.Type.COMPENSATION_PROPOSED,
        actor=actor,
        case=case,
        subject=compensation,
        reason=reason,
        data={"players": len(players), "totals": compensation.totals},
    )
    return compensation


@transaction.atomic
def compensation_approve(*, compensation: Compensation, actor, reason: str = "") -> Compensation:
    return _compensation_review(compensation, actor, "approve", reason)


@transaction.atomic
def compensation_reject(*, compensation: Compensation, actor, reason: str) -> Compensation:
    return _compensation_review(compensation, actor, "reject", _required_text(reason, "reason"))


@transaction.atomic
def prize_withdrawal_decide(
    *,
    case: Case,
    actor,
    player: str,
    prize: str,
    outcome: str,
    reason: str,
    amount: int | None = None,
    unit: str = "",
) -> PrizeWithdrawal:
    """A Tournament Manager's call on a prize given in error: withdraw it, or leave it."""
    roles.require_role(actor, roles.TOURNAMENT_MANAGER, action="decide on prizes given in error")
    case = _lock_case(case)
    _refuse_withdrawn(case, "record a prize given in error on")
    _check_player_id(player, "The player")
    prize = _required_text(prize, "prize", max_length=200)
    if outcome not in PrizeWithdrawal.Outcome.values:
        raise DomainError("Choose to withdraw the prize or to leave it.", field="outcome")
    reason = _required_text(reason, "reason")
    if amount is not None:
        _check_amount(amount, "amount")
        if unit not in Unit.values:
            raise DomainError("Give the unit of the amount.", field="unit")
    elif unit:
        raise DomainError("Give the amount in that unit, or no unit.", field="amount")
    withdrawal = PrizeWithdrawal(
        case=case,
        player=player,
        prize=prize,
        unit=unit,
        amount=amount,
        outcome=outcome,
        reason=reason,
        decided_by=actor,
    )
    _save(withdrawal, actor=actor, reason=reason)
    _record(
        Event.Type.PRIZE_WITHDRAWAL_DECIDED,
        actor=actor,
        case=case,
        subject=withdrawal,
        reason=reason,
        data={"player": player, "prize": prize, "outcome": outcome, "amount": amount, "unit": unit},
    )
    return withdrawal


@transaction.atomic
def individual_case_open(
    *,
    tournament: Tournament,
    actor,
    players: Sequence[str],
    description: str,
    incident: Incident | None = None,
) -> Case:
    """Open a case for one or a few players hit while the tournament went on for the rest."""
    roles.require_role(actor, roles.TOURNAMENT_MANAGER, action="open individual cases")
    description = _required_text(description, "description")
    players = list(players)
    if not players:
        raise DomainError("Name the player or players concerned.", field="players")
    for player in players:
        _check_player_id(player, "A player")
    if len(set(players)) != len(players):
        raise DomainError("A player is named twice.", field="players")
    if incident is not None:
        incident = Incident.objects.select_for_update().get(pk=incident.pk)
        if not incident.is_open:
            raise InvalidTransition(f"{incident} is closed.")
    case = Case(
        kind=Case.Kind.INDIVIDUAL,
        incident=incident,
        tournament=tournament,
        status=CaseStatus.OPEN,
        players=players,
        description=description,
        created_by=actor,
    )
    _save(case, actor=actor, reason="Individual case opened")
    _record(
        Event.Type.INDIVIDUAL_CASE_OPENED,
        actor=actor,
        case=case,
        subject=case,
        reason=description,
        data={"players": players},
    )
    return case


@transaction.atomic
def individual_case_resolve(*, case: Case, actor, outcome: str) -> Case:
    roles.require_role(actor, roles.TOURNAMENT_MANAGER, action="resolve individual cases")
    case = _lock_case(case)
    if case.is_crash:
        raise InvalidTransition(f"{case} is a crash case; it ends with its settlement.")
    case.status = case_next_status(case.status, "resolve", label=str(case))
    case.outcome = _required_text(outcome, "outcome")
    case.resolved_by = actor
    case.resolved_at = timezone.now()
    _save(case, actor=actor, reason=case.outcome)
    _record(
        Event.Type.INDIVIDUAL_CASE_RESOLVED,
        actor=actor,
        case=case,
        subject=case,
        reason=case.outcome,
    )
    return case


# --- API tokens ------------------------------------------------------------------------------


@transaction.atomic
def api_token_create(*, user, name: str, actor=None) -> tuple[ApiToken, str]:
    """Issue a token for ``user``; returns the record and the raw token (shown once only).

    ``actor`` is None when an administrator runs the management command on the server.
    """
    _check_token_actor(actor, user)
    name = _required_text(name, "name", max_length=100)
    raw, prefix = ApiToken.new_raw()
    token = ApiToken(user=user, name=name, prefix=prefix, token_hash=ApiToken.hash(raw))
    _save(token, actor=actor, reason="Token issued")
    _record(
        Event.Type.API_TOKEN_CREATED,
        actor=actor,
        subject=token,
        data={"user": user.get_username(), "name": name, "prefix": prefix},
    )
    return token, raw


@transaction.atomic
def api_token_revoke(*, token: ApiToken, actor=None) -> ApiToken:
    token = ApiToken.objects.select_for_update(of=("self",)).select_related("user").get(pk=token.pk)
    _check_token_actor(actor, token.user)
    if token.revoked_at is not None:
        raise InvalidTransition(f"{token} was already revoked.")
    token.revoked_at = timezone.now()
    _save(token, actor=actor, reason="Token revoked")
    _record(
        Event.Type.API_TOKEN_REVOKED,
        actor=actor,
        subject=token,
        data={"user": token.user.get_username(), "name": token.name, "prefix": token.prefix},
    )
    return token


def api_token_authenticate(*, raw: str) -> ApiToken | None:
    """The active token ``raw`` is, with its (active) user loaded; None for anything else.

    Not a business event: a use is recorded only as ``last_used_at``, at most once a minute,
    without a history version, so that a busy game server does not flood the audit trail.
    """
    prefix = ApiToken.prefix_of(raw)
    if prefix is None:
        return None
    candidates = ApiToken.objects.select_related("user").filter(
        prefix=prefix, revoked_at__isnull=True, user__is_active=True
    )
    token = next((candidate for candidate in candidates if candidate.matches(raw)), None)
    if token is not None:
        now = timezone.now()
        ApiToken.objects.filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - TOKEN_USE_RESOLUTION),
            pk=token.pk,
        ).update(last_used_at=now)
    return token


# --- Helpers ---------------------------------------------------------------------------------

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
)


def _payout_rows(
    settlement_id: int, payouts, chips: dict[str, int], explained: dict[str, ExplanationTerms]
) -> Iterator[tuple]:
    """The rows of SETTLEMENT_PAYOUT_FIELDS, built as plainly as possible: 300,000 of them
    are written while the caller waits."""
    for position, row in enumerate(payouts):
        player = row.player
        terms = explained.get(player)
        if terms is None:
            yield (
                settlement_id, position, player, chips[player], row.cash, row.tdollars,
                row.tickets, row.fpp, None, "", "", None, None,
            )  # fmt: skip
        else:
            denominator = terms.denominator
            yield (
                settlement_id, position, player, chips[player], row.cash, row.tdollars,
                row.tickets, row.fpp, terms.guaranteed, _fraction_text(terms.share, denominator),
                _fraction_text(terms.exact, denominator), terms.capped, terms.rounding_cent,
            )  # fmt: skip


def _fraction_text(numerator: int, denominator: int) -> str:
    """A reduced fraction as str(Fraction) writes it: "n/d", or "n" for a whole number."""
    return f"{numerator}/{denominator}" if denominator != 1 else str(numerator)


def _check_storable(result) -> None:
    """Refuse, before anything is written, a settlement with an amount beyond a bigint; one
    maximum per column rather than a check per value."""
    fields = ("cash", "tdollars", "tickets", "fpp")
    columns = [map(attrgetter(name), result.payouts) for name in fields]
    columns.append(map(attrgetter("amount"), result.lines))
    largest = max(max(column, default=0) for column in columns)
    if largest > MAX_AMOUNT:
        raise DomainError(f"An amount of this settlement ({largest}) is too large to store.")


def _line_totals(lines: Iterable[tuple[str, str, int]]) -> dict[str, dict[str, int]]:
    """{unit: {source: amount}} over (unit, source, amount) triples."""
    sums: dict[tuple[str, str], int] = defaultdict(int)
    for unit, source, amount in lines:
        sums[unit, source] += amount
    totals: dict[str, dict[str, int]] = {}
    for (unit, source), amount in sums.items():
        totals.setdefault(unit, {})[source] = amount
    return totals


def _insert_rows(model, fields: Sequence[str], rows: Iterable[tuple]) -> None:
    """Append rows fast: COPY on PostgreSQL (several times quicker than INSERT for the
    300,000-row tables), batched bulk_create elsewhere. Bypasses model save(), so it is for
    the append-only tables without history only."""
    if connection.vendor == "postgresql":
        quote = connection.ops.quote_name
        columns = ", ".join(quote(model._meta.get_field(name).column) for name in fields)
        sql = f"COPY {quote(model._meta.db_table)} ({columns}) FROM STDIN"
        # The raw psycopg cursor skips Django's error translation; a refused row must still
        # surface as IntegrityError.
        with (
            connection.wrap_database_errors,
            connection.cursor() as cursor,
            cursor.cursor.copy(sql) as copy,
        ):
            for row in rows:
                copy.write_row(row)
        return
    attnames = [model._meta.get_field(name).attname for name in fields]
    model.objects.bulk_create(
        (model(**dict(zip(attnames, row, strict=True))) for row in rows), batch_size=BULK_BATCH
    )


def _save(instance, *, actor, reason: str) -> None:
    """Save a versioned row with the actor and reason recorded on its history version."""
    instance._history_user = actor
    instance._change_reason = reason
    instance.save()


def _record(
    event_type: str,
    *,
    actor,
    incident: Incident | None = None,
    case: Case | None = None,
    tournament: Tournament | None = None,
    subject=None,
    reason: str = "",
    data: dict | None = None,
) -> Event:
    if case is not None:
        incident = incident or case.incident
        tournament = tournament or case.tournament
    # Event ids key the dashboard's cache, so they must follow commit order (settlements.changes).
    changes.hold_commit_order()
    event = Event.objects.create(
        type=event_type,
        actor=actor,
        incident=incident,
        case=case,
        tournament=tournament,
        subject_type=subject._meta.model_name if subject is not None else "",
        subject_id=subject.pk if subject is not None else None,
        reason=reason.strip(),
        data=data or {},
    )
    fields = {
        "event_type": event_type,
        "event_id": event.pk,
        "actor": actor.get_username() if actor is not None else None,
        "incident_id": incident.pk if incident is not None else None,
        "case_id": case.pk if case is not None else None,
        "tournament": tournament.operator_id if tournament is not None else None,
        "subject": f"{event.subject_type}:{event.subject_id}" if subject is not None else None,
        "reason": event.reason,
        "data": event.data,
    }
    transaction.on_commit(lambda: log.info("business event %s", event_type, extra=fields))
    return event


def _lock_case(case: Case) -> Case:
    # The snapshot text (up to tens of MB) is loaded only by the service that parses it.
    return (
        Case.objects.select_for_update(of=("self",))
        .select_related("tournament", "incident", "snapshot")
        .defer("snapshot__text")
        .get(pk=case.pk)
    )


def _lock_settlement(settlement: Settlement) -> tuple[Case, Settlement]:
    case_id = Settlement.objects.values_list("case_id", flat=True).get(pk=settlement.pk)
    case = (
        Case.objects.select_for_update(of=("self",))
        .select_related("tournament", "incident")
        .get(pk=case_id)
    )
    locked = (
        Settlement.objects.select_for_update(of=("self",))
        .select_related("corrects")
        .get(pk=settlement.pk)
    )
    locked.case = case
    return case, locked


def _refuse_withdrawn(case: Case, words: str) -> None:
    if case.status == CaseStatus.WITHDRAWN:
        raise InvalidTransition(
            f"{case} was withdrawn as loaded in error; {words} the tournament's current case."
        )


def _refuse_own_work(settlement: Settlement, actor, verb: str) -> None:
    if actor.pk == settlement.prepared_by_id:
        raise NotAllowed(f"You prepared {settlement}; another Tournament Manager must {verb} it.")
    if actor.pk == settlement.submitted_by_id:
        raise NotAllowed(f"You submitted {settlement}; another Tournament Manager must {verb} it.")


def _compensation_review(compensation: Compensation, actor, action: str, reason: str):
    roles.require_role(actor, roles.TOURNAMENT_MANAGER, action=f"{action} compensation")
    compensation = (
        Compensation.objects.select_for_update(of=("self",))
        .select_related("case__tournament", "case__incident")
        .get(pk=compensation.pk)
    )
    new_status = compensation_next_status(compensation.status, action, label=str(compensation))
    if actor.pk == compensation.proposed_by_id:
        raise NotAllowed(
            f"You proposed {compensation}; another Tournament Manager must {action} it."
        )
    compensation.status = new_status
    if action == "approve":
        compensation.approved_by = actor
    else:
        compensation.rejected_by = actor
    compensation.reviewed_at = timezone.now()
    compensation.review_reason = reason.strip()
    _save(compensation, actor=actor, reason=reason.strip() or action.capitalize() + "d")
    _record(
        Event.Type.COMPENSATION_APPROVED
        if action == "approve"
        else Event.Type.COMPENSATION_REJECTED,
        actor=actor,
        case=compensation.case,
        subject=compensation,
        reason=compensation.review_reason,
        data={"totals": compensation.totals},
    )
    return compensation


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


def _entrants_among(case: Case, players: Iterable[str]) -> set[str]:
    players = list(players)
    found: set[str] = set()
    for start in range(0, len(players), 10_000):
        chunk = players[start : start + 10_000]
        found.update(
            CasePlayer.objects.filter(case=case, player__in=chunk).values_list("player", flat=True)
        )
    return found


def _checked_invitees(case: Case, invited: Sequence[str]) -> list[str]:
    invited = list(invited)
    if not invited:
        raise DomainError("Invite at least one player.", field="invited_players")
    if len(set(invited)) != len(invited):
        raise DomainError("A player is invited twice.", field="invited_players")
    unknown = set(invited) - _entrants_among(case, invited)
    if unknown:
        names = ", ".join(sorted(map(str, unknown))[:5])
        raise DomainError(f"Only entrants can be invited; not entrants: {names}.",
                          field="invited_players")  # fmt: skip
    return invited


def _tournament_for_snapshot(info, *, actor) -> Tournament:
    """The snapshot's tournament, locked; registered if new, brought up to date if known."""
    fields = {
        "name": info.name or "",
        "type": info.type,
        "currency": info.currency,
        "buy_in": getattr(info, "buy_in", None),
        "fee": getattr(info, "fee", None),
        "guarantee": getattr(info, "guarantee", None),
        "fpp_buy_in": getattr(info, "fpp_buy_in", None),
        "prize_pool": getattr(info, "prize_pool", None),
        "payouts": list(getattr(info, "payouts", None) or []),
        "seat_value": getattr(info, "seat_value", None),
    }
    tournament = Tournament.objects.select_for_update().filter(operator_id=info.id).first()
    if tournament is None:
        try:
            with transaction.atomic():
                tournament = Tournament(operator_id=info.id, **fields)
                _save(tournament, actor=actor, reason="Registered from a snapshot")
        except IntegrityError:
            # Registered concurrently by another load; that transaction has committed.
            tournament = Tournament.objects.select_for_update().get(operator_id=info.id)
        else:
            _record(
                Event.Type.TOURNAMENT_CREATED,
                actor=actor,
                tournament=tournament,
                subject=tournament,
                data={"operator_id": info.id, "type": info.type, "from_snapshot": True},
            )
            return tournament
    changed = {
        name: value
        for name, value in fields.items()
        if getattr(tournament, name) != value and not (name == "name" and not value)
    }
    if changed:
        for name, value in changed.items():
            setattr(tournament, name, value)
        _save(tournament, actor=actor, reason="Updated from a snapshot")
        _record(
            Event.Type.TOURNAMENT_UPDATED,
            actor=actor,
            tournament=tournament,
            subject=tournament,
            data={"changed": sorted(changed)},
        )
    return tournament


def _storage_problems(parsed) -> list[Problem]:
    """What the engine accepts but the database cannot hold (ids too long, NUL characters,
    numbers beyond 64 bits), reported with paths like the engine's own problems."""
    problems: list[Problem] = []

    def check_text(path: str, value: str) -> None:
        if len(value) > ID_MAX_LENGTH:
            problems.append(Problem(path, f"must be at most {ID_MAX_LENGTH} characters"))
        elif "\x00" in value:
            problems.append(Problem(path, "must not contain the NUL character"))

    info = parsed.tournament
    check_text("tournament.id", info.id)
    check_text("tournament.name", info.name or "")
    for field in ("buy_in", "fee", "guarantee", "fpp_buy_in", "prize_pool", "seat_value"):
        value = getattr(info, field, None)
        if value is not None and value > MAX_AMOUNT:
            problems.append(Problem(f"tournament.{field}", "is too large"))
    for index, value in enumerate(getattr(info, "payouts", None) or []):
        if value > MAX_AMOUNT:
            problems.append(Problem(f"tournament.payouts[{index}]", "is too large"))
    for index, player in enumerate(parsed.players):
        check_text(f"players[{index}].id", player.id)
        if player.chips > MAX_AMOUNT:
            problems.append(Problem(f"players[{index}].chips", "is too large"))
        if len(problems) >= 100:
            break
    return problems


def _parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _aware(value: datetime, field: str) -> datetime:
    if not isinstance(value, datetime):
        raise DomainError("Give a date and time.", field=field)
    return timezone.make_aware(value) if timezone.is_naive(value) else value


def _required_text(value: str, field: str, *, max_length: int | None = None) -> str:
    text = (value or "").strip()
    if not text:
        raise DomainError(f"Please give the {field.replace('_', ' ')}.", field=field)
    if max_length is not None and len(text) > max_length:
        raise DomainError(
            f"The {field.replace('_', ' ')} must be at most {max_length} characters.", field=field
        )
    return text


def _check_amount(value, field: str, *, positive: bool = False, what: str | None = None) -> None:
    what = what or f"The {field.replace('_', ' ')}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise DomainError(f"{what} must be a whole number of minor units.", field=field)
    if value < (1 if positive else 0):
        raise DomainError(
            f"{what} must be {'positive' if positive else 'zero or more'}.", field=field
        )
    if value > MAX_AMOUNT:
        raise DomainError(f"{what} is too large.", field=field)


def _check_player_id(player, where: str) -> None:
    if not isinstance(player, str) or not player.strip():
        raise DomainError(f"{where}: give the player id.", field="players")
    if len(player) > ID_MAX_LENGTH or "\x00" in player:
        raise DomainError(f"{where}: {player[:20]!r}… is not a valid player id.", field="players")


def _check_token_actor(actor, user) -> None:
    if actor is not None and actor.pk != user.pk:
        raise NotAllowed(
            "Tokens are issued to their own user, or by an administrator on the server."
        )
