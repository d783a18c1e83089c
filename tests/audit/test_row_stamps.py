"""Incremental verification told by PostgreSQL's row stamps (settlements.row_stamps): the rows
written after a checkpoint's horizon lead to the older events sealing them, and are searched
for what no event names; rows written before it are not read again, but for the sample.

These tests commit as the desk does (transaction=True): inside one test transaction every row
would carry the same stamp. Horizons are taken after the desk is written, as the cluster's own
oldest running transaction (another test worker's) would otherwise reach back before it.
"""

from functools import partial

import pytest
from django.db import connection
from django.utils import timezone

from settlements import checkpoints, row_stamps
from settlements.models import AuditCheckpoint, Event, Incident, SettlementLine
from settlements.services.checkpoints import checkpoint_record
from settlements.services.incidents import incident_report
from tests.db.conftest import behind_the_apps_back, postgresql_only
from tests.services.helpers import approved

pytestmark = [pytest.mark.django_db(transaction=True), postgresql_only]


def transaction_now() -> int:
    """A transaction id after every one committed so far (it takes one of its own)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_xact_id()::text::bigint")
        return cursor.fetchone()[0]


@pytest.fixture
def desk(users, snapshot_factory):
    return approved(users["operator"], users["tournament_manager"], snapshot_factory)


@pytest.fixture
def checkpoint(desk):
    """A checkpoint whose horizon falls after the whole desk was written."""
    outcome = checkpoints.verify()
    assert outcome.verification.ok
    outcome.horizon = transaction_now()
    return checkpoint_record(outcome=outcome)


def change_a_line(settlement) -> None:
    behind_the_apps_back(
        "UPDATE settlements_settlementline SET amount = amount + 1 "
        "WHERE settlement_id = %s AND line_no = 1",
        [settlement.pk],
    )


def test_only_rows_written_after_a_horizon_are_written_since(users):
    report = partial(incident_report, actor=users["operator"], started_at=timezone.now())
    before = report(title="Before")
    horizon = transaction_now()
    after = report(title="After")
    written = Incident.objects.filter(row_stamps.written_since(Incident, horizon))
    assert list(written.values_list("pk", flat=True)) == [after.pk]
    moved = "UPDATE settlements_incident SET title = 'Moved' WHERE id = %s"
    behind_the_apps_back(moved, [before.pk])
    assert set(written.values_list("pk", flat=True)) == {before.pk, after.pk}


def test_a_horizon_too_far_back_or_ahead_is_out_of_reach():
    now = transaction_now()
    assert row_stamps.reachable(now) == now
    assert row_stamps.reachable(now - row_stamps.REACH - 1) is None
    assert row_stamps.reachable(now + 1_000) is None
    assert row_stamps.reachable(None) is None


def test_a_quiet_desk_reads_no_older_event_again(checkpoint):
    outcome = checkpoints.verify(sample=0)
    assert outcome.verification.ok
    assert outcome.rows_since == checkpoint.horizon and outcome.reread == []
    # Its own horizon: the cluster's oldest running transaction, maybe another test worker's.
    assert outcome.horizon is not None


def test_a_sealed_row_changed_after_the_checkpoint_leads_to_its_older_event(desk, checkpoint):
    change_a_line(desk)
    outcome = checkpoints.verify(sample=0)
    approval = Event.objects.get(type="settlement_approved", subject_id=desk.pk)
    assert approval.seq in outcome.reread and approval.seq <= checkpoint.events
    assert checkpoints.REREAD in outcome.verification.problem
    assert "ledger" in outcome.verification.problem


def test_a_deleted_row_leaves_no_stamp_and_is_found_by_the_sample_or_full(desk, checkpoint):
    line = SettlementLine.objects.filter(settlement=desk).order_by("line_no").last()
    behind_the_apps_back(
        "DELETE FROM settlements_settlementline WHERE settlement_id = %s AND line_no = %s",
        [desk.pk, line.line_no],
    )
    assert checkpoints.verify(sample=0).verification.ok
    assert "ledger" in checkpoints.verify(sample=10_000).verification.problem
    assert "ledger" in checkpoints.verify(full=True).verification.problem


def test_a_row_no_event_names_written_after_the_checkpoint_is_named(desk, checkpoint):
    behind_the_apps_back(
        "UPDATE settlements_case SET status = 'ready' WHERE id = %s", [desk.case_id]
    )
    problem = checkpoints.verify(sample=0).verification.problem
    assert "settlements_case row" in problem


def test_the_horizon_is_signed(checkpoint):
    behind_the_apps_back(
        "UPDATE settlements_auditcheckpoint SET horizon = horizon + 1000 WHERE id = %s",
        [checkpoint.pk],
    )
    assert "was altered" in checkpoints.verify().verification.problem


def test_a_checkpoint_without_a_horizon_leaves_every_row_to_be_read(desk):
    outcome = checkpoints.verify()
    outcome.horizon = None
    checkpoint_record(outcome=outcome)
    assert checkpoints.is_signed(AuditCheckpoint.objects.get())
    after = checkpoints.verify(sample=0)
    assert after.verification.ok and after.rows_since is None and after.reread == []
