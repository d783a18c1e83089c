"""The cashier's ledger: an approved settlement's (or compensation's) lines as CSV.

Rows are produced one by one from a database iterator and written by settlements.csv_export,
so a 300,000-line settlement is never held in memory.

Columns: the idempotency key ("<settlement id>-<line no>"; "C<compensation id>-<line no>" for
compensation) lets the cashier's system pay each line exactly once even when a file is
imported twice; ``amount_minor`` is the integer in minor units (seats for tickets, points for
FPP) and ``amount`` the same figure as a decimal number in the currency's minor unit; the
currency column is empty for tickets and FPP, which are not money. A reversal in an
adjustment has a negative amount. Text cells are made safe for spreadsheets
(settlements.csv_export); the two amounts stay numbers.
"""

import re
from collections.abc import Iterator
from decimal import Decimal

from settlements.csv_export import csv_chunks
from settlements.errors import InvalidTransition
from settlements.models import Compensation, CompensationItem, LineKind, Settlement, Source
from settlements.money import MONEY_UNITS, decimal_amount
from settlements.workflow import CompensationStatus, SettlementStatus

HEADER = (
    "idempotency_key",
    "settlement",
    "tournament",
    "player",
    "kind",
    "unit",
    "amount_minor",
    "amount",
    "currency",
    "source",
)
CHUNK_SIZE = 5000


def settlement_ledger_rows(settlement: Settlement) -> Iterator[tuple]:
    """The header, then one tuple per line of an approved settlement or adjustment."""
    if settlement.status != SettlementStatus.APPROVED:
        raise InvalidTransition(f"{settlement} is not approved; only approved ones are paid.")
    currency = settlement.currency
    tournament = settlement.case.tournament.operator_id
    yield HEADER
    lines = (
        settlement.lines.order_by("line_no")
        .values_list("line_no", "player", "kind", "unit", "amount", "source", "reversal")
        .iterator(chunk_size=CHUNK_SIZE)
    )
    for line_no, player, kind, unit, amount, source, reversal in lines:
        signed = -amount if reversal else amount
        yield (
            f"{settlement.pk}-{line_no}",
            settlement.pk,
            tournament,
            player,
            kind,
            unit,
            signed,
            Decimal(decimal_amount(signed, unit, currency)),
            currency if unit in MONEY_UNITS else "",
            source,
        )


def compensation_ledger_rows(compensation: Compensation) -> Iterator[tuple]:
    """The same columns for an approved compensation, paid by the house."""
    if compensation.status != CompensationStatus.APPROVED:
        raise InvalidTransition(f"{compensation} is not approved; only approved ones are paid.")
    currency = compensation.currency
    tournament = compensation.case.tournament.operator_id
    yield HEADER
    items = (
        CompensationItem.objects.filter(compensation=compensation)
        .order_by("line_no")
        .values_list("line_no", "player", "unit", "amount")
        .iterator(chunk_size=CHUNK_SIZE)
    )
    for line_no, player, unit, amount in items:
        yield (
            f"C{compensation.pk}-{line_no}",
            "",
            tournament,
            player,
            LineKind.COMPENSATION,
            unit,
            amount,
            Decimal(decimal_amount(amount, unit, currency)),
            currency if unit in MONEY_UNITS else "",
            Source.HOUSE,
        )


def settlement_ledger_csv(settlement: Settlement) -> Iterator[str]:
    """CSV text in pieces of about CHUNK_SIZE rows; refuses at once unless approved."""
    return csv_chunks(settlement_ledger_rows(settlement), rows_per_chunk=CHUNK_SIZE)


def compensation_ledger_csv(compensation: Compensation) -> Iterator[str]:
    return csv_chunks(compensation_ledger_rows(compensation), rows_per_chunk=CHUNK_SIZE)


def ledger_filename(record: Settlement | Compensation) -> str:
    tournament = re.sub(r"[^A-Za-z0-9._-]+", "_", record.case.tournament.operator_id)[:60]
    kind = "compensation" if isinstance(record, Compensation) else record.kind
    return f"crashdesk-{kind}-{record.pk}-{tournament}.csv"
