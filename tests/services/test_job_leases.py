"""Item leases: who runs a job's items, a lost worker's items taken over, and no item twice.

The jobs here are queued in django-tasks-db's table (no worker runs them) and driven by hand
through the services a task calls, so each step of a takeover can be looked at.
"""

import threading
from datetime import timedelta

import pytest
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from settlements.models import Event, Job, JobItem, Settlement
from settlements.services import jobs
from settlements.services.snapshots import case_load_snapshot

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("database_tasks")]


def prepare_job(operator, snapshot_factory, count: int) -> Job:
    cases = [
        case_load_snapshot(
            actor=operator, snapshot=snapshot_factory(stage="late", tournament_id=f"T{number}")
        )
        for number in range(count)
    ]
    return jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target="cases",
        items=[jobs.NewItem(key=str(case.pk), label=str(case)) for case in cases],
    )


def run_out(lease: jobs.Lease) -> None:
    """The lease's worker was lost: its time is up."""
    JobItem.objects.filter(pk__in=lease.items).update(
        leased_until=timezone.now() - timedelta(seconds=1)
    )


def waiting_tasks(job: Job):
    from django_tasks_db.models import DBTaskResult

    return DBTaskResult.objects.filter(status="READY", args_kwargs__kwargs__job_id=job.pk)


def test_a_leased_item_is_not_taken_again_until_its_lease_runs_out(
    settings, operator, snapshot_factory
):
    settings.JOB_WORKERS_PER_JOB = 1
    job = jobs.job_begin(job_id=prepare_job(operator, snapshot_factory, 2).pk)
    first = jobs.job_claim(job=job)
    assert len(first.items) == 2
    assert first.until - timezone.now() <= timedelta(seconds=settings.JOB_LEASE_SECONDS)
    assert jobs.job_claim(job=job) is None

    run_out(first)
    second = jobs.job_claim(job=job)
    assert second.items == first.items and second.until > timezone.now()
    assert set(job.items.values_list("attempts", flat=True)) == {2}


def test_a_lost_workers_batch_run_late_does_nothing_its_taker_did(
    settings, operator, snapshot_factory
):
    """Exactly once: the taker runs the items; the lost worker, waking up, finds them done."""
    settings.JOB_WORKERS_PER_JOB = 1
    job = jobs.job_begin(job_id=prepare_job(operator, snapshot_factory, 2).pk)
    lost = jobs.job_claim(job=job)
    run_out(lost)
    taker = jobs.job_claim(job=job)
    jobs.job_step(job=job, lease=taker)
    jobs.job_step(job=job, lease=lost)
    assert jobs.job_finish(job_id=job.pk).done == 2
    assert Settlement.objects.count() == 2
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == 2


def test_an_item_leased_as_often_as_allowed_fails_saying_why(settings, operator, snapshot_factory):
    settings.JOB_WORKERS_PER_JOB, settings.JOB_ITEM_ATTEMPTS = 1, 2
    job = jobs.job_begin(job_id=prepare_job(operator, snapshot_factory, 1).pk)
    for _ in range(2):
        run_out(jobs.job_claim(job=job))
    assert jobs.job_claim(job=job) is None
    item = job.items.get()
    assert (item.status, item.attempts) == (JobItem.Status.FAILED, 2)
    assert item.message == jobs.WORN_OUT.format(attempts=2) and "2 times" in item.message
    progress = jobs.job_finish(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and progress.failed == 1
    assert not Settlement.objects.exists()


def test_a_lease_queues_a_task_for_its_end_when_none_waits(settings, operator, snapshot_factory):
    """Should every worker of the job be lost, that task takes their items over."""
    job = prepare_job(operator, snapshot_factory, 4)
    job = jobs.job_begin(job_id=job.pk)
    # The job's own tasks still wait: a lease adds none.
    waiting = waiting_tasks(job).count()
    jobs.job_claim(job=job)
    assert waiting_tasks(job).count() == waiting
    waiting_tasks(job).delete()
    lease = jobs.job_claim(job=job)
    (deferred,) = waiting_tasks(job)
    assert deferred.run_after == lease.until


def test_a_job_left_with_items_leased_elsewhere_stays_running_and_looks_again_later(
    settings, operator, snapshot_factory
):
    settings.JOB_WORKERS_PER_JOB = 2
    job = jobs.job_begin(job_id=prepare_job(operator, snapshot_factory, 2).pk)
    elsewhere = jobs.job_claim(job=job)
    assert jobs.job_work(job=job) == jobs.FINISHED
    waiting_tasks(job).delete()
    jobs.job_finish(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING
    (later,) = waiting_tasks(job)
    assert later.run_after == elsewhere.until


@pytest.mark.django_db(transaction=True)
def test_a_batch_still_running_keeps_its_items_past_its_lease(settings, operator, snapshot_factory):
    """Its rows are locked: a slow step is not taken over, whatever the lease says."""
    settings.JOB_WORKERS_PER_JOB = 1
    job = jobs.job_begin(job_id=prepare_job(operator, snapshot_factory, 1).pk)
    run_out(jobs.job_claim(job=job))
    holding, release = threading.Event(), threading.Event()

    def batch_mid_step():
        with transaction.atomic():
            JobItem.objects.select_for_update().get(job=job)
            holding.set()
            release.wait(30)
        connection.close()

    running = threading.Thread(target=batch_mid_step)
    running.start()
    try:
        assert holding.wait(30)
        assert jobs.job_claim(job=job) is None
        waiting_tasks(job).delete()
        jobs.job_finish(job_id=job.pk)
        # Looked at again a lease later, not at once in a loop.
        (later,) = waiting_tasks(job)
        assert later.run_after > timezone.now() + timedelta(seconds=settings.JOB_LEASE_SECONDS - 5)
    finally:
        release.set()
        running.join()
    assert jobs.job_claim(job=job) is not None


@pytest.mark.django_db(transaction=True)
def test_a_batch_the_database_fails_under_is_leased_again_at_once(
    settings, monkeypatch, caplog, operator, snapshot_factory
):
    settings.JOB_WORKERS_PER_JOB = 1
    job = jobs.job_begin(job_id=prepare_job(operator, snapshot_factory, 2).pk)
    prepare, failed = jobs.STEPS[Job.Kind.PREPARE], []

    def fails_once(job, item):
        if not failed:
            failed.append(item.pk)
            raise OperationalError("server closed the connection unexpectedly")
        return prepare(job, item)

    monkeypatch.setitem(jobs.STEPS, Job.Kind.PREPARE, fails_once)
    assert jobs.job_work(job=job) == jobs.FINISHED
    assert jobs.job_finish(job_id=job.pk).done == 2
    # The whole batch was rolled back and leased a second time, by the same worker.
    assert set(job.items.values_list("attempts", flat=True)) == {2}
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == 2
    warned = [r for r in caplog.records if r.name == "crashdesk.jobs"]
    assert warned and all(r.levelname == "WARNING" and not r.exc_info for r in warned)


def test_a_retry_gives_its_items_fresh_attempts(settings, operator, snapshot_factory):
    settings.JOB_WORKERS_PER_JOB, settings.JOB_ITEM_ATTEMPTS = 1, 1
    job = jobs.job_begin(job_id=prepare_job(operator, snapshot_factory, 1).pk)
    run_out(jobs.job_claim(job=job))
    assert jobs.job_claim(job=job) is None
    jobs.job_finish(job_id=job.pk)
    jobs.job_retry(job=job, actor=operator)
    assert job.items.values_list("status", "attempts", "leased_until").get() == (
        JobItem.Status.PENDING,
        0,
        None,
    )
    job = jobs.job_begin(job_id=job.pk)
    assert jobs.job_work(job=job) == jobs.FINISHED
    assert jobs.job_finish(job_id=job.pk).done == 1
