"""A crash case's start and its undoing: loading a snapshot (which registers or updates its
tournament), and withdrawing a case loaded in error.
"""

from collections.abc import Iterable, Iterator
from datetime import timedelta

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from settlements import audit_log, bounds, player_ids, seals
from settlements.access import permissions
from settlements.errors import DomainError, Duplicate
from settlements.models import (
    ID_MAX_LENGTH,
    Case,
    CasePlayer,
    Compensation,
    Event,
    Incident,
    PrizeWithdrawal,
    Rulebook,
    RulebookVersion,
    Settlement,
    Snapshot,
    Tournament,
)
from settlements.money import is_currency
from settlements.rules import (
    ENGINE_VERSION,
    InvalidInput,
    Policy,
    Problem,
    assess,
    parse_policy,
    parse_snapshot,
)
from settlements.rules.snapshot import FORMAT_V2 as SNAPSHOT_FORMAT_V2
from settlements.rules.snapshot import name_players
from settlements.selectors.cases import crash_case_in_force
from settlements.selectors.rulebooks import version_in_force
from settlements.services import staging
from settlements.services.common import (
    MAX_AMOUNT,
    insert_rows,
    lock_case,
    record_event,
    refuse_look_alike_tournament,
    required_text,
    save_with_history,
)
from settlements.services.incidents import new_incident, record_incident_reported
from settlements.workflow import (
    CaseStatus,
    CompensationStatus,
    PrizeWithdrawalStatus,
    SettlementStatus,
    case_next_status,
    compensation_next_status,
    prize_withdrawal_next_status,
    settlement_next_status,
)


@transaction.atomic
def case_load_snapshot(
    *,
    actor,
    snapshot: bytes | str,
    incident: Incident | None = None,
    tournament: Tournament | None = None,
) -> Case:
    """Open a crash case from a snapshot, registering or updating its tournament.

    Without ``incident`` a new incident is reported for this crash. ``tournament``, when
    given, is the tournament the user picked: the snapshot must be about it. The case is
    assessed under the version of the snapshot's rulebook in force when the tournament started
    (``rulebook_for``), and keeps it for good. An invalid snapshot, an unknown rulebook or a
    start before its first version raises ``InvalidInput`` and nothing at all is stored.
    """
    # Asked before the snapshot is parsed, and again below once the incident is locked.
    permissions.enforce(permissions.case_load_snapshot(user=actor, incident=incident))
    parsed, content = _read_snapshot(snapshot)
    version = rulebook_for(parsed, received_at=timezone.now())
    policy = parse_policy(version.parameters)
    assessment = _assessed(parsed, policy)
    info = parsed.tournament
    if tournament is not None and tournament.operator_id != info.id:
        raise DomainError(
            f"This snapshot is about tournament {info.id}, not {tournament.operator_id}.",
            field="snapshot",
        )
    if incident is not None:
        incident = share_incident(incident.pk)
        permissions.enforce(permissions.case_load_snapshot(user=actor, incident=incident))

    tournament, tournament_event = _tournament_for_snapshot(
        info, actor=actor, version_2=parsed.format == SNAPSHOT_FORMAT_V2
    )
    # A tournament registered here and now has no case yet: nothing to look for.
    registered = (
        tournament_event is not None and tournament_event[0] == Event.Type.TOURNAMENT_CREATED
    )
    existing = None if registered else crash_case_in_force(tournament)
    if existing is not None:
        raise Duplicate(
            f"Tournament {info.id} already has a crash case (#{existing.pk}, "
            f"{existing.get_status_display().lower()}); its snapshot was loaded before. "
            "If that case was loaded in error, withdraw it first.",
            existing=existing,
        )
    # Checked by _storage_problems above.
    crashed_at = bounds.parse_rfc3339(parsed.crashed_at) if parsed.crashed_at else None
    reported = incident is None
    if reported:
        incident = new_incident(
            actor=actor,
            title=f"Crash of {info.name or info.id}"[:200],
            started_at=crashed_at or timezone.now(),
        )
    case = _store_case(
        content,
        parsed,
        assessment,
        version,
        incident=incident,
        tournament=tournament,
        crashed_at=crashed_at,
        actor=actor,
    )
    entrants = _insert_entrants(case.pk, parsed)
    # The events last: the first takes the chain's lock (audit_log.hold_chain), which every
    # writer of an event queues for, so it is held only from here to the commit.
    if tournament_event is not None:
        event_type, data = tournament_event
        record_event(event_type, actor=actor, tournament=tournament, subject=tournament, data=data)
    if reported:
        record_incident_reported(incident, actor=actor)
    _record_snapshot_loaded(case, actor=actor, entrants=entrants)
    return case


# An entrant row as written and sealed: its case, then seals.ENTRANT_FIELDS.
ENTRANT_ROW = ("case", *seals.ENTRANT_FIELDS)


def _insert_entrants(case_id: int, parsed) -> str:
    """Write the entrant rows; their digest in snapshot order, for the event to seal.

    The rows go in sorted by player id. Both text indexes on entrants lead with the id within
    the case ((case, player) and (player, case)), so in that order PostgreSQL appends to one
    leaf page after another; in snapshot order every row lands on a random page of both,
    which made the COPY four times slower (docs/benchmarks.md). Only the order is worked out
    beforehand: each row is made as the COPY reads it, while the database inserts the rows
    before.
    """
    players = parsed.players
    ids = [player.id for player in players]
    by_id = sorted(range(len(players)), key=ids.__getitem__)
    entrants = seals.rows_digest(seals.ENTRANTS, fields=ENTRANT_ROW)
    rows = entrants.passing(
        _entrant_rows(case_id, players, by_id),
        digested=_entrant_rows(case_id, players, range(len(players))),
    )
    insert_rows(CasePlayer, ENTRANT_ROW, rows)
    return entrants.hexdigest()


def _entrant_rows(case_id: int, players: list, positions: Iterable[int]) -> Iterator[tuple]:
    """The ENTRANT_ROW of the players at ``positions`` (in the snapshot), in that order."""
    return (
        (case_id, position, p.id, p.chips, p.entries, p.add_ons, p.bounty)
        for position, p in zip(positions, map(players.__getitem__, positions), strict=True)
    )


def _entrants_digest(parsed) -> str:
    """The digest of a crash-snapshot/2's entrants as loaded (audit_log.entrants_digest);
    empty for version 1, whose entrants §8 does not concern."""
    if parsed.format != SNAPSHOT_FORMAT_V2:
        return ""
    return audit_log.entrants_digest(parsed.players)


def _read_snapshot(snapshot: bytes | str) -> tuple:
    """The snapshot parsed and its UTF-8 bytes; InvalidInput for what the engine refuses and
    for what the desk cannot store."""
    parsed = parse_snapshot(snapshot)
    problems = _storage_problems(parsed)
    if problems:
        raise InvalidInput(problems)
    content = snapshot if isinstance(snapshot, bytes) else snapshot.encode()
    return parsed, content


def _assessed(parsed, policy: Policy):
    assessment = assess(parsed, policy)
    if assessment.pool > MAX_AMOUNT:
        raise InvalidInput([Problem("tournament", "the prize pool is too large to store")])
    return assessment


# The rulebook of a snapshot that names none.
DEFAULT_RULEBOOK = "default"


def rulebook_for(parsed, *, received_at) -> RulebookVersion:
    """The version of the snapshot's rulebook (``default`` unless it names one) in force when
    the tournament started: at ``tournament.starts_at``, else the crash, else ``received_at``.
    InvalidInput with the path when there is none."""
    info = parsed.tournament
    key = info.rulebook or DEFAULT_RULEBOOK
    if info.starts_at:
        started, path = bounds.parse_rfc3339(info.starts_at), "tournament.starts_at"
    elif parsed.crashed_at:
        started, path = bounds.parse_rfc3339(parsed.crashed_at), "crashed_at"
    else:
        started, path = received_at, "tournament.starts_at"
    version = version_in_force(key, started)
    if version is not None:
        return version
    if not Rulebook.objects.filter(key=key).exists():
        raise InvalidInput([Problem("tournament.rulebook", f"there is no rulebook {key!r}")])
    raise InvalidInput(
        [
            Problem(
                path,
                f"the tournament started on {started.isoformat()}, before the first version "
                f"of rulebook {key!r} took effect",
            )
        ]
    )


def _store_case(
    content: bytes,
    parsed,
    assessment,
    version: RulebookVersion,
    *,
    incident,
    tournament,
    crashed_at,
    actor,
) -> Case:
    """The snapshot stored (its digest and size taken from the bytes received, not from its
    text encoded again), and the case opened on it; Duplicate when another load of the same
    tournament committed meanwhile."""
    stored = Snapshot(
        text=content.decode(),
        sha256=Snapshot.digest(content),
        size_bytes=len(content),
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
        started=getattr(parsed.tournament, "started", True),
        stage=assessment.stage,
        entrants=assessment.entrants,
        eliminated=assessment.eliminated,
        remaining=assessment.remaining,
        paid_places=assessment.paid_places,
        pool=assessment.pool,
        policy=parse_policy(version.parameters).to_dict(),
        rulebook_version=version,
        decision_options=list(assessment.decision_options),
        engine_version=ENGINE_VERSION,
        entrants_digest=_entrants_digest(parsed),
        created_by=actor,
    )
    try:
        with transaction.atomic():
            save_with_history(case, actor=actor, reason=f"Snapshot loaded ({stored.sha256[:12]})")
    except IntegrityError:
        # Another load of the same tournament committed between our check and our insert; it
        # is visible now (the savepoint is gone), so the answer can point at it.
        existing = crash_case_in_force(tournament)
        raise Duplicate(
            f"Tournament {parsed.tournament.id} already has a crash case"
            + (f" (#{existing.pk})." if existing is not None else "."),
            existing=existing,
        ) from None
    return case


def _record_snapshot_loaded(case: Case, *, actor, entrants: str) -> None:
    record_event(
        Event.Type.SNAPSHOT_LOADED,
        actor=actor,
        case=case,
        subject=case,
        facts={"entrant_rows": entrants},
        data={
            "sha256": case.snapshot.sha256,
            "size_bytes": case.snapshot.size_bytes,
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


@transaction.atomic
def case_withdraw(*, case: Case, actor, reason: str) -> Case:
    """Withdraw a crash case loaded in error (the wrong snapshot, the wrong tournament).

    The snapshot and everything recorded on the case stay on record. A settlement of it not yet
    approved (prepared, or waiting for approval) is withdrawn with it, and so are compensation
    and prize withdrawals still waiting for an answer. The tournament may then be loaded
    again. A case with an approved settlement stays (an adjustment corrects it), and so does
    one with approved compensation, which is owed.
    """
    case = lock_case(case)
    # Locked before they are read: an approval committing meanwhile is seen, and one that
    # comes after finds its proposal withdrawn.
    compensations = list(
        Compensation.objects.select_for_update(of=("self",)).filter(case=case).order_by("pk")
    )
    approved = [c.pk for c in compensations if c.status == CompensationStatus.APPROVED]
    permissions.enforce(
        permissions.case_withdraw(case=case, user=actor, approved_compensations=approved)
    )
    next_status = case_next_status(case.status, "withdraw", label=str(case))
    reason = required_text(reason, "reason")

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
        save_with_history(
            settlement, actor=actor, reason=f"Withdrawn with case #{case.pk}: {reason}"
        )
    voided = [c for c in compensations if c.status == CompensationStatus.PROPOSED]
    for compensation in voided:
        compensation.status = compensation_next_status(
            compensation.status, "withdraw", label=str(compensation)
        )
        save_with_history(
            compensation, actor=actor, reason=f"Withdrawn with case #{case.pk}: {reason}"
        )
    # A prize taken back is a debit only once another manager approves it: one still waiting
    # goes with the case, as compensation does.
    prizes = list(
        PrizeWithdrawal.objects.select_for_update()
        .filter(case=case, status=PrizeWithdrawalStatus.PROPOSED)
        .order_by("pk")
    )
    for withdrawal in prizes:
        withdrawal.status = prize_withdrawal_next_status(
            withdrawal.status, "withdraw", label=str(withdrawal)
        )
        save_with_history(
            withdrawal, actor=actor, reason=f"Withdrawn with case #{case.pk}: {reason}"
        )
    previous = case.status
    case.status = next_status
    case.withdrawn_by = actor
    case.withdrawn_at = timezone.now()
    case.withdrawal_reason = reason
    save_with_history(case, actor=actor, reason=reason)
    record_event(
        Event.Type.CASE_WITHDRAWN,
        actor=actor,
        case=case,
        subject=case,
        reason=reason,
        sealed=[*in_flight, *voided, *prizes],
        data={
            "status": previous,
            "settlements_withdrawn": [settlement.pk for settlement in in_flight],
            "compensation_withdrawn": [compensation.pk for compensation in voided],
            "prize_withdrawals_withdrawn": [withdrawal.pk for withdrawal in prizes],
            "sha256": case.snapshot.sha256,
        },
    )
    return case


def share_incident(pk: int) -> Incident:
    """The incident, share-locked to the commit: closing it (which locks it for update) waits
    for the loads under way and then counts their cases, while loads into the same incident
    run side by side. A job's batch of loads locks it once for all (``services.batches``)."""
    if (held := staging.held(Incident, pk)) is not None:
        return held
    if connection.vendor == "postgresql":
        table = connection.ops.quote_name(Incident._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {table} WHERE id = %s FOR SHARE", [pk])
    return Incident.objects.get(pk=pk)


def _section8_fields(info, *, version_2: bool) -> dict:
    """K, A and G as the tournament keeps them: empty unless a crash-snapshot/2 gives them, so
    that loading a version 1 snapshot changes nothing on a tournament."""
    sold = version_2 and getattr(info, "add_ons_sold", False)
    return {
        "entry_bounty": (getattr(info, "entry_bounty", 0) or None) if version_2 else None,
        "add_on": info.add_on if sold else None,
        "add_on_fee": info.add_on_fee if sold else None,
    }


def _tournament_for_snapshot(
    info, *, actor, version_2: bool = False
) -> tuple[Tournament, tuple[str, dict] | None]:
    """The snapshot's tournament, locked; registered if new, brought up to date if known.
    With it, the event to record about it (type and data), if any: the caller records it with
    its own, at the end of its transaction."""
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
        **_section8_fields(info, version_2=version_2),
    }
    # FOR NO KEY UPDATE: it serialises loads of one tournament, yet lets a writer that holds
    # the event chain's lock check its events' link to the tournament (FOR KEY SHARE, at its
    # commit) while this load waits for that lock: FOR UPDATE would deadlock the two.
    tournament = (
        Tournament.objects.select_for_update(no_key=True).filter(operator_id=info.id).first()
    )
    if tournament is None:
        try:
            refuse_look_alike_tournament(info.id, field="snapshot")
        except Duplicate:
            # Registered under this very id by a load that committed since the look above:
            # it is this tournament, to lock and bring up to date like any known one.
            tournament = (
                Tournament.objects.select_for_update(no_key=True)
                .filter(operator_id=info.id)
                .first()
            )
            if tournament is None:
                raise
    if tournament is None:
        try:
            with transaction.atomic():
                key = player_ids.tournament_key(info.id)
                tournament = Tournament(operator_id=info.id, key=key, **fields)
                save_with_history(tournament, actor=actor, reason="Registered from a snapshot")
        except IntegrityError:
            # Registered concurrently by another load; that transaction has committed.
            tournament = Tournament.objects.select_for_update(no_key=True).get(operator_id=info.id)
        else:
            created = {"operator_id": info.id, "type": info.type, "from_snapshot": True}
            return tournament, (Event.Type.TOURNAMENT_CREATED, created)
    changed = {
        name: value
        for name, value in fields.items()
        if getattr(tournament, name) != value and not (name == "name" and not value)
    }
    if changed:
        for name, value in changed.items():
            setattr(tournament, name, value)
        save_with_history(tournament, actor=actor, reason="Updated from a snapshot")
        return tournament, (Event.Type.TOURNAMENT_UPDATED, {"changed": sorted(changed)})
    return tournament, None


# How far ahead of the desk's clock a game server's may run: a crash reported a few seconds
# "in the future" by a server whose clock is slightly fast is still a crash that happened.
CLOCK_SKEW = timedelta(minutes=5)


def _storage_problems(parsed) -> list[Problem]:
    """What the engine accepts but the desk refuses: what the database cannot hold or the
    pages cannot show (ids too long, NUL characters, numbers beyond 64 bits, times beyond
    settlements.bounds), and ids that are not what they look like (settlements.player_ids),
    reported with paths like the engine's own problems, naming the player of a row."""
    problems: list[Problem] = []
    ids = [player.id for player in parsed.players]
    if parsed.crashed_at is not None:
        try:
            crashed_at = bounds.parse_rfc3339(parsed.crashed_at)
        except ValueError as refusal:
            problems.append(Problem("crashed_at", str(refusal)))
        else:
            if crashed_at > timezone.now() + CLOCK_SKEW:
                problems.append(Problem("crashed_at", "is in the future"))
    if parsed.tournament.starts_at is not None:
        try:
            bounds.parse_rfc3339(parsed.tournament.starts_at)
        except ValueError as refusal:
            problems.append(Problem("tournament.starts_at", str(refusal)))

    def check_text(path: str, value: str) -> None:
        if len(value) > ID_MAX_LENGTH:
            problems.append(Problem(path, f"must be at most {ID_MAX_LENGTH} characters"))
        elif "\x00" in value:
            problems.append(Problem(path, "must not contain the NUL character"))

    info = parsed.tournament
    check_text("tournament.id", info.id)
    if "\x00" not in info.id and (problem := player_ids.id_problem(info.id)):
        problems.append(Problem("tournament.id", problem))
    if not is_currency(info.currency):
        problems.append(Problem("tournament.currency", "is not an ISO 4217 currency code"))
    check_text("tournament.name", info.name or "")
    if "\x00" not in (info.name or "") and (problem := player_ids.id_problem(info.name or "")):
        problems.append(Problem("tournament.name", problem))
    for field in (
        "buy_in",
        "fee",
        "guarantee",
        "fpp_buy_in",
        "prize_pool",
        "seat_value",
        "entry_bounty",
        "add_on",
        "add_on_fee",
    ):
        value = getattr(info, field, None)
        if value is not None and value > MAX_AMOUNT:
            problems.append(Problem(f"tournament.{field}", "is too large"))
    for index, value in enumerate(getattr(info, "payouts", None) or []):
        if value > MAX_AMOUNT:
            problems.append(Problem(f"tournament.payouts[{index}]", "is too large"))
    # Two maxima in C first: 300,000 good entrants need no loop in Python.
    chips = [player.chips for player in parsed.players]
    if max(map(len, ids), default=0) > ID_MAX_LENGTH or max(chips, default=0) > MAX_AMOUNT:
        for index, player in enumerate(parsed.players):
            if len(player.id) > ID_MAX_LENGTH:
                problems.append(
                    Problem(f"players[{index}].id", f"must be at most {ID_MAX_LENGTH} characters")
                )
            if player.chips > MAX_AMOUNT:
                problems.append(Problem(f"players[{index}].chips", "is too large"))
            if len(problems) >= 100:
                return name_players(problems, ids)
    problems += _player_id_problems(ids)
    return name_players(problems, ids)


def _player_id_problems(ids: list[str]) -> list[Problem]:
    """Ids with control or invisible characters or not in NFC, then pairs of ids that look
    the same, each at the later id's path naming the earlier one."""
    limit = player_ids.LIST_LIMIT
    refused = player_ids.id_problems(ids)
    problems = [Problem(f"players[{index}].id", problem) for index, problem in refused[:limit]]
    if len(refused) > limit:
        problems.append(Problem("players", f"{len(refused) - limit} more ids are refused too"))
    if refused:
        return problems  # look-alikes are compared among ids that are themselves valid
    alike = player_ids.look_alikes(ids)
    for earlier, later in alike[:limit]:
        problems.append(
            Problem(
                f"players[{later}].id",
                f"looks the same as players[{earlier}].id ({ids[earlier]!r}); two players "
                "must be told apart by reading their ids",
            )
        )
    if len(alike) > limit:
        problems.append(Problem("players", f"{len(alike) - limit} more ids look like others"))
    return problems
