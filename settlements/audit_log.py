"""The tamper-evident event log: a hash chain over the business events.

Each event stores its position (``seq``: 1, 2, 3, … without gaps), the previous event's hash and
its own: SHA-256 over its canonical content and that previous hash, as in Certificate
Transparency's log or a ledger database's digest. Changing, removing or reordering any event
changes every hash after it, so a head hash kept outside the database (the auditor's export)
pins the whole history up to it.

An event also seals what it refers to that must never change (``subjects_facts``): for a
settlement its totals, counts and the ledger's digest (a hash over its lines in line order),
for compensation its totals and the digest of its items, for a crash case its snapshot's
SHA-256. ``verify`` recomputes those from the rows themselves, so a ledger line changed behind
the app's back is found even though no event row was touched.

Writers append under the chain's own transaction-level advisory lock (``hold_chain``, taken
before the head is read, held to commit), so two writers never chain onto the same head. Only
the event-writing step takes it, and services write their events last, so writers on different
records do their work side by side and queue only from their events to their commit. The
unique ``seq`` makes a fork impossible even where that lock does not exist (SQLite's single
writer).
"""

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import groupby
from operator import itemgetter

from django.core import signing
from django.db import connection
from django.db.models import Max, OuterRef, Subquery
from django.utils import timezone

from settlements import job_outcomes, loose_versions, seal_formats, seals, tallies, unaccounted
from settlements.access_record import access_outside_events
from settlements.models import (
    Case,
    Compensation,
    CompensationItem,
    Event,
    IcmValuation,
    IcmValue,
    Settlement,
    SettlementLine,
    Snapshot,
    Tournament,
)
from settlements.seal_formats import icm_digest, items_digest, ledger_digest

GENESIS = "0" * 64
ICM_FIELDS = (
    "position",
    "player",
    "chips",
    "chip_rank",
    "value",
    "amount",
    "standard_error",
    "policy_amount",
    "difference",
)
# Rows hashed per encode/update: whole-string work instead of a call per line.
_CHUNK = 20_000
_ITERATOR_CHUNK = 10_000


def new_ledger_digest(lines: Sequence) -> str:
    """ledger_digest of a new settlement's lines (rules.Line objects numbered from 1, none a
    reversal), written from the lines themselves by columns: no row is built per line to be
    unpacked again, and each chunk is formatted in one pass at C speed."""
    digest = hashlib.sha256()
    for start in range(0, len(lines), _CHUNK):
        chunk = lines[start : start + _CHUNK]
        players = [line.player for line in chunk]
        digest.update(
            "".join(
                map(
                    _NEW_LINE.__mod__,
                    zip(
                        range(start + 1, start + 1 + len(chunk)),
                        map(len, players),
                        players,
                        [line.kind for line in chunk],
                        [line.unit for line in chunk],
                        [line.amount for line in chunk],
                        [line.source for line in chunk],
                        strict=True,
                    ),
                )
            ).encode()
        )
    return digest.hexdigest()


# A line of ledger_digest that is not a reversal, as new_ledger_digest writes it.
_NEW_LINE = "%d\t%d:%s\t%s\t%s\t%d\t%s\t0\n"


def entrants_digest(players: Sequence) -> str:
    """SHA-256 over a crash-snapshot/2 case's entrants (position, player, chips, entries,
    add-ons, bounty), one line each in snapshot order: what RULES.md §8 settles them by. The
    player id is length-prefixed as in ledger_digest. `players` are the snapshot's (objects
    with id, chips, entries, add_ons and bounty), read by columns and formatted a chunk at a
    time at C speed: 300,000 of them are hashed while an upload waits."""
    digest = hashlib.sha256()
    for start in range(0, len(players), _CHUNK):
        chunk = players[start : start + _CHUNK]
        ids = [player.id for player in chunk]
        digest.update(
            "".join(
                map(
                    _ENTRANT_LINE.__mod__,
                    zip(
                        range(start, start + len(chunk)),
                        map(len, ids),
                        ids,
                        [player.chips for player in chunk],
                        [player.entries for player in chunk],
                        [player.add_ons for player in chunk],
                        [player.bounty for player in chunk],
                        strict=True,
                    ),
                )
            ).encode()
        )
    return digest.hexdigest()


_ENTRANT_LINE = "%d\t%d:%s\t%d\t%d\t%d\t%d\n"


def subjects_facts(pairs: Sequence[tuple[object, str]]) -> list[dict]:
    """What each subject is that must never change, as an event of the type about it seals it:
    its totals and digests (its ICM figures too, once valued), and its fields fixed from its
    creation or by the event (settlements.seals). What that reads from other rows (ICM
    figures, releases) is read for them all at once: a job's batch seals its events together."""
    settled = [subject.pk for subject, _ in pairs if isinstance(subject, Settlement)]
    icm = icm_runs(settled) if settled else {}
    found = []
    for (subject, _), fields in zip(pairs, seals.records_facts(pairs), strict=True):
        if isinstance(subject, Settlement):
            run = icm.get(subject.pk)
            facts = _settlement_facts(
                subject, icm=run and run["digest"], icm_run=run and run["run"]
            )
        elif isinstance(subject, Compensation):
            facts = {"totals": subject.totals, "items": subject.items_digest}
        elif isinstance(subject, Case) and subject.snapshot_id is not None:
            facts = {"snapshot": subject.snapshot.sha256}
        else:
            facts = {}
        found.append(facts | fields)
    return found


# What an ICM run was asked and drew from, fixed once it is done: with its figures' digest,
# the seed that reproduces a sampled run.
ICM_RUN_FIELDS = ("method", "seed", "samples", "players", "prizes_in_play")


def icm_runs(settlement_ids) -> dict[int, dict]:
    """{settlement id: {"digest": its done ICM figures' digest, "run": ICM_RUN_FIELDS}}."""
    done = IcmValuation.objects.filter(
        settlement_id__in=settlement_ids, status=IcmValuation.Status.DONE
    )
    return {
        row["settlement_id"]: {
            "digest": row["digest"],
            "run": {name: row[name] for name in ICM_RUN_FIELDS},
        }
        for row in done.values("settlement_id", "digest", *ICM_RUN_FIELDS)
    }


# A record's figures an event seals as they stand, beside the fields seals.py names: the
# archive (exports.incident_record) writes these same columns so that it can be verified.
SEALED_FIGURES = {
    "settlement": ("totals", "line_count", "payout_count", "pool", "pool_distributed", "basis"),
    "compensation": ("totals",),
}


def _settlement_facts(
    settlement: Settlement,
    ledger: str | None = None,
    icm: str | None = None,
    icm_run: dict | None = None,
) -> dict:
    facts = {name: getattr(settlement, name) for name in SEALED_FIGURES["settlement"]}
    facts["ledger"] = settlement.ledger_digest if ledger is None else ledger
    # Only once the ICM figures are written: events sealed before then do not name them.
    if icm is not None:
        facts["icm"] = icm
    if icm_run is not None:
        facts["icm_run"] = icm_run
    # The statement figures, once the engine's basis is kept: an empty basis (an adjustment's,
    # or a settlement's prepared before bases were kept and not yet restored) is not sealed,
    # so that restoring it once (services.bases) breaks no seal.
    if not settlement.basis:
        del facts["basis"]
    return facts


def canonical(event: Event) -> bytes:
    """The bytes an event's hash covers: every field but its own hash, in a fixed form. The
    seal format is covered from format 2 on; events of format 1 were hashed without it."""
    content = {
        "seq": event.seq,
        "prev": event.prev_hash,
        "type": event.type,
        "at": event.at.astimezone(UTC).isoformat(timespec="microseconds"),
        "actor": event.actor_id,
        "incident": event.incident_id,
        "case": event.case_id,
        "tournament": event.tournament_id,
        "subject": [event.subject_type, event.subject_id],
        "reason": event.reason,
        "data": event.data,
        "facts": event.subject_facts,
    }
    return seal_formats.event_bytes(content, event.seal_format)


# Any constant unique to this use among the site's advisory locks (payments has the other).
CHAIN_LOCK = 7_310_002


def hold_chain() -> None:
    """Called inside the writer's transaction, before it reads the head; held to the commit."""
    # SQLite lets one writer at a time into the database: nothing can chain beside it.
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [CHAIN_LOCK])


def seal_all(events: Sequence[Event]) -> None:
    """Chain unsaved events onto the head, in order, the head read once. Call with the
    chain's lock held (``hold_chain``)."""
    seq, previous = head()
    for event in events:
        seq += 1
        event.seq, event.prev_hash = seq, previous
        event.hash = previous = hashlib.sha256(canonical(event)).hexdigest()


def head() -> tuple[int, str]:
    """(number of events, head hash); (0, GENESIS) for an empty log."""
    latest = Event.objects.order_by("-seq").values_list("seq", "hash").first()
    return latest or (0, GENESIS)


@dataclass(frozen=True)
class Verification:
    count: int
    head: str
    problem: str = ""  # empty when the chain and everything it seals check out
    event_id: int | None = None

    @property
    def ok(self) -> bool:
        return not self.problem


def verify(*, after: tuple[int, str] | None = None, upto: int | None = None) -> Verification:
    """Recompute the chain and what it seals; the first event that does not match, if any.

    ``after`` (seq, hash) of an event already verified: check only the events after it (their
    chain from it, and the records they seal), for an auditor's page that stays cheap. Events
    appended while this runs are left for the next verification. ``upto``: stop at that event
    (a background verification goes through the chain in parts). A whole verification also
    counts the payment tallies afresh and looks for confirmations under no batch.
    """
    seq, previous = after or (0, GENESIS)
    last = upto if upto is not None else Event.objects.aggregate(last=Max("seq"))["last"] or 0
    events = Event.objects.filter(seq__gt=seq, seq__lte=last).order_by("seq")
    facts = current_facts(events)
    count, head_hash = seq, previous
    for event in events.iterator(chunk_size=_ITERATOR_CHUNK):
        count += 1
        problem = event_problem(event, count, head_hash, facts)
        if problem:
            return Verification(
                count=count,
                head=event.hash,
                problem=f"Event #{event.pk} (number {event.seq}, {event.type}, "
                f"{event.at.isoformat()}) {problem}.",
                event_id=event.pk,
            )
        head_hash = event.hash
    if after is None and upto is None:
        problem = loose_rows()
        if problem:
            return Verification(count=count, head=head_hash, problem=f"{problem}.")
    return Verification(count=count, head=head_hash)


def loose_rows(since: int | None = None) -> str:
    """What no single event names: running counts that disagree with the rows they count,
    confirmations that belong to no batch, records, lines, releases, memberships, user flags,
    API tokens or history versions no event accounts for, and rows that are not their latest
    version. ``since``: among the rows written after that horizon (row_stamps), but for the
    memberships, flags and tokens, few, and read whole as a removal leaves no stamp."""
    loose = unaccounted.confirmations_outside_batches(since)
    if loose is not None:
        return f"Payment confirmation #{loose} belongs to no batch of confirmations"
    if nameless := (
        unaccounted.rows_outside_events(since)
        or access_outside_events()
        or loose_versions.first_loose_version(since)
    ):
        return f"No event accounts for {nameless}"
    if off := loose_versions.first_row_off_its_version(since):
        return f"The record is not its history: {off}"
    return tallies.tally_problem(since)


def event_problem(event: Event, expected_seq: int, previous: str, facts: "Facts") -> str:
    if event.seq != expected_seq:
        return f"is numbered {event.seq} where {expected_seq} was expected (one is missing)"
    if event.prev_hash != previous:
        return "does not follow the event before it (its previous hash differs)"
    if hashlib.sha256(canonical(event)).hexdigest() != event.hash:
        return "was changed after it was written (its hash no longer matches)"
    sealed = event.subject_facts
    if not sealed:
        return ""
    subject = f"{event.subject_type} #{event.subject_id}"
    current = facts.of(event)
    if current is None:
        if sealed.keys() - {"history"}:
            return f"refers to {subject}, which is gone"
        current = {}
    changed = sorted(
        key for key, value in sealed.items() if key != "history" and current.get(key) != value
    )
    changed += [
        f"history of {label.replace(':', ' #')}"
        for label, (version, digest) in sorted(sealed.get("history", {}).items())
        if facts.history.get((event.seal_format, label, version)) != digest
    ]
    if changed:
        what = f"refers to {subject}, whose" if event.subject_type else "sealed rows whose"
        return f"{what} {', '.join(changed)} no longer match what it sealed"
    return ""


_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[+-]\d{2}:\d{2}|Z)?")
_CODE = re.compile(r"\b[a-z]+(?:_[a-z]+)+\b")


def problem_in_words(problem: str) -> str:
    """A verification's ``problem`` for the person at the screen: the kind of event by its
    name, the time as a reader writes it (UTC), field and row names as words ("payout rows",
    "approved by"). The event's own data keeps the problem as the verifier wrote it."""
    labels = dict(Event.Type.choices)

    def time(match: re.Match) -> str:
        return datetime.fromisoformat(match[0]).astimezone(UTC).strftime("%-d %b %Y, %H:%M:%S UTC")

    def code(match: re.Match) -> str:
        word = match[0]
        return labels[word].lower() if word in labels else word.replace("_", " ")

    return _CODE.sub(code, _ISO_TIME.sub(time, problem))


@dataclass
class Facts:
    """The sealed records as they are now: by subject, their rows' digests by seal format and
    subject, by batch event, and the digests by seal format of records' versions up to each
    version an event sealed."""

    subjects: dict[tuple[str, int], dict]
    rows: dict[tuple[int, str, int], dict]
    batches: dict[int, dict]
    history: dict[tuple[int, str, int], str]
    # Events whose subject has changed since by a later event that seals it afresh (a job
    # retried and finished again): what they sealed is the chain's, not the row's.
    superseded: frozenset[int] = frozenset()

    def of(self, event: Event) -> dict | None:
        if event.pk in self.superseded:
            return event.subject_facts
        if event.subject_type:
            key = (event.subject_type, event.subject_id)
            if (subject := self.subjects.get(key)) is None:
                return None
            return subject | self.rows.get((event.seal_format, *key), {})
        return self.batches.get(event.pk, {})


def current_facts(events) -> Facts:
    """The facts of the records ``events`` seal, as they are now, the digests recomputed from
    the rows. A few queries per kind of record, whatever the number of records. (Also how the
    page-latency benchmark seals the records it copies row by row.)"""

    def sealed(subject_type: str, key: str | None = None):
        chosen = events.filter(subject_type=subject_type).exclude(subject_facts={})
        return (chosen.filter(subject_facts__has_key=key) if key else chosen).values("subject_id")

    facts: dict[tuple[str, int], dict] = {}
    settlement_ids = sealed("settlement")
    ledgers = _digests(
        SettlementLine.objects.filter(settlement_id__in=settlement_ids),
        "settlement_id",
        ("line_no", "player", "kind", "unit", "amount", "source", "reversal"),
        ledger_digest,
    )
    icm_figures = _digests(
        IcmValue.objects.filter(
            valuation__settlement_id__in=settlement_ids,
            valuation__status=IcmValuation.Status.DONE,
        ),
        "valuation__settlement_id",
        ICM_FIELDS,
        icm_digest,
        order="position",
    )
    runs = icm_runs(settlement_ids)
    for settlement in Settlement.objects.filter(pk__in=settlement_ids).iterator():
        run = runs.get(settlement.pk)
        facts["settlement", settlement.pk] = _settlement_facts(
            settlement,
            ledgers.get(settlement.pk, ledger_digest(())),
            icm_figures.get(settlement.pk),
            run and run["run"],
        )
    compensation_ids = sealed("compensation")
    items = _digests(
        CompensationItem.objects.filter(compensation_id__in=compensation_ids),
        "compensation_id",
        ("line_no", "player", "unit", "amount"),
        items_digest,
    )
    compensations = Compensation.objects.filter(pk__in=compensation_ids)
    for pk, totals in compensations.values_list("pk", "totals").iterator():
        facts["compensation", pk] = {"totals": totals, "items": items.get(pk, items_digest(()))}
    snapshots = Snapshot.objects.filter(case__in=sealed("case"))
    for case_id, text in snapshots.values_list("case", "text").iterator(chunk_size=20):
        facts["case", case_id] = {"snapshot": Snapshot.digest(text)}
    for name, model in seals.SEALED_MODELS.items():
        if model is not Tournament:
            for pk, fields in seals.current_records(model, sealed(name)).items():
                facts.setdefault((name, pk), {}).update(fields)
    for pk, outcome in job_outcomes.outcomes(sealed("job")).items():
        facts["job", pk] = outcome
    rows: dict[tuple[int, str, int], dict] = {}
    batches: dict[int, dict] = {}
    history: dict[tuple[int, str, int], str] = {}
    formats = events.order_by().values_list("seal_format", flat=True).distinct()
    for version in sorted(formats):
        _rows_facts(events.filter(seal_format=version), version, facts, rows, batches, history)
    return Facts(facts, rows, batches, history, _superseded(events))


def _superseded(events) -> frozenset[int]:
    """Of ``events``, the ``job_finished`` ones followed by another about the same job."""
    finished = Event.objects.filter(type=Event.Type.JOB_FINISHED)
    latest = finished.filter(subject_id=OuterRef("subject_id")).order_by("-seq").values("seq")[:1]
    earlier = events.filter(type=Event.Type.JOB_FINISHED).exclude(seq=Subquery(latest))
    return frozenset(earlier.values_list("pk", flat=True))


def _rows_facts(events, version: int, subjects, rows, batches, history) -> None:
    """What ``events`` (all sealed in format ``version``) sealed of rows, digested now in
    that format: entrants, payouts, confirmations and versions."""

    def sealed(subject_type: str, key: str):
        chosen = events.filter(subject_type=subject_type, subject_facts__has_key=key)
        return chosen.values("subject_id")

    # Rows of a record that is gone leave it gone: the event says so rather than list fields.
    for name, key, digests in (
        ("settlement", "payout_rows", seals.payout_digests),
        ("case", "entrant_rows", seals.entrant_digests),
    ):
        for pk, digest in digests(sealed(name, key), version).items():
            if (name, pk) in subjects:
                rows.setdefault((version, name, pk), {})[key] = digest
    batches.update(
        seals.confirmation_digests(
            events.filter(type=Event.Type.PAYMENTS_CONFIRMED).values("pk"), version
        )
    )
    wanted: dict[str, set[int]] = {}
    versions = events.filter(subject_facts__has_key="history").values_list(
        "subject_facts__history", flat=True
    )
    for sealed_versions in versions.iterator(chunk_size=_ITERATOR_CHUNK):
        for label, (point, _digest) in sealed_versions.items():
            wanted.setdefault(label, set()).add(point)
    for (label, point), digest in seals.current_history(wanted, version).items():
        history[version, label, point] = digest


def _digests(
    rows, parent: str, fields: tuple[str, ...], digest, order: str = "line_no"
) -> dict[int, str]:
    """One digest per parent over its rows in line order, streamed in one ordered pass."""
    ordered = rows.order_by(parent, order).values_list(parent, *fields)
    return {
        key: digest(row[1:] for row in group)
        for key, group in groupby(ordered.iterator(chunk_size=_ITERATOR_CHUNK), itemgetter(0))
    }


# --- The auditor's page: the last verification, kept in the shared cache ----------------------
# Signed with the site's secret key: the cache is a database table the app's role can write, and
# a forged "verified" must not show.
_CACHE_KEY = "audit-log:verified"
_SIGNING_SALT = "settlements.audit_log"


@dataclass(frozen=True)
class Status:
    count: int
    head: str
    ok: bool
    problem: str
    full_at: datetime | None  # when the whole chain was last recomputed


def remember(result: Verification, *, cache, full_at: str | None = None) -> None:
    """Keep a verification's outcome, keyed by the head it reached; ``full_at`` is when the
    whole chain was last recomputed (default: now, by this verification)."""
    value = {
        "count": result.count,
        "head": result.head,
        "problem": result.problem,
        "full_at": full_at or timezone.now().isoformat(),
    }
    cache.set(_CACHE_KEY, signing.dumps(value, salt=_SIGNING_SALT), None)


def last_verification(*, cache) -> Status | None:
    """The outcome last remembered, as it was (None if none was, or it is not signed by this
    site): no verification is run, so a monitor can ask as often as it likes."""
    try:
        last = signing.loads(cache.get(_CACHE_KEY) or "", salt=_SIGNING_SALT)
    except signing.BadSignature:
        return None
    full_at = datetime.fromisoformat(last["full_at"])
    return Status(last["count"], last["head"], not last["problem"], last["problem"], full_at)


def status(*, cache) -> Status:
    """The log's head and whether it verifies, cheaply: a head already verified is answered
    from the cache; a longer chain is verified from the last verified event on (the events
    added since and what they seal); with nothing verified yet, the whole chain is."""
    count, head_hash = head()
    try:
        last = signing.loads(cache.get(_CACHE_KEY) or "", salt=_SIGNING_SALT)
    except signing.BadSignature:
        last = None
    if last and last["head"] == head_hash and last["count"] == count:
        full_at = datetime.fromisoformat(last["full_at"])
        return Status(count, head_hash, not last["problem"], last["problem"], full_at)
    extends = last and not last["problem"] and last["count"] < count
    result = verify(after=(last["count"], last["head"]) if extends else None)
    full_at = last["full_at"] if extends else timezone.now().isoformat()
    remember(result, cache=cache, full_at=full_at)
    return Status(
        result.count, result.head, result.ok, result.problem, datetime.fromisoformat(full_at)
    )
