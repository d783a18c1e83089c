"""Where the approved lines stand: totals by currency and unit, the running tallies of paid,
failed and re-issued lines, what became of each line, and the auditor's answer whether every
line was paid exactly once.
"""

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, QuerySet

from settlements.models import (
    LedgerRelease,
    PaymentConfirmation,
    PaymentTally,
    Reissue,
    idempotency_key,
)
from settlements.money import MONEY_UNITS, unit_rank
from settlements.selectors.payments.lines import CHUNK_SIZE, LedgerLine
from settlements.workflow import ReissueStatus

Record = LedgerRelease.Record


@dataclass(frozen=True)
class UnitTotal:
    currency: str
    unit: str
    amount: int


def sorted_totals(sums: dict[tuple[str, str], int]) -> list[UnitTotal]:
    """{(currency, unit): amount} as a list, by currency, then in the usual unit order."""
    return [
        UnitTotal(currency, unit, sums[currency, unit])
        for currency, unit in sorted(sums, key=_order)
    ]


def _money_key(currency: str, unit: str) -> tuple[str, str]:
    # Seats and points are counts, not money: they add up across currencies.
    return (currency if unit in MONEY_UNITS else "", unit)


def _order(key: tuple[str, str]) -> tuple:
    currency, unit = key
    return (currency, unit_rank(unit), unit)


def _counter() -> defaultdict:
    return defaultdict(int)


@dataclass
class Reconciliation:
    """Where the lines of some releases stand: counts, and amounts {(currency, unit): amount}
    (the currency empty for seats and points)."""

    lines: int = 0
    paid_lines: int = 0
    failed_lines: int = 0
    reissued_lines: int = 0
    approved: defaultdict = field(default_factory=_counter)
    paid: defaultdict = field(default_factory=_counter)
    failed: defaultdict = field(default_factory=_counter)
    reissued: defaultdict = field(default_factory=_counter)

    @property
    def unconfirmed_lines(self) -> int:
        return self.lines - self.paid_lines - self.failed_lines - self.reissued_lines

    @property
    def unconfirmed(self) -> dict:
        keys = self.approved.keys()
        return {
            key: self.approved[key]
            - self.paid.get(key, 0)
            - self.failed.get(key, 0)
            - self.reissued.get(key, 0)
            for key in keys
        }

    def rows(self) -> list[dict]:
        """One row per currency and unit, in the usual unit order, for the templates."""
        keys = sorted(self.approved, key=_order)
        unconfirmed = self.unconfirmed
        return [
            {
                "currency": currency,
                "unit": unit,
                "approved": self.approved[currency, unit],
                "paid": self.paid.get((currency, unit), 0),
                "failed": self.failed.get((currency, unit), 0),
                "reissued": self.reissued.get((currency, unit), 0),
                "unconfirmed": unconfirmed[currency, unit],
            }
            for currency, unit in keys
        ]


def reconciliation(releases: QuerySet[LedgerRelease]) -> Reconciliation:
    """Paid, failed, re-issued and unconfirmed lines and amounts of ``releases``, from their
    running tallies: one query whatever the number of lines."""
    result = Reconciliation()
    rows = releases.values_list(
        "currency",
        "line_count",
        "totals",
        "tally__paid_lines",
        "tally__failed_lines",
        "tally__reissued_lines",
        "tally__paid",
        "tally__failed",
        "tally__reissued",
    ).order_by()
    for currency, count, totals, paid_n, failed_n, reissued_n, paid, failed, reissued in rows:
        result.lines += count
        result.paid_lines += paid_n or 0
        result.failed_lines += failed_n or 0
        result.reissued_lines += reissued_n or 0
        for target, amounts in (
            (result.approved, totals),
            (result.paid, paid),
            (result.failed, failed),
            (result.reissued, reissued),
        ):
            for unit, amount in (amounts or {}).items():
                target[_money_key(currency, unit)] += amount
    return result


def tallies_agree(releases: QuerySet[LedgerRelease]) -> list[int]:
    """Ids of releases whose running tally differs from a count of their confirmations and
    re-issues: empty when the pages' figures are right. For the auditor's page."""
    ids = list(releases.values_list("pk", flat=True))
    counted: dict[int, list[int]] = {pk: [0, 0, 0] for pk in ids}
    states = _line_states(ids)
    for (release_id, _line_no), state in states.items():
        counted[release_id][("paid", "failed", "reissued").index(state)] += 1
    kept = PaymentTally.objects.filter(release_id__in=ids).values_list(
        "release_id", "paid_lines", "failed_lines", "reissued_lines"
    )
    return sorted(pk for pk, *numbers in kept if counted[pk] != list(numbers))


def _line_states(release_ids: Sequence[int]) -> dict[tuple[int, int], str]:
    """Every confirmed line's state: paid, failed or re-issued."""
    states: dict[tuple[int, int], str] = {}
    confirmations = (
        PaymentConfirmation.objects.filter(release_id__in=release_ids)
        .values_list("release_id", "line_no", "status")
        .iterator(chunk_size=CHUNK_SIZE)
    )
    for release_id, line_no, status in confirmations:
        if states.get((release_id, line_no)) != PaymentConfirmation.Status.PAID:
            states[release_id, line_no] = status
    replaced = Reissue.objects.filter(
        original_release_id__in=release_ids, status=ReissueStatus.APPROVED
    ).values_list("original_release_id", "original_line_no")
    for place in replaced:
        states[place] = "reissued"
    return states


@dataclass(frozen=True, slots=True)
class LinePayment:
    """What became of one line: its state, and the confirmation or re-issue behind it."""

    line: LedgerLine
    state: str  # unconfirmed, paid, failed, reissued
    reference: str = ""
    at: datetime | None = None
    attempts: int = 0
    reissued_as: str = ""


def with_payments(lines: Iterable[LedgerLine]) -> Iterator[LinePayment]:
    """Each line with what the cashier said about it, read a chunk of lines at a time."""
    chunk: list[LedgerLine] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == CHUNK_SIZE:
            yield from _decorate(chunk)
            chunk = []
    if chunk:
        yield from _decorate(chunk)


def _decorate(chunk: list[LedgerLine]) -> Iterator[LinePayment]:
    spans: dict[int, list[int]] = {}
    for line in chunk:
        low, high = spans.setdefault(line.release.id, [line.line_no, line.line_no])
        spans[line.release.id] = [min(low, line.line_no), max(high, line.line_no)]
    said: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    replaced: dict[tuple[int, int], int] = {}
    for release_id, (low, high) in spans.items():
        rows = PaymentConfirmation.objects.filter(
            release_id=release_id, line_no__gte=low, line_no__lte=high
        ).values_list("line_no", "status", "external_reference", "at")
        for line_no, status, reference, at in rows:
            said[release_id, line_no].append((status, reference, at))
        reissues = Reissue.objects.filter(
            original_release_id=release_id,
            original_line_no__gte=low,
            original_line_no__lte=high,
            status=ReissueStatus.APPROVED,
        ).values_list("original_line_no", "pk")
        for line_no, pk in reissues:
            replaced[release_id, line_no] = pk
    for line in chunk:
        place = (line.release.id, line.line_no)
        answers = said.get(place, [])
        replacement = replaced.get(place)
        again = idempotency_key(Record.REISSUE, replacement, 1) if replacement else ""
        state, reference, at, reissued_as = line_outcome(answers, again)
        yield LinePayment(line, state, reference, at, len(answers), reissued_as)


def line_outcome(answers: list[tuple], reissued_as: str) -> tuple[str, str, datetime | None, str]:
    """(state, reference, at, re-issued as) of a line, from the cashier's answers about it
    ((status, reference, at), in any order) and the key of the approved re-issue that replaced
    it ("" for none): paid once any answer says paid; else re-issued; else failed; else
    unconfirmed. The reference and time are the paying answer's, else the latest."""
    paid = next((answer for answer in answers if answer[0] == "paid"), None)
    if paid is not None:
        return "paid", paid[1], paid[2], ""
    if not answers:
        return ("reissued" if reissued_as else "unconfirmed"), "", None, reissued_as
    _, reference, at = max(answers, key=lambda answer: answer[2])
    return ("reissued" if reissued_as else "failed"), reference, at, reissued_as


# --- The auditor's answer -------------------------------------------------------------------


@dataclass(frozen=True)
class ExactlyOnce:
    """Whether every approved line was paid exactly once, counted from the confirmations
    themselves (not the tallies): lines paid twice or more must be none, and every other line
    is paid once, replaced by a re-issue, or still waiting (failed or unconfirmed)."""

    summary: Reconciliation
    paid_twice: int
    tallies_wrong: list[int]

    @property
    def settled(self) -> bool:
        summary = self.summary
        return (
            self.paid_twice == 0
            and not self.tallies_wrong
            and summary.failed_lines == 0
            and summary.unconfirmed_lines == 0
        )


def exactly_once(releases: QuerySet[LedgerRelease]) -> ExactlyOnce:
    paid_twice = (
        PaymentConfirmation.objects.filter(release__in=releases, status="paid")
        .values("release_id", "line_no")
        .annotate(times=Count("id"))
        .filter(times__gt=1)
        .count()
    )
    return ExactlyOnce(reconciliation(releases), paid_twice, tallies_agree(releases))
