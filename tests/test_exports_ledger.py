"""The cashier's ledger CSV: content, formats, and streaming."""

import csv
import inspect
import io

import pytest

from settlements.errors import InvalidTransition
from settlements.exports import ledger
from settlements.money import decimal_amount
from settlements.services import settlements as settlement_services
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.settlements import AdjustmentEntry
from tests.services.helpers import approved, submitted

pytestmark = pytest.mark.django_db


def read(chunks) -> list[dict]:
    return list(csv.DictReader(io.StringIO("".join(chunks))))


def test_an_approved_settlement_exports_every_line(operator, tournament_manager, snapshot_factory):
    settlement = approved(operator, tournament_manager, snapshot_factory, stage="early")
    rows = read(ledger.settlement_ledger_csv(settlement))
    lines = list(settlement.lines.order_by("line_no"))
    assert len(rows) == len(lines) == settlement.line_count
    assert list(rows[0]) == list(ledger.HEADER)
    for row, line in zip(rows, lines, strict=True):
        assert row["idempotency_key"] == f"{settlement.pk}-{line.line_no}"
        assert (row["player"], row["kind"], row["unit"], row["source"]) == (
            line.player,
            line.kind,
            line.unit,
            line.source,
        )
        assert int(row["amount_minor"]) == line.amount
        assert row["amount"] == decimal_amount(line.amount, line.unit, "USD")
        assert row["currency"] == "USD"
        assert row["tournament"] == settlement.case.tournament.operator_id
        # Issue 40: the export says under which rules the amounts were worked out.
        assert row["rulebook"] == str(settlement.case.rulebook_version) == "default v1"
    kinds = {row["kind"] for row in rows}
    assert kinds == {"refund_buy_in", "refund_fee", "prize"}
    assert (
        sum(int(r["amount_minor"]) for r in rows if r["source"] == "house")
        == (settlement.totals["cash"]["house"])
    )


def test_tickets_and_points_carry_no_currency(operator, tournament_manager, snapshot_factory):
    settlement = approved(
        operator, tournament_manager, snapshot_factory, type="satellite", stage="late"
    )
    tickets = [r for r in read(ledger.settlement_ledger_csv(settlement)) if r["unit"] == "tickets"]
    assert tickets
    assert {(r["amount_minor"], r["amount"], r["currency"]) for r in tickets} == {("1", "1", "")}


def test_only_approved_settlements_are_exported(operator, snapshot_factory):
    settlement = submitted(operator, snapshot_factory)
    with pytest.raises(InvalidTransition, match="not approved"):
        ledger.settlement_ledger_csv(settlement)


def test_the_export_streams_in_chunks(operator, tournament_manager, snapshot_factory, monkeypatch):
    settlement = approved(operator, tournament_manager, snapshot_factory, stage="pre", entrants=50)
    monkeypatch.setattr(ledger, "CHUNK_SIZE", 7)
    chunks = ledger.settlement_ledger_csv(settlement)
    assert inspect.isgenerator(chunks)
    pieces = list(chunks)
    # Header chunk aside, 100 lines in pieces of 7 rows: the file never sits whole in memory.
    assert len(pieces) == 15
    assert all(piece.count("\n") <= 8 for piece in pieces)
    assert len(read(pieces)) == settlement.line_count == 100


def test_an_adjustments_reversals_are_negative(
    operator, tournament_manager, second_manager, snapshot_factory
):
    original = approved(operator, tournament_manager, snapshot_factory)
    adjustment = settlement_services.settlement_adjust(
        settlement=original,
        actor=operator,
        reason="misread stack",
        entries=[AdjustmentEntry("p000001", "prize", "cash", -150, "pool")],
    )
    settlement_services.settlement_submit(settlement=adjustment, actor=operator)
    adjustment = settlement_services.settlement_approve(settlement=adjustment, actor=second_manager)
    (row,) = read(ledger.settlement_ledger_csv(adjustment))
    assert (row["idempotency_key"], row["amount_minor"], row["amount"]) == (
        f"{adjustment.pk}-1",
        "-150",
        "-1.50",
    )


def test_approved_compensation_exports_as_house_money(
    operator, tournament_manager, snapshot_factory
):
    settlement = submitted(operator, snapshot_factory)
    compensation = compensation_propose(
        case=settlement.case,
        actor=operator,
        reason="r",
        entries=[CompensationEntry("p000002", 1234), CompensationEntry("p000003", 50, "fpp")],
    )
    with pytest.raises(InvalidTransition):
        ledger.compensation_ledger_csv(compensation)
    compensation = compensation_approve(compensation=compensation, actor=tournament_manager)
    rows = read(ledger.compensation_ledger_csv(compensation))
    assert [
        (r["idempotency_key"], r["kind"], r["source"], r["amount"], r["currency"]) for r in rows
    ] == [
        (f"C{compensation.pk}-1", "compensation", "house", "12.34", "USD"),
        (f"C{compensation.pk}-2", "compensation", "house", "50", ""),
    ]


def test_the_file_name_is_safe(operator, tournament_manager, snapshot_factory):
    settlement = approved(
        operator, tournament_manager, snapshot_factory, tournament_id='Sunday / €100 "Big"'
    )
    name = ledger.ledger_filename(settlement)
    assert name == f"crashdesk-settlement-{settlement.pk}-Sunday_100_Big_.csv"
