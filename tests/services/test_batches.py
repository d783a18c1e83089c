"""A job's batch: the rows it locks are each one item's, and what its items stage is written
at its end as one item at a time would write it."""

import pytest
from django.utils import timezone

from settlements import audit_log
from settlements.models import Case, Job, LedgerRelease, Settlement
from settlements.services import jobs
from settlements.services import settlements as settlement_services
from settlements.services.batches import write_batch
from settlements.services.common import lock_case, save_with_history
from settlements.services.incidents import incident_report
from settlements.services.staging import Batch
from settlements.workflow import CaseStatus
from tests.services.test_jobs import late_cases

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(operator):
    return incident_report(actor=operator, title="DC1", started_at=timezone.now())


def test_a_batch_ends_before_an_item_whose_case_an_earlier_one_holds(
    settings, monkeypatch, operator, incident, snapshot_factory
):
    settings.JOB_WORKERS_PER_JOB = 1
    first, second = late_cases(operator, incident, snapshot_factory, 2)
    sizes = []
    monkeypatch.setattr(jobs, "lock_batch", _counting(jobs.lock_batch, sizes))
    keys = [first, first, second]
    job = jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target="t",
        items=[jobs.NewItem(key=str(case.pk), label=str(case)) for case in keys],
    )
    assert sizes == [1, 2]
    statuses = list(job.items.order_by("position").values_list("status", flat=True))
    assert statuses == ["done", "failed", "done"]
    assert Settlement.objects.filter(case=first).count() == 1
    assert audit_log.verify().ok


def _counting(lock_batch, sizes):
    def counted(job, items, batch):
        taken = lock_batch(job, items, batch)
        sizes.append(len(taken))
        return taken

    return counted


def test_a_row_changed_twice_in_an_item_keeps_both_versions_in_order(
    operator, incident, snapshot_factory
):
    case = late_cases(operator, incident, snapshot_factory, 1)[0]
    batch = Batch()
    batch.hold([Case.objects.select_related("tournament", "incident").get(pk=case.pk)])
    with batch.item():
        held = lock_case(case)
        held.status = CaseStatus.PREPARED
        save_with_history(held, actor=operator, reason="first", fields=("status", "updated_at"))
        held.status = CaseStatus.AWAITING_APPROVAL
        save_with_history(held, actor=operator, reason="second", fields=("status", "updated_at"))
    write_batch(batch)
    versions = case.history.order_by("history_id")
    assert [(v.history_change_reason, v.status) for v in versions][-2:] == [
        ("first", CaseStatus.PREPARED),
        ("second", CaseStatus.AWAITING_APPROVAL),
    ]
    assert {v.history_user for v in versions[1:]} == {operator}
    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_APPROVAL


def test_the_approvals_of_a_batch_take_their_places_one_after_another(
    settings, operator, tournament_manager, incident, snapshot_factory
):
    settings.JOB_WORKERS_PER_JOB = 1
    settlements = []
    for case in late_cases(operator, incident, snapshot_factory, 3):
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        settlements.append(
            settlement_services.settlement_submit(settlement=settlement, actor=operator)
        )
    alone = settlements.pop(0)
    settlement_services.settlement_approve(settlement=alone, actor=tournament_manager, reason="ok")
    job = jobs.job_start(
        kind=Job.Kind.APPROVE,
        actor=tournament_manager,
        target="t",
        items=[jobs.NewItem(key=str(s.pk), label=str(s)) for s in settlements],
        params={"reason": "outage checked"},
    )
    assert jobs.job_progress(job).done == 2
    places = LedgerRelease.objects.order_by("first_position").values_list(
        "settlement_id", "first_position", "last_position"
    )
    assert [pk for pk, _, _ in places] == [alone.pk, *(s.pk for s in settlements)]
    assert all(
        later[1] == earlier[2] + 1 for earlier, later in zip(places, places[1:], strict=False)
    )
    assert places[0][1] == 1
    assert audit_log.verify().ok
