"""PostgreSQL itself refuses to rewrite the record: write-once tables take no UPDATE or DELETE,
approved settlements and compensation take no change at all, and what was computed or proposed
is fixed from the start. Each statement is raw SQL sent as the app's database user."""

import pytest
from django.apps import apps
from django.db import connection

from settlements.models import (
    AuditCheckpoint,
    CasePlayer,
    CompensationItem,
    Event,
    IcmValue,
    LedgerRelease,
    PaymentConfirmation,
    Settlement,
    SettlementLine,
    SettlementPayout,
    SimulationResult,
    Snapshot,
)
from settlements.services import settlements as settlement_services
from settlements.services.snapshots import case_withdraw
from tests.db.conftest import execute, postgresql_only, refused
from tests.services.helpers import load, row_counts, submitted

pytestmark = [pytest.mark.django_db, postgresql_only]

# Each table with a column to set to itself: a change of nothing is refused all the same.
WRITE_ONCE_COLUMNS = {
    model._meta.db_table: model._meta.concrete_fields[-1].column
    for model in apps.get_app_config("settlements").get_models()
    if any(trigger.name == "write_once" for trigger in getattr(model._meta, "triggers", []))
}
WRITE_ONCE = sorted(WRITE_ONCE_COLUMNS)
WRITTEN_ONCE = (
    Snapshot,
    CasePlayer,
    SettlementPayout,
    SettlementLine,
    CompensationItem,
    Event,
    LedgerRelease,
    PaymentConfirmation,
    IcmValue,
    SimulationResult,
    AuditCheckpoint,
)

# The attacks of issue 10, verbatim.
ATTACKS = [
    "UPDATE settlements_settlementline SET amount = amount * 100",
    "DELETE FROM settlements_event",
    "DELETE FROM settlements_historicalsettlement",
    "DELETE FROM settlements_settlementpayout",
    "UPDATE settlements_snapshot SET text = '{}'",
]


def test_every_table_written_once_and_every_history_table_is_guarded():
    models = apps.get_app_config("settlements").get_models()
    histories = {m._meta.db_table for m in models if m.__name__.startswith("Historical")}
    assert set(WRITE_ONCE) == histories | {m._meta.db_table for m in WRITTEN_ONCE}


@pytest.mark.parametrize("sql", ATTACKS)
def test_the_reported_attacks_are_refused(full_desk, app_role, sql):
    before = row_counts()
    assert "Cannot update or delete rows" in refused(sql, role=app_role)
    assert row_counts() == before


@pytest.mark.parametrize("table", WRITE_ONCE)
def test_write_once_tables_refuse_update_and_delete(full_desk, app_role, table):
    (rows,) = _one_row(f"SELECT count(*) FROM {table}")
    assert rows > 0, f"{table} holds no row to try"
    column = WRITE_ONCE_COLUMNS[table]
    update = f'UPDATE {table} SET "{column}" = "{column}"'
    assert "Cannot update or delete" in refused(update, role=app_role)
    assert "Cannot update or delete" in refused(f"DELETE FROM {table}", role=app_role)
    assert _one_row(f"SELECT count(*) FROM {table}") == (rows,)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE settlements_{table} SET status = 'rejected' WHERE id = %s",
        "UPDATE settlements_{table} SET review_reason = 'edited' WHERE id = %s",
        "UPDATE settlements_{table} SET approved_by_id = NULL, status = 'proposed' WHERE id = %s",
        "DELETE FROM settlements_{table} WHERE id = %s",
    ],
)
@pytest.mark.parametrize("table", ["settlement", "compensation", "reissue"])
def test_approved_records_refuse_every_change(full_desk, app_role, table, sql):
    record = full_desk[table]
    before = (record.status, record.review_reason, record.approved_by_id)
    assert "Cannot" in refused(sql.format(table=table), [record.pk], role=app_role)
    record.refresh_from_db()
    assert (record.status, record.review_reason, record.approved_by_id) == before
    assert before[0] == "approved"


def test_what_the_engine_computed_is_fixed_before_approval(operator, app_role, snapshot_factory):
    settlement = submitted(operator, snapshot_factory)
    for assignment in ("totals = '{}'", "pool = pool + 1", "line_count = 0", "note = 'x'"):
        assert "Cannot update" in refused(
            f"UPDATE settlements_settlement SET {assignment} WHERE id = %s",
            [settlement.pk],
            role=app_role,
        )
    # The review is what may still be written: the services do, through the workflow.
    assert execute(
        "UPDATE settlements_settlement SET review_reason = 'looked' WHERE id = %s",
        [settlement.pk],
    )


def test_the_workflow_still_runs_and_corrects_by_new_records(users, snapshot_factory):
    operator, manager = users["operator"], users["tournament_manager"]
    settlement = submitted(operator, snapshot_factory)
    settlement = settlement_services.settlement_approve(settlement=settlement, actor=manager)
    adjustment = settlement_services.settlement_adjust(
        settlement=settlement,
        actor=operator,
        reason="missed a refund",
        entries=[
            settlement_services.AdjustmentEntry(
                player="p000003", kind="refund_fee", unit="cash", amount=100, source="house"
            )
        ],
    )
    adjustment = settlement_services.settlement_submit(settlement=adjustment, actor=operator)
    settlement_services.settlement_approve(settlement=adjustment, actor=users["second_manager"])
    other = load(operator, snapshot_factory, tournament_id="T-withdrawn")
    prepared = settlement_services.settlement_prepare(case=other, actor=operator)
    case_withdraw(case=other, actor=operator, reason="wrong file")
    prepared.refresh_from_db()
    assert prepared.status == "withdrawn"
    assert Settlement.objects.filter(status="approved").count() == 2


def _one_row(sql: str) -> tuple:
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()
