"""Incremental verification of the event log, from signed checkpoints.

Every verification ends with a checkpoint (``AuditCheckpoint``): the head it reached, how many
events of each type the chain held, what it read, when. The checkpoint is signed with HMAC-SHA256
under ``AUDIT_CHECKPOINT_KEY``, a setting kept outside the database (SECRET_KEY's own derived
key when unset; ``check --deploy`` says so): whoever can write the tables cannot write a
checkpoint that verifies, so one altered there is caught and named.

The next verification starts from the last checkpoint: it recomputes the events after its head
and what they seal, and, chosen at random each time, ``AUDIT_CHECKPOINT_SAMPLE`` older events
and what they seal, so that a change to old rows cannot count on never being read again. A row
changed behind the app's back leaves no event after the checkpoint to lead to it, so what no
event names (``audit_log.loose_rows``: rows no event accounts for, rows that are not their
latest version, tallies counted afresh) is looked for among every row written since the
checkpoint's horizon, told by PostgreSQL's own stamp on each row (settlements.row_stamps); the
whole record is read instead on SQLite, for a checkpoint without a horizon, or one too many
transactions ago. A verification with ``full`` (``verify_audit --full``, the auditor's
background verification) reads the whole chain and every row.
"""

import hashlib
import hmac
import json
import secrets
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.db.models import Count

from settlements import audit_log, row_stamps, rows_written
from settlements.models import AuditCheckpoint, Event

_DERIVED = b"crashdesk audit checkpoints"


def _keys() -> list[bytes]:
    """The key checkpoints are signed with, then those they may still have been signed with
    (``AUDIT_CHECKPOINT_KEY_FALLBACKS``, while a key is being replaced)."""
    keys = [settings.AUDIT_CHECKPOINT_KEY, *settings.AUDIT_CHECKPOINT_KEY_FALLBACKS]
    keys = [key for key in keys if key]
    if not settings.AUDIT_CHECKPOINT_KEY:
        # Derived rather than SECRET_KEY itself: a signature never hands out the site's key.
        keys.insert(0, hmac.new(settings.SECRET_KEY.encode(), _DERIVED, "sha256").hexdigest())
    return [key.encode() for key in keys]


def content(checkpoint: AuditCheckpoint) -> bytes:
    """The bytes a checkpoint's signature covers: all it says, in a fixed form."""
    return json.dumps(
        {
            "at": checkpoint.at.astimezone(UTC).isoformat(timespec="microseconds"),
            "events": checkpoint.events,
            "head": checkpoint.head,
            "first": checkpoint.first,
            "sampled": checkpoint.sampled,
            "full": checkpoint.full,
            "counts": checkpoint.counts,
        }
        # Checkpoints signed before rows were told by their stamps say nothing of them.
        | {
            name: getattr(checkpoint, name)
            for name in ("horizon", "rows_since")
            if getattr(checkpoint, name) is not None
        },
        sort_keys=True,
        separators=(",", ":"),
    ).encode()


def sign(checkpoint: AuditCheckpoint) -> str:
    return hmac.new(_keys()[0], content(checkpoint), hashlib.sha256).hexdigest()


def is_signed(checkpoint: AuditCheckpoint) -> bool:
    expected = content(checkpoint)
    return any(
        hmac.compare_digest(
            hmac.new(key, expected, hashlib.sha256).hexdigest(), checkpoint.signature
        )
        for key in _keys()
    )


def altered_problem() -> str:
    """The first checkpoint whose signature does not match what it says, named; "" if none."""
    for checkpoint in AuditCheckpoint.objects.order_by("pk").iterator(chunk_size=2000):
        if not is_signed(checkpoint):
            return (
                f"Checkpoint #{checkpoint.pk} (event {checkpoint.events}, "
                f"{checkpoint.at.isoformat()}) was altered: its signature does not match what it "
                "says, or it was signed with a key this site does not hold"
            )
    return ""


@dataclass
class Outcome:
    """What a verification found, and what it read."""

    verification: audit_log.Verification
    first: int  # the first event read in order (1: the whole chain)
    sampled: list[int] = field(default_factory=list)
    since: AuditCheckpoint | None = None  # the checkpoint it went on from
    counts: dict[str, int] = field(default_factory=dict)
    # Every row it could not see was written at or after ``horizon`` (row_stamps); it looked
    # for rows no event names among those written since ``rows_since`` (None: every row).
    horizon: int | None = None
    rows_since: int | None = None
    # Older events read again because a row they seal was written since ``rows_since``.
    reread: list[int] = field(default_factory=list)

    @property
    def full(self) -> bool:
        return self.since is None


def verify(*, full: bool = False, sample: int | None = None) -> Outcome:
    """Verify the chain from the last checkpoint on (with a sample of the events before it),
    or all of it with ``full`` or when there is no checkpoint yet. Every checkpoint's signature
    is checked first; an altered one fails the verification, named."""
    horizon = row_stamps.horizon()
    if problem := altered_problem():
        return Outcome(audit_log.Verification(0, audit_log.GENESIS, f"{problem}."), first=1)
    since = None if full else AuditCheckpoint.objects.order_by("-events", "-pk").first()
    if since is None:
        result = audit_log.verify()
        counts = type_counts(0, result.count) if result.ok else {}
        return Outcome(result, first=1, counts=counts, horizon=horizon)
    now = Event.objects.filter(seq=since.events).values_list("hash", flat=True).first()
    if now != since.head:
        found = "is gone" if now is None else f"now has hash {now}"
        problem = (
            f"Checkpoint #{since.pk} verified event {since.events} with hash {since.head}; "
            f"that event {found}: the log was rewritten."
        )
        return Outcome(audit_log.Verification(since.events, since.head, problem), first=1)
    result = audit_log.verify(after=(since.events, since.head))
    outcome = Outcome(
        result,
        first=since.events + 1,
        since=since,
        horizon=horizon,
        rows_since=row_stamps.reachable(since.horizon),
    )
    if not result.ok:
        return outcome
    wanted = settings.AUDIT_CHECKPOINT_SAMPLE if sample is None else sample
    outcome.sampled = sorted(
        secrets.SystemRandom().sample(range(1, since.events + 1), min(wanted, since.events))
    )
    problem = sample_problem(outcome.sampled)
    # A row changed behind the app's back leaves nothing after the checkpoint for the events
    # to find (issue 41): the rows written since lead to the older events sealing them, and
    # what no event names is looked for among them.
    if not problem and outcome.rows_since is not None:
        sealing = rows_written.sealing_events(outcome.rows_since, upto=since.events)
        drawn = set(outcome.sampled)
        outcome.reread = [number for number in sealing if number not in drawn]
        problem = events_problem(outcome.reread, REREAD)
    if not problem and (loose := audit_log.loose_rows(outcome.rows_since)):
        problem = f"{loose}."
    if problem:
        outcome.verification = audit_log.Verification(result.count, result.head, problem)
        return outcome
    counts = Counter(since.counts) + Counter(type_counts(since.events, result.count))
    outcome.counts = dict(sorted(counts.items()))
    return outcome


SAMPLED = "checked again at random"
REREAD = "read again as a row it seals was written since the last checkpoint"


def sample_problem(numbers: list[int]) -> str:
    return events_problem(numbers, SAMPLED)


def events_problem(numbers: list[int], why: str) -> str:
    """The first of the events numbered ``numbers`` that is missing, changed, not chained to
    the event before it, or sealing rows that changed since, named with ``why`` it was read;
    "" when all check out."""
    numbers = sorted(numbers)
    for start in range(0, len(numbers), _PART):
        if problem := _part_problem(numbers[start : start + _PART], why):
            return problem
    return ""


_PART = 5_000


def _part_problem(numbers: list[int], why: str) -> str:
    events = Event.objects.filter(seq__in=numbers).order_by("seq")
    previous = dict(
        Event.objects.filter(seq__in=[number - 1 for number in numbers]).values_list("seq", "hash")
    )
    previous[0] = audit_log.GENESIS
    facts = audit_log.current_facts(events)
    found = set()
    for event in events.iterator(chunk_size=2000):
        found.add(event.seq)
        problem = audit_log.event_problem(event, event.seq, previous.get(event.seq - 1), facts)
        if problem:
            return (
                f"Event #{event.pk} (number {event.seq}, {event.type}, {event.at.isoformat()}), "
                f"{why}, {problem}."
            )
    if missing := sorted(set(numbers) - found):
        return f"Event number {missing[0]}, {why}, is missing from the chain."
    return ""


def type_counts(after: int, upto: int) -> dict[str, int]:
    """{event type: number} of the events numbered after ``after`` up to ``upto``."""
    events = Event.objects.filter(seq__gt=after, seq__lte=upto).order_by()
    return dict(events.values_list("type").annotate(n=Count("pk")).order_by("type"))


def new_checkpoint(outcome: Outcome, *, at: datetime) -> AuditCheckpoint:
    """The signed checkpoint of a verification that found nothing wrong, not saved yet."""
    result = outcome.verification
    checkpoint = AuditCheckpoint(
        at=at,
        events=result.count,
        head=result.head,
        first=outcome.first,
        sampled=outcome.sampled,
        full=outcome.full,
        counts=outcome.counts,
        horizon=outcome.horizon,
        rows_since=outcome.rows_since,
    )
    checkpoint.signature = sign(checkpoint)
    return checkpoint
