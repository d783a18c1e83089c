"""Helpers every service shares: saving a versioned row with its actor and reason, recording
the business event, locking rows in the one order, bulk inserts and argument checks.
"""

import copy
import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db import connection, transaction
from django.dispatch import Signal
from django.utils import timezone
from simple_history.utils import get_history_manager_for_model

from settlements import audit_log, bounds, player_ids, seal_formats, seals
from settlements.errors import DomainError, Duplicate
from settlements.models import (
    ID_MAX_LENGTH,
    Case,
    CasePlayer,
    Event,
    Incident,
    Settlement,
    Tournament,
)
from settlements.services import bulk, staging

log = logging.getLogger("crashdesk.events")


# PostgreSQL bigint; larger numbers are refused with a message rather than a database error.
MAX_AMOUNT = bounds.BIGINT_MAX


# Rows per round trip when the database cannot stream rows with COPY.
BULK_BATCH = 5000


def insert_rows(model, fields: Sequence[str], rows: Iterable[tuple]) -> None:
    """Append rows fast: COPY on PostgreSQL (several times quicker than INSERT for the
    300,000-row tables), batched bulk_create elsewhere. Bypasses model save(), so it is for
    the append-only tables without history only."""
    if connection.vendor == "postgresql":
        quote = connection.ops.quote_name
        columns = [model._meta.get_field(name) for name in fields]
        names = ", ".join(quote(field.column) for field in columns)
        # Binary: psycopg writes each value in C without formatting it as text, and the server
        # does not parse it back, half the client's CPU for 810,000 ledger lines. Each column
        # must then be sent as its exact type (an integer takes 4 bytes, a bigint 8).
        sql = f"COPY {quote(model._meta.db_table)} ({names}) FROM STDIN (FORMAT BINARY)"
        with bulk.cursor() as cursor, cursor.copy(sql) as copy:
            copy.set_types([field.db_type(connection).partition("(")[0] for field in columns])
            for row in rows:
                copy.write_row(row)
        return
    attnames = [model._meta.get_field(name).attname for name in fields]
    model.objects.bulk_create(
        (model(**dict(zip(attnames, row, strict=True))) for row in rows), batch_size=BULK_BATCH
    )


def insert_bound_rows(model, fields: Sequence[str], rows: Sequence[tuple]) -> None:
    """Insert rows whose values are large (files' bytes) with the values sent apart from the
    statement, bytes as binary. Django's PostgreSQL cursor writes every value into the SQL
    text: a 75 KB file becomes 150 KB of hex for the server to parse, four times slower for an
    upload of 200 files. Bypasses model save(), like insert_rows."""
    if connection.vendor == "postgresql":
        quote = connection.ops.quote_name
        columns = ", ".join(quote(model._meta.get_field(name).column) for name in fields)
        values = ", ".join(["%s"] * len(fields))
        sql = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({values})"
        with bulk.cursor() as cursor:
            cursor.executemany(sql, rows)
        return
    attnames = [model._meta.get_field(name).attname for name in fields]
    model.objects.bulk_create(model(**dict(zip(attnames, row, strict=True))) for row in rows)


def update_rows(model, instances: Sequence, fields: Sequence[str]) -> None:
    """Write ``fields`` of each instance, one statement for them all: on PostgreSQL an
    ``UPDATE … FROM (VALUES …)``, whose values are sent apart from its text (Django's
    ``bulk_update`` builds a CASE expression per field and row, costlier to compile than the
    rows are to write); elsewhere ``bulk_update``. Bypasses model save() like insert_rows."""
    if not instances:
        return
    if connection.vendor != "postgresql":
        model.objects.bulk_update(instances, fields)
        return
    quote = connection.ops.quote_name
    columns = [model._meta.pk, *(model._meta.get_field(name) for name in fields)]
    names = [quote(column.column) for column in columns]
    # The first row's values cast to each column's type: the others take the same.
    casts = [f"%s::{column.cast_db_type(connection)}" for column in columns]
    others = ", ".join(["%s"] * len(columns))
    rows = [f"({', '.join(casts)})", *[f"({others})"] * (len(instances) - 1)]
    table = quote(model._meta.db_table)
    sql = (
        f"UPDATE {table} SET {', '.join(f'{n} = v.{n}' for n in names[1:])} "
        f"FROM (VALUES {', '.join(rows)}) AS v ({', '.join(names)}) "
        f"WHERE {table}.{names[0]} = v.{names[0]}"
    )
    params = [
        column.get_db_prep_save(getattr(instance, column.attname), connection)
        for instance in instances
        for column in columns
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def save_with_history(instance, *, actor, reason: str, fields: Sequence[str] = ()) -> None:
    """Save a versioned row with the actor and reason recorded on its history version.
    ``fields``: the only columns the change sets (the row locked and read in the same
    transaction), written alone; the version still records the whole row.

    In a job's batch (``services.staging``) a change to a row the batch holds is written with
    the batch's others at its end, and so is the first version of a new audited record (the
    row itself is inserted now, for what refers to it)."""
    instance._history_user = actor
    instance._change_reason = reason
    stage = staging.current()
    if stage is None:
        instance.save(update_fields=fields or None)
        return
    # What the item staged of this row before is written first: its versions stay in order.
    write_staged(*stage.take(instance))
    if fields and staging.held(type(instance), instance.pk) is instance:
        for name in fields:
            # What save() would do: the times of auto_now fields set now.
            instance._meta.get_field(name).pre_save(instance, False)
        # A copy: the row and its version as they are now, whatever the item does later.
        stage.updates.append((copy.copy(instance), tuple(fields)))
    elif instance.pk is None and type(instance) in seals.SEALED_MODELS.values():
        instance.skip_history_when_saving = True  # simple-history's switch for one save
        try:
            instance.save()
        finally:
            del instance.skip_history_when_saving
        stage.created.append(copy.copy(instance))
    else:
        instance.save(update_fields=fields or None)


def write_staged(created: Sequence, updates: Sequence[tuple[object, tuple[str, ...]]]) -> None:
    """Write what a job's batch staged (``services.staging``): the first versions of new
    records, one insert a model; changes and their versions, one update and one insert a
    model and kind of change."""
    new: dict[type, list] = defaultdict(list)
    for row in created:
        new[type(row)].append(row)
    for model, rows in new.items():
        get_history_manager_for_model(model).bulk_history_create(rows)
    changed: dict[tuple[type, tuple[str, ...]], list] = defaultdict(list)
    for instance, fields in updates:
        changed[type(instance), fields].append(instance)
    for (model, fields), instances in changed.items():
        update_rows(model, instances, fields)
        get_history_manager_for_model(model).bulk_history_create(instances, update=True)


def record_event(
    event_type: str,
    *,
    actor,
    incident: Incident | None = None,
    case: Case | None = None,
    tournament: Tournament | None = None,
    subject=None,
    reason: str = "",
    data: dict | None = None,
    facts: dict | None = None,
    sealed: Sequence = (),
) -> Event:
    """Write the event, sealing what it refers to (settlements.audit_log): its subject's facts,
    ``facts`` the caller digested from the rows it wrote, and the versions so far of its
    subject, its case and the ``sealed`` records it changed too. In a job's batch it is held,
    and sealed and chained with the batch's other events at its end (``services.batches``)."""
    if case is not None:
        incident = incident or case.incident
        tournament = tournament or case.tournament
    event = Event(
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
    records = tuple(dict.fromkeys(r for r in (subject, case, *sealed) if r))
    held = staging.HeldEvent(event, subject, records, facts or {})
    if (stage := staging.current()) is not None:
        stage.events.append(held)
        return event
    seal_facts([held])
    write_events([event])
    return event


def seal_facts(held: Sequence[staging.HeldEvent]) -> None:
    """Complete the events' facts: their subjects' (audit_log), the caller's, and the versions
    so far of the records each names, read for them all in one query a model."""
    subjects = [h for h in held if h.subject is not None]
    facts = audit_log.subjects_facts([(h.subject, h.event.type) for h in subjects])
    of_subject = {id(h): f for h, f in zip(subjects, facts, strict=True)}
    # The format the callers' digests were written in too (seals.rows_digest's default).
    versions = seals.history_facts_of([h.records for h in held], seal_formats.CURRENT)
    for h, history in zip(held, versions, strict=True):
        h.event.seal_format = seal_formats.CURRENT
        h.event.subject_facts = {**of_subject.get(id(h), {}), **h.facts}
        if history:
            h.event.subject_facts["history"] = history


# Sent once a transaction that wrote business events has committed: something may have
# started waiting for someone (services.notifications tells them).
events_committed = Signal()


def _events_committed() -> None:
    events_committed.send(sender=None)


def write_events(events: Sequence[Event]) -> None:
    """Chain ``events`` onto the head, in order, and insert them in one statement."""
    if not events:
        return
    # ``robust``: whatever follows the commit is logged if it fails, never raised into the
    # workflow that has committed.
    transaction.on_commit(_events_committed, robust=True)
    audit_log.hold_chain()
    at = timezone.now()
    for event in events:
        event.at = at
    audit_log.seal_all(events)
    Event.objects.bulk_create(events)
    for event in events:
        _log_on_commit(event)


def _log_on_commit(event: Event) -> None:
    actor, incident, case, tournament = event.actor, event.incident, event.case, event.tournament
    fields = {
        "event_type": event.type,
        "event_id": event.pk,
        "actor": actor.get_username() if actor is not None else None,
        "incident_id": incident.pk if incident is not None else None,
        "case_id": case.pk if case is not None else None,
        "tournament": tournament.operator_id if tournament is not None else None,
        "subject": f"{event.subject_type}:{event.subject_id}" if event.subject_type else None,
        "reason": event.reason,
        "data": event.data,
    }
    transaction.on_commit(lambda: log.info("business event %s", event.type, extra=fields))


# --- Locks, in the one order (services/__init__.py) ---------------------------------------------


def hold_parents(*, incidents: Iterable[int | None] = (), cases: Iterable[int | None] = ()) -> None:
    """Share-lock (FOR KEY SHARE) these incidents, then these cases, each in id order: the
    parents that what follows points at or works under.

    Their foreign keys are checked at commit, under the event chain's lock; a writer that
    locked an incident (closing it) or a case for update, and then queued for that lock, would
    otherwise wait on this transaction while it waits on them. Taken first, a share lock only
    waits for such a writer to commit, and a writer that comes later waits for this one.
    """
    if connection.vendor != "postgresql":
        return
    parts, params = [], []
    for model, ids in ((Incident, incidents), (Case, cases)):
        wanted = sorted({pk for pk in ids if pk is not None})
        if wanted:
            table = connection.ops.quote_name(model._meta.db_table)
            parts.append(
                f"(SELECT count(*) FROM (SELECT 1 FROM {table} WHERE id = ANY(%s) ORDER BY id "
                "FOR KEY SHARE) AS held)"
            )
            params.append(wanted)
    if parts:
        # One statement, the incidents first: one round trip for every batch of confirmations.
        with connection.cursor() as cursor:
            cursor.execute("SELECT " + ", ".join(parts), params)


def lock_case(case: Case) -> Case:
    """The case, locked for update, its incident share-locked first (or the case as the
    running job's batch locked it so)."""
    if (held := staging.held(Case, case.pk)) is not None:
        return held
    hold_parents(incidents=[case.incident_id])
    return _locked_case(case.pk)


def lock_case_of(record) -> Case:
    """The case of ``record`` (a compensation, a prize withdrawal), locked as ``lock_case``
    locks it, before the caller locks the record itself."""
    case_id, incident_id = (
        type(record).objects.values_list("case_id", "case__incident_id").get(pk=record.pk)
    )
    hold_parents(incidents=[incident_id])
    return _locked_case(case_id)


def _locked_case(case_id: int) -> Case:
    if (case := locked_cases([case_id]).get(case_id)) is None:
        raise Case.DoesNotExist("The case is gone.")
    return case


def locked_cases(ids: Iterable[int], *, texts: bool = False) -> dict[int, Case]:
    """The cases, locked for update in id order (their incidents held already), with their
    tournament, incident and snapshot; the snapshot text (up to tens of MB) only for
    ``texts``, otherwise loaded by the service that parses it."""
    rows = (
        Case.objects.select_for_update(of=("self",))
        .select_related("tournament", "incident", "snapshot")
        .filter(pk__in=ids)
        .order_by("pk")
    )
    if not texts:
        rows = rows.defer("snapshot__text")
    return {case.pk: case for case in rows}


def lock_settlement(settlement: Settlement) -> tuple[Case, Settlement]:
    """The settlement's incident (shared), its case, then the settlement, locked in that order
    (or as the running job's batch locked them so)."""
    if (held := staging.held(Settlement, settlement.pk)) is not None:
        return held.case, held
    case_id, incident_id = Settlement.objects.values_list("case_id", "case__incident_id").get(
        pk=settlement.pk
    )
    hold_parents(incidents=[incident_id])
    case = _locked_case(case_id)
    if (locked := locked_settlements([settlement.pk], {case_id: case}).get(settlement.pk)) is None:
        raise Settlement.DoesNotExist("The settlement is gone.")
    return case, locked


def locked_settlements(ids: Iterable[int], cases: dict[int, Case]) -> dict[int, Settlement]:
    """The settlements, locked for update in id order after their ``cases``, with what they
    correct."""
    rows = (
        Settlement.objects.select_for_update(of=("self",))
        .select_related("corrects")
        .filter(pk__in=ids)
        .order_by("pk")
    )
    found = {}
    for settlement in rows:
        settlement.case = cases[settlement.case_id]
        found[settlement.pk] = settlement
    return found


def entrants_among(case: Case, players: Iterable[str]) -> set[str]:
    players = list(players)
    found: set[str] = set()
    for start in range(0, len(players), 10_000):
        chunk = players[start : start + 10_000]
        found.update(
            CasePlayer.objects.filter(case=case, player__in=chunk).values_list("player", flat=True)
        )
    return found


def checked_time(value: datetime, field: str) -> datetime:
    """A time given to a service, read in the site's zone when it has none, and checked
    against what can be stored and shown (settlements.bounds)."""
    if not isinstance(value, datetime):
        raise DomainError("Give a date and time.", field=field)
    aware = timezone.make_aware(value) if timezone.is_naive(value) else value
    if problem := bounds.time_problem(aware):
        raise DomainError(f"The {field.replace('_', ' ')} {problem}.", field=field)
    return bounds.in_utc(aware)


def required_text(value: str, field: str, *, max_length: int | None = None) -> str:
    text = (value or "").strip()
    if not text:
        raise DomainError(f"Please give the {field.replace('_', ' ')}.", field=field)
    if max_length is not None and len(text) > max_length:
        raise DomainError(
            f"The {field.replace('_', ' ')} must be at most {max_length} characters.", field=field
        )
    return text


def check_amount(value, field: str, *, positive: bool = False, what: str | None = None) -> None:
    what = what or f"The {field.replace('_', ' ')}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise DomainError(f"{what} must be a whole number of minor units.", field=field)
    if value < (1 if positive else 0):
        raise DomainError(
            f"{what} must be {'positive' if positive else 'zero or more'}.", field=field
        )
    if value > MAX_AMOUNT:
        raise DomainError(f"{what} is too large.", field=field)


def check_player_id(player, where: str, *, field: str = "players") -> None:
    """An id typed by a person: present, storable, and what it looks like
    (settlements.player_ids)."""
    if not isinstance(player, str) or not player.strip():
        raise DomainError(f"{where}: give the player id.", field=field)
    if len(player) > ID_MAX_LENGTH:
        raise DomainError(f"{where}: {player[:20]!r}… is not a valid player id.", field=field)
    if problem := player_ids.id_problem(player):
        raise DomainError(f"{where}: the player id {player!r} {problem}.", field=field)


def players_of(case: Case, players: Iterable[str]) -> set[str]:
    """Those of ``players`` the case names: its snapshot's entrants, or the players an
    individual case was opened for."""
    if case.is_crash:
        return entrants_among(case, players)
    return set(players) & set(case.players)


def check_look_alikes(players: Sequence[str], *, field: str) -> None:
    for earlier, later in player_ids.look_alikes(players)[:1]:
        raise DomainError(
            f"{players[later]!r} looks the same as {players[earlier]!r}; name each player "
            "once, by the id the game server uses.",
            field=field,
        )


def refuse_look_alike_tournament(operator_id: str, *, field: str = "operator_id") -> None:
    """Refuse to register a tournament already registered, under this id or one written
    differently (player_ids.tournament_key): paying a look-alike id as a new tournament is
    how one tournament came to be settled twice. The refusal names the case holding the
    tournament, if any, so the user goes to it instead."""
    existing = Tournament.objects.filter(key=player_ids.tournament_key(operator_id)).first()
    if existing is None:
        return
    case = Case.objects.filter(tournament=existing).order_by("-pk").first()
    holder = f"; case #{case.pk} concerns it" if case is not None else ""
    if existing.operator_id == operator_id:
        message = f"Tournament {operator_id} is already registered{holder}."
    else:
        message = (
            f"Tournament {operator_id!r} is tournament {existing.operator_id!r} written "
            f"differently{holder}."
        )
    raise Duplicate(message, existing=case or existing, field=field)


def check_tournament_text(text: str, what: str, *, field: str) -> None:
    """A tournament id or name holds no control, invisible or bidirectional character, as
    snapshots already require (player_ids.id_problem)."""
    if problem := player_ids.id_problem(text):
        raise DomainError(f"The tournament {what} {text!r} {problem}.", field=field)
