"""The links of the bulk rows (entrants, payouts, ledger lines) to their case or settlement,
and of payment confirmations to their release, batch event and recorder: checked by
PostgreSQL triggers once per statement (settlements.triggers), as strictly as a foreign key
would, for COPY and ORM writes alike. The rows are write-once, so no UPDATE can move one to
another parent (tests/db/test_immutability.py)."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from settlements.models import (
    Case,
    CasePlayer,
    Event,
    LedgerRelease,
    PaymentConfirmation,
    Settlement,
    SettlementLine,
    SettlementPayout,
)
from settlements.services import common
from settlements.services.decisions import decision_record
from settlements.services.payments import ConfirmationEntry, payment_confirm
from settlements.services.settlements import settlement_prepare
from tests.services.helpers import approved, load

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="the triggers exist on PostgreSQL only"
    ),
]


def refused(write) -> str:
    with pytest.raises(IntegrityError) as caught, transaction.atomic():
        write()
    return str(caught.value)


def execute(sql: str, params=()) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def missing_id(model) -> int:
    return (model.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000


@pytest.fixture
def prepared(operator, snapshot_factory) -> Settlement:
    case = load(operator, snapshot_factory, stage="middle", entrants=12)
    return settlement_prepare(case=case, actor=operator)


def test_a_copy_of_lines_for_a_missing_settlement_is_refused(prepared):
    orphan = missing_id(Settlement)
    fields = ("settlement", "line_no", "player", "kind", "unit", "amount", "source", "reversal")
    rows = [(prepared.pk, 900 + n, "p000001", "prize", "cash", 1, "pool", False) for n in range(3)]
    rows.append((orphan, 1, "p000001", "prize", "cash", 1, "pool", False))

    message = refused(lambda: common.insert_rows(SettlementLine, fields, rows))

    assert "settlements_settlement" in message and str(orphan) in message
    assert not SettlementLine.objects.filter(line_no__gte=900).exists()


def test_orm_writes_to_a_missing_parent_are_refused(prepared):
    case_id, settlement_id = missing_id(Case), missing_id(Settlement)
    refused(lambda: CasePlayer.objects.create(case_id=case_id, position=0, player="x", chips=1))
    refused(
        lambda: SettlementPayout.objects.create(
            settlement_id=settlement_id, position=0, player="x", chips=1, cash=1
        )
    )


def test_rows_for_an_existing_parent_are_written(prepared):
    before = prepared.payouts.count()
    SettlementPayout.objects.create(
        settlement=prepared, position=before, player="newcomer", chips=0, cash=1
    )
    assert prepared.payouts.count() == before + 1


def test_a_parent_with_rows_cannot_be_deleted_or_renumbered(prepared):
    # Raw SQL: the ORM's PROTECT would refuse first; this is the database's own guard.
    for table, pk in (
        ("settlements_settlement", prepared.pk),
        ("settlements_case", prepared.case_id),
    ):
        assert "still referenced" in refused(
            lambda table=table, pk=pk: execute(f"DELETE FROM {table} WHERE id = %s", [pk])
        )
        refused(
            lambda table=table, pk=pk: execute(
                f"UPDATE {table} SET id = id + 1000000 WHERE id = %s", [pk]
            )
        )
    assert Settlement.objects.filter(pk=prepared.pk).exists()


def test_a_parent_without_rows_can_change(operator, marketing_manager, snapshot_factory):
    case = load(operator, snapshot_factory, type="freeroll", stage="middle", entrants=12)
    decision_record(
        case=case,
        actor=marketing_manager,
        option="reschedule",
        reason="new date",
        reschedule_at=case.created_at.replace(year=case.created_at.year + 1),
    )
    settlement = settlement_prepare(case=case, actor=operator)
    assert settlement.line_count == 0 and not settlement.payouts.exists()

    assert execute(
        "UPDATE settlements_settlement SET review_reason = 'x' WHERE id = %s", [settlement.pk]
    )
    assert execute("DELETE FROM settlements_settlement WHERE id = %s", [settlement.pk]) == 1


CONFIRMATION_FIELDS = (
    "release",
    "line_no",
    "idempotency_key",
    "player",
    "unit",
    "amount",
    "status",
    "external_reference",
    "at",
    "recorded_at",
    "recorded_by",
    "event",
)


@pytest.fixture
def batch(operator, tournament_manager, cashier, snapshot_factory) -> PaymentConfirmation:
    """One confirmation recorded through the service: its release, event and recorder."""
    settlement = approved(operator, tournament_manager, snapshot_factory, stage="late")
    key = f"{settlement.pk}-1"
    line = settlement.lines.get(line_no=1)
    entry = ConfirmationEntry(key, "paid", "tx-1", timezone.now(), line.amount)
    assert payment_confirm(actor=cashier, confirmations=[entry])[0].outcome == "recorded"
    return PaymentConfirmation.objects.get()


def confirmation_row(batch: PaymentConfirmation, line_no: int, **changes) -> tuple:
    fields = {
        "release": batch.release_id,
        "line_no": line_no,
        "idempotency_key": f"x-{line_no}",
        "player": batch.player,
        "unit": batch.unit,
        "amount": 1,
        "status": "failed",
        "external_reference": "tx-2",
        "at": batch.at,
        "recorded_at": batch.recorded_at,
        "recorded_by": batch.recorded_by_id,
        "event": batch.event_id,
        **changes,
    }
    return tuple(fields[name] for name in CONFIRMATION_FIELDS)


def test_confirmations_of_a_missing_release_or_batch_are_refused(batch, operator):
    wrong = {
        "release": missing_id(LedgerRelease),
        "event": missing_id(Event),
        # An event that exists, but whose actor is not the row's recorder.
        "recorded_by": operator.pk,
    }
    for field, value in wrong.items():
        rows = [confirmation_row(batch, 2), confirmation_row(batch, 3, **{field: value})]

        message = refused(
            lambda rows=rows: common.insert_rows(PaymentConfirmation, CONFIRMATION_FIELDS, rows)
        )

        assert "violates its links" in message and str(value) in message
    assert PaymentConfirmation.objects.count() == 1


def test_confirmations_of_an_existing_release_and_batch_are_written(batch):
    rows = [confirmation_row(batch, 2), confirmation_row(batch, 3)]
    common.insert_rows(PaymentConfirmation, CONFIRMATION_FIELDS, rows)
    assert PaymentConfirmation.objects.count() == 3
