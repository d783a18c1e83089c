"""What an event seals of the rows the record rests on, beyond its subject's totals and ledger
(``settlements.audit_log``): the subject's own fields that are fixed once the event happened,
the entrants and payouts as digests, the release that handed its lines to the cashier, the
confirmations a batch recorded, and the history versions written so far. The same facts read
again from the rows as they are now, for ``verify`` to compare.

Which fields of those rows are digested, and how each value is written, is the event's seal
format (``settlements.seal_formats``, where the encodings are spelled out): each event is
verified under the format it was sealed in. Rows are digested as lines of text, one per row,
hashed in chunks as they stream by: a 300,000-entrant snapshot or settlement costs one
formatting pass, no object per row.
"""

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, date, datetime
from functools import cache, partial
from itertools import batched, groupby
from operator import itemgetter

from django.db.models import IntegerField

from settlements import seal_formats
from settlements.models import (
    ApiToken,
    Case,
    CasePlayer,
    Compensation,
    Decision,
    Event,
    IcmValuation,
    Incident,
    LedgerRelease,
    PaymentConfirmation,
    PrizeWithdrawal,
    Reissue,
    RulebookVersion,
    Settlement,
    SettlementPayout,
    Tournament,
)
from settlements.seal_formats import CONFIRMATIONS, ENTRANTS, PAYOUTS, row_line

_CHUNK = 20_000
_ITERATOR_CHUNK = 10_000

T = Event.Type


class Digest:
    """SHA-256 over rows, each written as one line by ``line``, hashed a chunk at a time; or
    ``text`` writes a whole chunk (each row ending in a newline) after a ``header``.

    In format 1, entrants and payouts (ints, text, booleans and None, their parent's id first)
    are written as their tuple's repr by ``row_repr``, other rows by ``row_line``, which writes
    times in UTC whatever zone they were read in. Use ``rows_digest`` for a format's digest.
    """

    def __init__(
        self,
        line: Callable[[tuple], str] = row_line,
        *,
        text: Callable[[Sequence[tuple]], str] | None = None,
        header: str = "",
    ) -> None:
        self._hash = hashlib.sha256(header.encode())
        self._text = text or (lambda rows: "\n".join(map(line, rows)) + "\n")
        self._rows: list[tuple] = []
        self._hashed = 0

    @property
    def count(self) -> int:
        return self._hashed + len(self._rows)

    def add(self, row: tuple) -> None:
        self._rows.append(row)
        if len(self._rows) == _CHUNK:
            self._flush()

    def passing(
        self, rows: Iterable[tuple], *, digested: Iterable[tuple] | None = None
    ) -> Iterator[tuple]:
        """The rows, while the digest takes in a chunk of ``digested`` (the rows themselves by
        default; otherwise as many rows in the order they are sealed in) before each chunk of
        them. Fed to a COPY, the hashing is done while PostgreSQL inserts the chunks already
        sent, instead of before the first one goes (docs/benchmarks.md). Read the digest once
        every row has passed."""
        self._flush()
        sealed = None if digested is None else batched(digested, _CHUNK, strict=False)
        for chunk in batched(rows, _CHUNK, strict=False):
            hashed = chunk if sealed is None else next(sealed, ())
            if len(hashed) != len(chunk):
                raise ValueError("fewer rows to digest than rows passing")
            self._hash_lines(hashed)
            yield from chunk
        if sealed is not None and next(sealed, None) is not None:
            raise ValueError("more rows to digest than rows passing")

    def hexdigest(self) -> str:
        self._flush()
        return self._hash.hexdigest()

    def _flush(self) -> None:
        if self._rows:
            self._hash_lines(self._rows)
            self._rows.clear()

    def _hash_lines(self, rows: Sequence[tuple]) -> None:
        self._hash.update(self._text(rows).encode())
        self._hashed += len(rows)


@cache
def row_repr(model, fields: tuple[str, ...]) -> Callable[[tuple], str]:
    """``repr`` of a row of ``fields`` of ``model``, the same text written by a format read
    off the columns: a column that always holds an int is written with %d, about a third
    quicker than repr for 300,000 entrants (docs/benchmarks.md); any other with %r, as repr does."""
    columns = [model._meta.get_field(name) for name in fields]
    return ("(" + ", ".join("%d" if _always_int(c) else "%r" for c in columns) + ")").__mod__


def _always_int(column) -> bool:
    kind = column.target_field if column.is_relation else column
    return isinstance(kind, IntegerField) and not column.null


def rows_digest(kind: str, version: int | None = None, fields=None) -> Digest:
    """An empty digest of rows of ``kind`` as seal format ``version`` writes them, each row
    holding the fields the format names for it, in its order. A writer passes the ``fields``
    its rows hold, which must be those."""
    form = seal_formats.get(version)
    if fields is not None and tuple(fields) != form.fields[kind]:
        raise ValueError(f"rows of {fields} are not the {kind} seal format {form.version} names")
    return _digest_of(kind, form.version, tuple(seal_formats.RENAMED.items()))()


@cache
def _digest_of(kind: str, version: int, renamed: tuple) -> Callable[[], Digest]:
    """What makes an empty digest of ``kind`` in format ``version``, worked out once for each
    state of the ``renamed`` fields: a verification starts one per record."""
    form = seal_formats.get(version)
    model = _rows_model(kind)
    columns = _columns(model, form.fields[kind])
    if form.encoding == "tagged":
        text = seal_formats.rows_encoder([_kind_of(column) for column in columns])
        return partial(Digest, text=text, header=form.header(kind))
    if kind in (ENTRANTS, PAYOUTS):
        return partial(Digest, row_repr(model, tuple(column.name for column in columns)))
    return Digest


def _rows_model(kind: str):
    if kind.startswith("history:"):
        return VERSIONED_MODELS[kind.removeprefix("history:")].history.model
    return {ENTRANTS: CasePlayer, PAYOUTS: SettlementPayout}.get(kind, PaymentConfirmation)


def _columns(model, names: Iterable[str]) -> list:
    """The model's fields now holding the format's ``names`` (seal_formats.RENAMED): a
    history model's by the names of its audited model."""
    label = getattr(model, "instance_type", model)._meta.model_name
    return [model._meta.get_field(seal_formats.current_name(label, name)) for name in names]


def _current(model, kind: str, version: int) -> list[str]:
    """What to read of the rows for ``kind`` under format ``version``, in its order."""
    return [column.attname for column in _columns(model, seal_formats.get(version).fields[kind])]


def _kind_of(column) -> str:
    if _always_int(column):
        return "int"
    if column.get_internal_type() in ("CharField", "TextField") and not column.null:
        return "str"
    return "any"


def _digests(rows, kind: str, order: str, parents, version: int) -> dict[int, str]:
    """One digest per parent over its rows (its id first, as written) in ``order``, streamed
    in one ordered pass. Each of ``parents`` (the ids of the parents that exist) without a row
    gets the digest of no rows, which is what the event that wrote none sealed: a settlement
    that pays nobody has a digest like any other."""
    parent, *fields = _current(rows.model, kind, version)
    ordered = rows.order_by(parent, order).values_list(parent, *fields)
    result = {}
    for key, group in groupby(ordered.iterator(chunk_size=_ITERATOR_CHUNK), itemgetter(0)):
        digest = rows_digest(kind, version)
        for row in group:
            digest.add(row)
        result[key] = digest.hexdigest()
    if parents is not None:
        empty = rows_digest(kind, version).hexdigest()
        for key in parents.iterator(chunk_size=_ITERATOR_CHUNK):
            result.setdefault(key, empty)
    return result


# The rows writers digest as they write them: what the current seal format names.
ENTRANT_FIELDS = seal_formats.get().fields[ENTRANTS][1:]
CONFIRMATION_FIELDS = seal_formats.get().fields[CONFIRMATIONS]


# --- A subject's own fields --------------------------------------------------------------------

# Fields fixed from the record's creation on.
_FIXED: dict[type, tuple[str, ...]] = {
    Settlement: (
        "case",
        "kind",
        "corrects",
        "currency",
        "stage",
        "remedy",
        "decision",
        "policy",
        "engine_version",
        "entrants",
        "eliminated",
        "remaining",
        "note",
        "loaded_by",
        "prepared_by",
        "prepared_at",
    ),
    Compensation: ("case", "currency", "reason", "proposed_by", "proposed_at"),
    PrizeWithdrawal: (
        "case",
        "player",
        "prize",
        "unit",
        "amount",
        "outcome",
        "reason",
        "decided_by",
        "decided_at",
    ),
    Reissue: (
        "original_release",
        "original_line_no",
        "original_key",
        "case",
        "incident",
        "player",
        "kind",
        "unit",
        "amount",
        "source",
        "currency",
        "reason",
        "proposed_by",
        "proposed_at",
    ),
    # A case's snapshot is sealed by its SHA-256 (audit_log.subject_facts); what the load
    # assessed from it (stage, counts, pool, options) is fixed with it.
    Case: (
        "kind",
        "tournament",
        "incident",
        "crashed_at",
        "started",
        "stage",
        "entrants",
        "eliminated",
        "remaining",
        "paid_places",
        "pool",
        "policy",
        "decision_options",
        "engine_version",
        "entrants_digest",
        "players",
        "description",
        "created_by",
        "created_at",
        # The rulebook version it is settled under, chosen at the load (a trigger keeps it).
        "rulebook_version",
    ),
    Decision: (
        "case",
        "role",
        "option",
        "reason",
        "decided_by",
        "decided_at",
        "reschedule_at",
        "invite_scope",
        "invited_players",
    ),
    Incident: ("title", "started_at", "description", "reported_by", "reported_at"),
    RulebookVersion: (
        "rulebook",
        "number",
        "parameters",
        "text",
        "effective_from",
        "proposed_by",
        "proposed_at",
        "proposal_reason",
    ),
}
_REVIEW = ("status", "approved_by", "rejected_by", "reviewed_at", "review_reason")
# Fields an event of the type makes final: who submitted, approved, rejected, withdrew, closed.
_FINAL: dict[str, tuple[str, ...]] = {
    T.SETTLEMENT_SUBMITTED: ("submitted_by", "submitted_at"),
    T.SETTLEMENT_APPROVED: _REVIEW,
    T.SETTLEMENT_REJECTED: _REVIEW,
    T.COMPENSATION_APPROVED: _REVIEW,
    T.COMPENSATION_REJECTED: _REVIEW,
    T.REISSUE_APPROVED: _REVIEW,
    T.REISSUE_REJECTED: _REVIEW,
    T.PRIZE_WITHDRAWAL_APPROVED: _REVIEW,
    T.PRIZE_WITHDRAWAL_REJECTED: _REVIEW,
    T.CASE_WITHDRAWN: ("status", "withdrawn_by", "withdrawn_at", "withdrawal_reason"),
    T.INDIVIDUAL_CASE_RESOLVED: ("resolved_by", "resolved_at", "outcome"),
    T.INCIDENT_CLOSED: ("closed_by", "closed_at"),
    # Not the status: an approved version may still be withdrawn before it takes effect.
    T.RULEBOOK_VERSION_APPROVED: ("approved_by", "approved_at", "approval_reason"),
    T.RULEBOOK_VERSION_WITHDRAWN: ("status", "withdrawn_by", "withdrawn_at", "withdrawal_reason"),
}
# Every field ever sealed of a model: what verification reads back.
_SEALED = {
    model: tuple(
        dict.fromkeys(
            fixed
            + tuple(
                name
                for names in _FINAL.values()
                for name in names
                if any(f.name == name for f in model._meta.concrete_fields)
            )
        )
    )
    for model, fixed in _FIXED.items()
}
RELEASE_FIELDS = (
    "id",
    "record",
    "first_position",
    "last_position",
    "line_count",
    "case",
    "incident",
    "currency",
    "totals",
    "released_by",
    "released_at",
)
RELEASE_LINK = {
    Settlement: "settlement",
    Compensation: "compensation",
    PrizeWithdrawal: "prize_withdrawal",
    Reissue: "reissue",
}


def _plain(value):
    """A value as JSON keeps it: a time as its UTC ISO text."""
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    return value


def _attnames(model, names: Iterable[str]) -> list[str]:
    return [column.attname for column in _columns(model, names)]


def records_facts(pairs: Sequence[tuple[object, str]]) -> list[dict]:
    """The fields of each subject an event of the type seals, and its release if any: the
    releases of them all read in one query a model, for a job's batch of events."""
    releases = _releases_of(subject for subject, _ in pairs)
    found = []
    for subject, event_type in pairs:
        model = type(subject)
        names = _FIXED.get(model, ()) + tuple(
            name for name in _FINAL.get(event_type, ()) if name in _SEALED.get(model, ())
        )
        facts = {
            name: _plain(getattr(subject, attname))
            for name, attname in zip(names, _attnames(model, names), strict=True)
        }
        if (release := releases.get((model, subject.pk))) is not None:
            facts["release"] = release
        found.append(facts)
    return found


def _releases_of(subjects: Iterable) -> dict[tuple[type, int], dict]:
    """{(model, pk): the release that handed its lines to the cashier} of those released."""
    wanted: dict[type, list[int]] = defaultdict(list)
    for subject in subjects:
        if type(subject) in RELEASE_LINK:
            wanted[type(subject)].append(subject.pk)
    releases = {}
    for model, ids in wanted.items():
        link = f"{RELEASE_LINK[model]}_id"
        rows = LedgerRelease.objects.filter(**{f"{link}__in": ids}).values(link, *RELEASE_FIELDS)
        for row in rows:
            pk = row.pop(link)
            releases[model, pk] = {name: _plain(value) for name, value in row.items()}
    return releases


def current_records(model, ids) -> dict[int, dict]:
    """Every sealed field of the ``model`` rows ``ids`` as they are now, with their release
    (read in the same query)."""
    names = _SEALED[model]
    fields = dict(zip(names, _attnames(model, names), strict=True))
    released = {f"release__{name}": name for name in RELEASE_FIELDS}
    linked = model in RELEASE_LINK
    columns = ("pk", *fields.values(), *(released if linked else ()))
    rows = model.objects.filter(pk__in=ids).values(*columns)
    facts = {}
    for row in rows.iterator(chunk_size=_ITERATOR_CHUNK):
        facts[row["pk"]] = {name: _plain(row[attname]) for name, attname in fields.items()}
        if linked and row["release__id"] is not None:
            facts[row["pk"]]["release"] = {name: _plain(row[key]) for key, name in released.items()}
    return facts


SEALED_MODELS = {model._meta.model_name: model for model in _FIXED} | {"tournament": Tournament}
# Every audited model whose versions events seal: those above, and records whose own fields
# no event seals but whose versions are part of the record (settlements.loose_versions). Not a
# person's profile: a display setting, no business change, writes no event (services.profiles).
VERSIONED_MODELS = SEALED_MODELS | {
    model._meta.model_name: model for model in (ApiToken, IcmValuation)
}


# --- Rows under a parent --------------------------------------------------------------------


def entrant_digests(case_ids, version: int | None = None) -> dict[int, str]:
    return _digests(
        CasePlayer.objects.filter(case_id__in=case_ids),
        ENTRANTS,
        "position",
        Case.objects.filter(pk__in=case_ids).values_list("pk", flat=True),
        version,
    )


def payout_digests(settlement_ids, version: int | None = None) -> dict[int, str]:
    return _digests(
        SettlementPayout.objects.filter(settlement_id__in=settlement_ids),
        PAYOUTS,
        "position",
        Settlement.objects.filter(pk__in=settlement_ids).values_list("pk", flat=True),
        version,
    )


def confirmation_digests(event_ids, version: int | None = None) -> dict[int, dict]:
    """Per batch event, the digest and number of the confirmations recorded under it, in the
    order they were written (ids follow the order of the batch's rows)."""
    rows = PaymentConfirmation.objects.filter(event_id__in=event_ids)
    ordered = rows.order_by("event_id", "id").values_list(
        "event_id", *_current(PaymentConfirmation, CONFIRMATIONS, version)
    )
    result = {}
    for key, group in groupby(ordered.iterator(chunk_size=_ITERATOR_CHUNK), itemgetter(0)):
        digest = rows_digest(CONFIRMATIONS, version)
        for row in group:
            digest.add(row[1:])
        result[key] = {"confirmations": digest.hexdigest(), "confirmation_count": digest.count}
    return result


# --- History versions --------------------------------------------------------------------------


def _versions_of(model, version: int):
    """Every version of ``model`` by record, in order, with the fields seal format ``version``
    digests of them."""
    history = model.history.model
    fields = _current(history, seal_formats.history(model._meta.model_name), version)
    return _versions(history, tuple(fields))


@cache
def _versions(history, fields: tuple[str, ...]):
    """Built once per set of columns, as resolving the forty-odd names of a settlement's
    version cost more than the query (each batch filters a copy of it; the query is compiled
    as it runs)."""
    return history.objects.order_by("id", "history_id").values_list("id", "history_id", *fields)


def history_facts_of(
    groups: Sequence[Iterable], version: int | None = None
) -> list[dict[str, list]]:
    """For each group of records (an event's, of a job's batch of events), each audited
    record's [latest version id, digest of its versions so far] in seal format ``version``;
    the versions of each model read in one query."""
    sealing = seal_formats.get(version)
    version = sealing.version
    # A record whose versions the format names: format 1 predates the rulebooks' records,
    # so an event sealed in it leaves their versions out.
    groups = [
        [
            r
            for r in records
            if VERSIONED_MODELS.get(name := type(r)._meta.model_name) is type(r)
            and seal_formats.history(name) in sealing.fields
        ]
        for records in groups
    ]
    wanted: dict[type, set[int]] = defaultdict(set)
    for records in groups:
        for record in records:
            wanted[type(record)].add(record.pk)
    versions: dict[tuple[type, int], list] = {}
    for model, pks in wanted.items():
        rows = _versions_of(model, version).filter(id__in=pks)
        kind = seal_formats.history(model._meta.model_name)
        for pk, group in groupby(rows.iterator(chunk_size=_ITERATOR_CHUNK), itemgetter(0)):
            digest, last = rows_digest(kind, version), None
            for row in group:
                digest.add(row[2:])
                last = row[1]
            versions[model, pk] = [last, digest.hexdigest()]
    return [
        {
            f"{type(record)._meta.model_name}:{record.pk}": versions[type(record), record.pk]
            for record in records
            if (type(record), record.pk) in versions
        }
        for records in groups
    ]


def current_history(
    wanted: dict[str, set[int]], version: int | None = None
) -> dict[tuple[str, int], str]:
    """The digest in seal format ``version`` of each record's versions up to each version id
    in ``wanted`` ({"model:pk": {version ids}}), as the versions are now; a version gone
    leaves its point out."""
    version = seal_formats.get(version).version
    by_model: dict[str, list[int]] = defaultdict(list)
    for label in wanted:
        name, pk = label.split(":")
        by_model[name].append(int(pk))
    result = {}
    for name, pks in by_model.items():
        values = _versions_of(VERSIONED_MODELS[name], version).filter(id__in=pks)
        for pk, group in groupby(values.iterator(chunk_size=_ITERATOR_CHUNK), itemgetter(0)):
            label, digest = f"{name}:{pk}", rows_digest(seal_formats.history(name), version)
            points = wanted[label]
            for row in group:
                digest.add(row[2:])
                if row[1] in points:
                    result[label, row[1]] = digest.hexdigest()
    return result
