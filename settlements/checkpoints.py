"""Incremental verification of the event log, from signed checkpoints.

Every verification ends with a checkpoint (``AuditCheckpoint``): the head it reached, how many
events of each type the chain held, what it read, when. The checkpoint is signed with HMAC-SHA256
under ``AUDIT_CHECKPOINT_KEY``, a setting kept outside the database (SECRET_KEY's own derived
key when unset; ``check --deploy`` says so): whoever can write the tables cannot write a
checkpoint that verifies, so one altered there is caught and named.

The next verification starts from the last checkpoint: it recomputes the events after its head
and what they seal, and, chosen at random each time, ``AUDIT_CHECKPOINT_SAMPLE`` older events
and what they seal, so that a change to old rows cannot count on never being read again; and
whole, as a full one does, what no event names (``audit_log.loose_rows``: rows no event
accounts for, rows that are not their latest version, tallies counted afresh), since a row
changed behind the app's back leaves no event after the checkpoint to lead to it. A
verification with ``full`` (``verify_audit --full``, the auditor's background verification)
reads the whole chain as well.
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

from settlements import audit_log
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

    @property
    def full(self) -> bool:
        return self.since is None


def verify(*, full: bool = False, sample: int | None = None) -> Outcome:
    """Verify the chain from the last checkpoint on (with a sample of the events before it),
    or all of it with ``full`` or when there is no checkpoint yet. Every checkpoint's signature
    is checked first; an altered one fails the verification, named."""
    if problem := altered_problem():
        return Outcome(audit_log.Verification(0, audit_log.GENESIS, f"{problem}."), first=1)
    since = None if full else AuditCheckpoint.objects.order_by("-events", "-pk").first()
    if since is None:
        result = audit_log.verify()
        return Outcome(result, first=1, counts=type_counts(0, result.count) if result.ok else {})
    now = Event.objects.filter(seq=since.events).values_list("hash", flat=True).first()
    if now != since.head:
        found = "is gone" if now is None else f"now has hash {now}"
        problem = (
            f"Checkpoint #{since.pk} verified event {since.events} with hash {since.head}; "
            f"that event {found}: the log was rewritten."
        )
        return Outcome(audit_log.Verification(since.events, since.head, problem), first=1)
    result = audit_log.verify(after=(since.events, since.head))
    outcome = Outcome(result, first=since.events + 1, since=since)
    if not result.ok:
        return outcome
    wanted = settings.AUDIT_CHECKPOINT_SAMPLE if sample is None else sample
    outcome.sampled = sorted(
        secrets.SystemRandom().sample(range(1, since.events + 1), min(wanted, since.events))
    )
    problem = sample_problem(outcome.sampled)
    # What no event names is looked for whole every time (issue 41): a row changed behind the
    # app's back leaves nothing after the checkpoint for the events to find.
    if not problem and (loose := audit_log.loose_rows()):
        problem = f"{loose}."
    if problem:
        outcome.verification = audit_log.Verification(result.count, result.head, problem)
        return outcome
    counts = Counter(since.counts) + Counter(type_counts(since.events, result.count))
    outcome.counts = dict(sorted(counts.items()))
    return outcome


def sample_problem(numbers: list[int]) -> str:
    """The first of the events numbered ``numbers`` that is missing, changed, not chained to
    the event before it, or sealing rows that changed since; "" when all check out."""
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
                f"checked again at random, {problem}."
            )
    if missing := sorted(set(numbers) - found):
        return f"Event number {missing[0]}, checked again at random, is missing from the chain."
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
    )
    checkpoint.signature = sign(checkpoint)
    return checkpoint
