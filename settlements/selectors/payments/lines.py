"""Approved ledger lines: the one read behind the cashier's feed, the incident's payment batch,
every ledger export, and the lines the payment services look up by key.

An approved line is a line of a ``LedgerRelease``: a settlement's or adjustment's lines, a
compensation's items, a withdrawn prize (a debit), or a re-issued line. Each has a place in
the feed's sequence (``position``): its release's first place plus its line number, less one.
``approved_lines`` streams them in that order from any set of releases, optionally between two
places, reading each source table in chunks through its (record, line number) index, so
810,000 lines never sit in memory and a page deep into them costs what the first page does.
"""

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import (
    BigIntegerField,
    Case,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)

from settlements.models import (
    CompensationItem,
    LedgerRelease,
    LineKind,
    PaymentConfirmation,
    PrizeWithdrawal,
    Reissue,
    SettlementLine,
    Source,
    idempotency_key,
)
from settlements.money import MONEY_UNITS

CHUNK_SIZE = 5000

Record = LedgerRelease.Record
# Which table holds a release's lines, by its record.
_TABLE = {
    Record.SETTLEMENT: "settlement",
    Record.ADJUSTMENT: "settlement",
    Record.COMPENSATION: "compensation",
    Record.PRIZE_WITHDRAWAL: "prize_withdrawal",
    Record.REISSUE: "reissue",
}


@dataclass(frozen=True, slots=True)
class Release:
    """What every line of one release shares."""

    id: int
    record: str
    record_id: int
    first_position: int
    line_count: int
    settlement_id: int | None
    compensation_id: int | None
    case_id: int
    incident_id: int | None
    tournament: str
    currency: str
    released_at: datetime
    # A re-issue's line replaces this key, of the failed line.
    reissue_of: str | None
    # The rulebook version the case is settled under ("default v1"; empty for a case kept
    # from before rulebooks).
    rulebook: str

    @property
    def last_position(self) -> int:
        return self.first_position + self.line_count - 1


@dataclass(frozen=True, slots=True)
class LedgerLine:
    release: Release
    line_no: int
    player: str
    kind: str
    unit: str
    # Signed: a reversal or a prize withdrawal takes money back (negative).
    amount: int
    source: str

    @property
    def position(self) -> int:
        return self.release.first_position + self.line_no - 1

    @property
    def key(self) -> str:
        return idempotency_key(self.release.record, self.release.record_id, self.line_no)

    @property
    def currency(self) -> str:
        """The currency of a money amount; empty for seats and points, which are counts."""
        return self.release.currency if self.unit in MONEY_UNITS else ""


def approved_lines(
    releases: QuerySet[LedgerRelease] | None = None,
    *,
    after: int = 0,
    until: int | None = None,
    unconfirmed_only: bool = False,
) -> Iterator[LedgerLine]:
    """The lines of ``releases`` (every release by default) in feed order, from the place
    after ``after`` up to ``until`` included. ``unconfirmed_only`` leaves out every line the
    cashier has said anything about."""
    for group in _groups(_releases(releases, after=after, until=until)):
        yield from _group_lines(group, after=after, until=until, unconfirmed_only=unconfirmed_only)


def last_position() -> int:
    """The highest place handed out (0 before the first release); everything up to it is
    committed once this read sees it (see ``LedgerRelease``)."""
    last = LedgerRelease.objects.order_by("-last_position").values_list("last_position").first()
    return last[0] if last else 0


def lines_of(keys: Iterable[str]) -> dict[str, LedgerLine]:
    """{key: line} for the keys that name an approved line; malformed keys, records never
    approved and line numbers past a record's last are left out. For the payment services,
    which are given keys: one query for the releases, then one per release named (its lines
    read as a range when they are nearly contiguous, as a cashier's batch usually is)."""
    wanted: dict[str, dict[int, list[tuple[str, int]]]] = defaultdict(lambda: defaultdict(list))
    for key in keys:
        parsed = parse_key(key)
        if parsed is not None:
            field_name, record_id, line_no = parsed
            wanted[field_name][record_id].append((key, line_no))
    found: dict[str, LedgerLine] = {}
    if not wanted:
        return found
    condition = Q()
    for field_name, records in wanted.items():
        condition |= Q(**{f"{field_name}__in": list(records)})
    for release in _releases(LedgerRelease.objects.filter(condition), stream=False):
        asked: dict[int, list[str]] = defaultdict(list)
        for key, line_no in wanted[_KEY_FIELD[release.record]][release.record_id]:
            if line_no <= release.line_count:
                asked[line_no].append(key)
        if not asked:
            continue
        table = _TABLE[release.record]
        rows = _READERS[table]([release.record_id], False)
        if table in ("settlement", "compensation"):
            rows = rows.filter(**line_numbers("line_no", list(asked)))
        for _record_id, line_no, player, kind, unit, amount, source in rows:
            if line_no in asked:
                line = LedgerLine(release, line_no, player, kind, unit, amount, source)
                for key in asked[line_no]:
                    found[key] = line
    return found


def line_numbers(field: str, numbers: set[int] | list[int]) -> dict:
    """A filter on ``field`` for these line numbers: a range when they are nearly contiguous
    (a batch of a cashier's confirmations usually is), which the (record, line) index reads
    much faster than a list of a thousand values; the caller drops the few extra rows."""
    low, high = min(numbers), max(numbers)
    if high - low + 1 <= 2 * len(numbers):
        return {f"{field}__gte": low, f"{field}__lte": high}
    return {f"{field}__in": sorted(numbers)}


_PREFIX_FIELDS = {
    "": "settlement_id",
    "C": "compensation_id",
    "W": "prize_withdrawal_id",
    "R": "reissue_id",
}
# The release's column its records' keys name.
_KEY_FIELD = {
    Record.SETTLEMENT: "settlement_id",
    Record.ADJUSTMENT: "settlement_id",
    Record.COMPENSATION: "compensation_id",
    Record.PRIZE_WITHDRAWAL: "prize_withdrawal_id",
    Record.REISSUE: "reissue_id",
}
# ASCII digits only, at most 18 of them (a bigint), whatever str.isdigit would also accept,
# and no leading zero: the feed writes each number one way, so "02-5" or "2-0006" is no key
# it gave out, though int() reads both as line 2-5's numbers.
_KEY = re.compile(r"([CWR]?)([1-9][0-9]{0,17})-([1-9][0-9]{0,17})")


def parse_key(key: str) -> tuple[str, int, int] | None:
    """ "C5-1" -> ("compensation_id", 5, 1); None for anything not written exactly as the
    feed writes a key (``idempotency_key``)."""
    if not isinstance(key, str) or len(key) > 40:
        return None
    match = _KEY.fullmatch(key)
    if match is None:
        return None
    prefix, number, line = match.groups()
    return _PREFIX_FIELDS[prefix], int(number), int(line)


def releases_of(
    *,
    incident: int | None = None,
    case: int | None = None,
    settlement: int | None = None,
    compensation: int | None = None,
) -> QuerySet[LedgerRelease]:
    """The releases of one incident, case, settlement or compensation (all when none given)."""
    releases = LedgerRelease.objects.all()
    for name, value in (
        ("incident", incident),
        ("case", case),
        ("settlement", settlement),
        ("compensation", compensation),
    ):
        if value is not None:
            releases = releases.filter(**{name: value})
    return releases


# --- Reading the releases and their lines -------------------------------------------------------


def _releases(
    releases: QuerySet[LedgerRelease] | None,
    *,
    after: int = 0,
    until: int | None = None,
    stream: bool = True,
) -> Iterator[Release]:
    releases = LedgerRelease.objects.all() if releases is None else releases
    releases = releases.filter(last_position__gt=after)
    if until is not None:
        releases = releases.filter(first_position__lte=until)
    rows = releases.order_by("first_position").values_list(
        "pk",
        "record",
        "settlement_id",
        "compensation_id",
        "prize_withdrawal_id",
        "reissue_id",
        "first_position",
        "line_count",
        "case_id",
        "incident_id",
        "case__tournament__operator_id",
        "currency",
        "released_at",
        "reissue__original_key",
        "reissue__original_release__settlement_id",
        "reissue__original_release__compensation_id",
        "case__rulebook_version__rulebook__key",
        "case__rulebook_version__number",
    )
    # An export may cover thousands of releases; a page or a lookup, a few.
    for row in rows.iterator(chunk_size=2000) if until is None and stream else rows:
        (
            pk,
            record,
            settlement,
            compensation,
            withdrawal,
            reissue,
            first,
            count,
            case,
            incident,
            tournament,
            currency,
            at,
            original,
            original_settlement,
            original_compensation,
            rulebook,
            version,
        ) = row
        yield Release(
            id=pk,
            record=record,
            record_id=settlement or compensation or withdrawal or reissue,
            first_position=first,
            line_count=count,
            settlement_id=settlement or original_settlement,
            compensation_id=compensation or original_compensation,
            case_id=case,
            incident_id=incident,
            tournament=tournament,
            currency=currency,
            released_at=at,
            reissue_of=original,
            rulebook=f"{rulebook} v{version}" if rulebook else "",
        )


def _groups(releases: Iterator[Release]) -> Iterator[list[Release]]:
    """Consecutive releases of one table, about CHUNK_SIZE lines at most per group (a larger
    release alone), so a group's lines take one query however many small records it has."""
    group: list[Release] = []
    lines = 0
    for release in releases:
        joins = (
            group
            and _TABLE[group[0].record] == _TABLE[release.record]
            and lines + release.line_count <= CHUNK_SIZE
        )
        if group and not joins:
            yield group
            group, lines = [], 0
        group.append(release)
        lines += release.line_count
    if group:
        yield group


def _group_lines(
    group: list[Release],
    *,
    after: int = 0,
    until: int | None = None,
    unconfirmed_only: bool = False,
) -> Iterator[LedgerLine]:
    table = _TABLE[group[0].record]
    by_record = {release.record_id: release for release in group}
    rows = _READERS[table](list(by_record), unconfirmed_only)
    if len(group) == 1:
        release = group[0]
        low = max(1, after - release.first_position + 2)
        high = release.line_count
        if until is not None:
            high = min(high, until - release.first_position + 1)
        if low > 1:
            rows = rows.filter(line_no__gte=low)
        if high < release.line_count:
            rows = rows.filter(line_no__lte=high)
        for row in rows.order_by("line_no").iterator(chunk_size=CHUNK_SIZE):
            yield _line(by_record, table, row)
        return
    # Small records together: at most CHUNK_SIZE rows, put in feed order here.
    lines = [_line(by_record, table, row) for row in rows]
    lines.sort(key=lambda line: line.position)
    for line in lines:
        if line.position > after and (until is None or line.position <= until):
            yield line


def _line(by_record: dict[int, Release], table: str, row: tuple) -> LedgerLine:
    record_id, line_no, player, kind, unit, amount, source = row
    return LedgerLine(by_record[record_id], line_no, player, kind, unit, amount, source)


def _not_confirmed(queryset: QuerySet, release_link: str, line_no) -> QuerySet:
    said = PaymentConfirmation.objects.filter(**{release_link: OuterRef(_outer(release_link))})
    return queryset.exclude(Exists(said.filter(line_no=line_no)))


def _outer(release_link: str) -> str:
    return {
        "release__settlement_id": "settlement_id",
        "release__compensation_id": "compensation_id",
        "release__prize_withdrawal_id": "pk",
        "release__reissue_id": "pk",
    }[release_link]


def _settlement_rows(record_ids: list[int], unconfirmed_only: bool) -> QuerySet:
    rows = SettlementLine.objects.filter(settlement_id__in=record_ids)
    if unconfirmed_only:
        rows = _not_confirmed(rows, "release__settlement_id", OuterRef("line_no"))
    signed = Case(
        When(reversal=True, then=-F("amount")), default=F("amount"), output_field=BigIntegerField()
    )
    return rows.annotate(signed=signed).values_list(
        "settlement_id", "line_no", "player", "kind", "unit", "signed", "source"
    )


def _compensation_rows(record_ids: list[int], unconfirmed_only: bool) -> QuerySet:
    rows = CompensationItem.objects.filter(compensation_id__in=record_ids)
    if unconfirmed_only:
        rows = _not_confirmed(rows, "release__compensation_id", OuterRef("line_no"))
    return rows.annotate(kind=Value(LineKind.COMPENSATION), source=Value(Source.HOUSE)).values_list(
        "compensation_id", "line_no", "player", "kind", "unit", "amount", "source"
    )


def _withdrawal_rows(record_ids: list[int], unconfirmed_only: bool) -> QuerySet:
    rows = PrizeWithdrawal.objects.filter(pk__in=record_ids)
    if unconfirmed_only:
        rows = _not_confirmed(rows, "release__prize_withdrawal_id", 1)
    return rows.annotate(
        line_no=Value(1),
        kind=Value(LineKind.PRIZE_WITHDRAWAL),
        signed=ExpressionWrapper(-F("amount"), output_field=BigIntegerField()),
        source=Value(Source.HOUSE),
    ).values_list("pk", "line_no", "player", "kind", "unit", "signed", "source")


def _reissue_rows(record_ids: list[int], unconfirmed_only: bool) -> QuerySet:
    rows = Reissue.objects.filter(pk__in=record_ids)
    if unconfirmed_only:
        rows = _not_confirmed(rows, "release__reissue_id", 1)
    return rows.annotate(line_no=Value(1)).values_list(
        "pk", "line_no", "player", "kind", "unit", "amount", "source"
    )


_READERS = {
    "settlement": _settlement_rows,
    "compensation": _compensation_rows,
    "prize_withdrawal": _withdrawal_rows,
    "reissue": _reissue_rows,
}
