"""Helpers every service shares: saving a versioned row with its actor and reason, recording
the business event, locking rows in the one order, bulk inserts and argument checks.
"""

import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime

import psycopg
from django.db import connection, transaction
from django.utils import timezone

from settlements import audit_log, bounds, change_mark, player_ids, seals
from settlements.errors import DomainError
from settlements.models import (
    ID_MAX_LENGTH,
    Case,
    CasePlayer,
    Event,
    Incident,
    Settlement,
    Tournament,
)

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
        # The raw psycopg cursor skips Django's error translation; a refused row must still
        # surface as IntegrityError.
        with (
            connection.wrap_database_errors,
            connection.cursor() as cursor,
            cursor.cursor.copy(sql) as copy,
        ):
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
        connection.ensure_connection()
        with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
            cursor.executemany(sql, rows)
        return
    attnames = [model._meta.get_field(name).attname for name in fields]
    model.objects.bulk_create(model(**dict(zip(attnames, row, strict=True))) for row in rows)


def save_with_history(instance, *, actor, reason: str, fields: Sequence[str] = ()) -> None:
    """Save a versioned row with the actor and reason recorded on its history version.
    ``fields``: the only columns the change sets (the row locked and read in the same
    transaction), written alone; the version still records the whole row."""
    instance._history_user = actor
    instance._change_reason = reason
    instance.save(update_fields=fields or None)


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
    subject, its case and the ``sealed`` records it changed too."""
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
        subject_facts={
            **(audit_log.subject_facts(subject, event_type) if subject is not None else {}),
            **(facts or {}),
        },
    )
    versions = seals.history_facts(dict.fromkeys(r for r in (subject, case, *sealed) if r))
    if versions:
        event.subject_facts["history"] = versions
    held = _held_events.get()
    if held is not None:
        held.append(event)
        return event
    write_events([event])
    return event


# Events recorded under ``events_held``: built (with everything they seal) but not chained yet.
_held_events: ContextVar[list[Event] | None] = ContextVar("held_events", default=None)


@contextmanager
def events_held() -> Iterator[list[Event]]:
    """Hold the events recorded inside, complete but unchained, in the list it yields, for
    ``write_events`` to chain later in the same transaction (a job's batch of items chains
    its events at its end, so that the commit-order lock is held from there to the commit
    rather than from its first item). Events recorded inside and never written are lost with
    the savepoint that dropped the rest of their work."""
    held: list[Event] = []
    token = _held_events.set(held)
    try:
        yield held
    finally:
        _held_events.reset(token)


def write_events(events: Sequence[Event]) -> None:
    """Chain ``events`` onto the head, in order, and insert them in one statement."""
    if not events:
        return
    # Event ids key the dashboard's cache, so they must follow commit order (see change_mark);
    # the same lock makes this transaction the only one chaining onto the head until it commits.
    change_mark.hold_commit_order()
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

    Their foreign keys are checked at commit, under the commit-order lock; a writer that
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
    """The case, locked for update, its incident share-locked first."""
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
    # The snapshot text (up to tens of MB) is loaded only by the service that parses it.
    return (
        Case.objects.select_for_update(of=("self",))
        .select_related("tournament", "incident", "snapshot")
        .defer("snapshot__text")
        .get(pk=case_id)
    )


def lock_settlement(settlement: Settlement) -> tuple[Case, Settlement]:
    """The settlement's incident (shared), its case, then the settlement, locked in that order."""
    case_id, incident_id = Settlement.objects.values_list("case_id", "case__incident_id").get(
        pk=settlement.pk
    )
    hold_parents(incidents=[incident_id])
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
