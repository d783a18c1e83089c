"""The cashier's ledger exports: one approved record's lines as CSV, and an incident's whole
payment batch as CSV or JSON. Every export, like the API's feed, is built from
``selectors.payments.approved_lines``, so a line reads the same wherever it is downloaded.

Rows are produced one by one from database iterators and written by exports.spreadsheets, so
a 300,000-line settlement is never held in memory.

Columns: the idempotency key ("<settlement id>-<line no>", "C<compensation id>-<line no>",
"W<prize withdrawal id>-1", "R<re-issue id>-1") lets the cashier's system pay each line
exactly once even when a file is imported twice; ``sequence`` is the line's place in the
feed; ``amount_minor`` is the integer in minor units (seats for tickets, points for FPP) and
``amount`` the same figure as a decimal string in the currency's minor unit; the currency
column is empty for tickets and FPP, which are not money; ``rulebook`` names the version of
the rules the case was settled under. A reversal in an adjustment and a
prize withdrawal take money back: their amounts are negative. The CSV leaves out two of the
feed's fields that repeat on every line of a record (its id, already in the key, and its
approval time): 22 MB of an 810,000-line ledger. Text cells are made safe for
spreadsheets (exports.spreadsheets); the two amounts stay numbers, so a negative amount is
never mistaken for a formula and quoted.
"""

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from decimal import Decimal

import msgspec
from django.utils import timezone

from settlements.errors import InvalidTransition
from settlements.exports.spreadsheets import csv_chunks
from settlements.models import KEY_PREFIXES, Compensation, Incident, LedgerRelease, Settlement
from settlements.money import MONEY_UNITS, currency_exponent, decimal_amount
from settlements.selectors.payments.lines import LedgerLine, Release, approved_lines
from settlements.selectors.payments.reconciliation import UnitTotal, sorted_totals, with_payments
from settlements.workflow import CompensationStatus, SettlementStatus

HEADER = (
    "idempotency_key",
    "sequence",
    "record",
    "settlement",
    "case",
    "incident",
    "tournament",
    "player",
    "kind",
    "unit",
    "amount_minor",
    "amount",
    "currency",
    "source",
    "reissue_of",
    "rulebook",
)
SUMMARY_HEADER = ("total", "currency", "unit", "lines", "amount_minor", "amount")
CHUNK_SIZE = 5000
BATCH_FORMAT = "crashdesk-payment-batch/1"


def line_row(line: LedgerLine) -> tuple:
    """One line in the columns of HEADER."""
    key, offset, head, tail, currency, exponent = _release_row(line.release)
    unit, amount = line.unit, line.amount
    money = unit in MONEY_UNITS
    return (
        f"{key}{line.line_no}",
        offset + line.line_no,
        *head,
        line.player,
        line.kind,
        unit,
        amount,
        # Typed numbers, never text: a negative amount must not be escaped as a formula.
        Decimal(amount).scaleb(-exponent) if money and exponent else amount,
        currency if money else "",
        line.source,
        *tail,
    )


def line_document(line: LedgerLine) -> dict:
    """One line as the API's feed and the JSON batch give it (README, "The cashier's API")."""
    return _line_document(line, _release_document(line.release))


def _line_document(line: LedgerLine, release: dict) -> dict:
    """``line`` as a document, with ``release``, the document of what its release's lines
    share."""
    key, offset, _head, _tail, currency, _exponent = _release_row(line.release)
    unit = line.unit
    return {
        "sequence": offset + line.line_no,
        "idempotency_key": f"{key}{line.line_no}",
        "player": line.player,
        "kind": line.kind,
        "unit": unit,
        "amount": line.amount,
        "currency": currency if unit in MONEY_UNITS else None,
        "source": line.source,
        **release,
    }


def _line_documents(lines: Iterable[LedgerLine]) -> Iterator[dict]:
    """Each line as a document. The lines come grouped by release: what a release's lines share
    (its time written out, above all) is worked out once for all of them, not once per line
    (810,000 lines may share one)."""
    release = shared = None
    for line in lines:
        if line.release is not release:
            release, shared = line.release, _release_document(line.release)
        yield _line_document(line, shared)


def _release_row(release: Release) -> tuple:
    head = (
        release.record,
        release.settlement_id or "",
        release.case_id,
        release.incident_id or "",
        release.tournament,
    )
    tail = (release.reissue_of or "", release.rulebook)
    key = f"{KEY_PREFIXES[release.record]}{release.record_id}-"
    exponent = currency_exponent(release.currency)
    return key, release.first_position - 1, head, tail, release.currency, exponent


def _release_document(release: Release) -> dict:
    return {
        "record": release.record,
        "record_id": release.record_id,
        "settlement": release.settlement_id,
        "compensation": release.compensation_id,
        "case": release.case_id,
        "incident": release.incident_id,
        "tournament": release.tournament,
        "reissue_of": release.reissue_of,
        "approved_at": _utc(release.released_at),
    }


# --- One record's ledger ---------------------------------------------------------------------


def settlement_ledger_rows(settlement: Settlement) -> Iterator[tuple]:
    """The header, then one tuple per line of an approved settlement or adjustment."""
    if settlement.status != SettlementStatus.APPROVED:
        raise InvalidTransition(f"{settlement} is not approved; only approved ones are paid.")
    yield HEADER
    yield from map(line_row, approved_lines(LedgerRelease.objects.filter(settlement=settlement)))


def compensation_ledger_rows(compensation: Compensation) -> Iterator[tuple]:
    """The same columns for an approved compensation, paid by the house."""
    if compensation.status != CompensationStatus.APPROVED:
        raise InvalidTransition(f"{compensation} is not approved; only approved ones are paid.")
    yield HEADER
    releases = LedgerRelease.objects.filter(compensation=compensation)
    yield from map(line_row, approved_lines(releases))


def settlement_ledger_csv(settlement: Settlement) -> Iterator[str]:
    """CSV text in pieces of about CHUNK_SIZE rows, for a StreamingHttpResponse."""
    return _csv_text(settlement_ledger_rows(settlement))


def compensation_ledger_csv(compensation: Compensation) -> Iterator[str]:
    return _csv_text(compensation_ledger_rows(compensation))


def ledger_filename(record: Settlement | Compensation) -> str:
    tournament = re.sub(r"[^A-Za-z0-9._-]+", "_", record.case.tournament.operator_id)[:60]
    kind = "compensation" if isinstance(record, Compensation) else record.kind
    return f"crashdesk-{kind}-{record.pk}-{tournament}.csv"


# --- An incident's payment batch -------------------------------------------------------------


class BatchTotals:
    """Totals by currency and unit over the lines streamed through ``count``."""

    def __init__(self) -> None:
        self.lines = 0
        self._amounts: dict[tuple[str, str], int] = defaultdict(int)
        self._counts: dict[tuple[str, str], int] = defaultdict(int)

    def count(self, lines: Iterable[LedgerLine]) -> Iterator[LedgerLine]:
        for line in lines:
            self.lines += 1
            self._amounts[line.currency, line.unit] += line.amount
            self._counts[line.currency, line.unit] += 1
            yield line

    def totals(self) -> list[tuple[UnitTotal, int]]:
        """(total, number of lines) by currency, then unit."""
        return [
            (total, self._counts[total.currency, total.unit])
            for total in sorted_totals(self._amounts)
        ]


def incident_batch_releases(incident: Incident):
    return LedgerRelease.objects.filter(incident=incident)


def incident_batch_csv(incident: Incident) -> Iterator[str]:
    """Every approved line of the incident, then, after an empty row, its totals by currency
    and unit (each a row starting with "total")."""
    totals = BatchTotals()

    def rows() -> Iterator[tuple]:
        yield HEADER
        yield from map(line_row, totals.count(approved_lines(incident_batch_releases(incident))))
        yield ()
        yield SUMMARY_HEADER
        for total, count in totals.totals():
            amount = decimal_amount(total.amount, total.unit, total.currency)
            yield ("total", total.currency, total.unit, count, total.amount, amount)

    return _csv_text(rows())


def incident_batch_json(incident: Incident) -> Iterator[bytes]:
    """The same batch as one JSON document, streamed: the lines, then the summary (computed
    from the lines as they went out, so it always matches them)."""
    totals = BatchTotals()
    encode = msgspec.json.encode
    head = {
        "format": BATCH_FORMAT,
        "incident": {
            "id": incident.pk,
            "title": incident.title,
            "started_at": _utc(incident.started_at),
        },
        "generated_at": _utc(timezone.now()),
    }
    # The head without its closing brace, then "lines": [...], then "summary": {...}}.
    yield encode(head)[:-1] + b',"lines":['
    pieces: list[bytes] = []
    lines = totals.count(approved_lines(incident_batch_releases(incident)))
    for number, document in enumerate(_line_documents(lines)):
        pieces.append((b"," if number else b"") + encode(document))
        if len(pieces) == CHUNK_SIZE:
            yield b"".join(pieces)
            pieces = []
    summary = {
        "lines": totals.lines,
        "totals": [
            {
                "currency": total.currency or None,
                "unit": total.unit,
                "lines": count,
                "amount": total.amount,
            }
            for total, count in totals.totals()
        ],
    }
    yield b"".join(pieces) + b'],"summary":' + encode(summary) + b"}"


def batch_filename(incident: Incident, extension: str) -> str:
    return f"crashdesk-incident-{incident.pk}-payments.{extension}"


# --- The auditor's export --------------------------------------------------------------------

AUDIT_HEADER = (*HEADER, "state", "external_reference", "confirmed_at", "answers", "reissued_as")


def audit_csv(releases) -> Iterator[str]:
    """Every approved line of ``releases`` with what became of it: paid (with the cashier's
    reference), failed, re-issued (and the key that replaced it), or unconfirmed."""

    def rows() -> Iterator[tuple]:
        yield AUDIT_HEADER
        for payment in with_payments(approved_lines(releases)):
            confirmed = _utc(payment.at) if payment.at is not None else ""
            yield (
                *line_row(payment.line),
                payment.state,
                payment.reference,
                confirmed,
                payment.attempts,
                payment.reissued_as,
            )

    return _csv_text(rows())


# --- Helpers ---------------------------------------------------------------------------------


def _csv_text(rows: Iterator[tuple]) -> Iterator[str]:
    # The size is read at each call, so a test may shrink the pieces.
    return csv_chunks(rows, rows_per_chunk=CHUNK_SIZE)


def _utc(moment: datetime) -> str:
    # Exports stay in UTC whatever the site's zone.
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
