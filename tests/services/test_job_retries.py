"""Transient database errors during a job: retried with back-off, never the job's end."""

from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from settlements import services
from settlements.models import Event, Job, JobItem, Settlement
from settlements.services import job_retries, jobs
from settlements.tasks import run_job

# Outside a test transaction: a retry needs the connection of its own, as in a worker.
pytestmark = pytest.mark.django_db(transaction=True)

DB_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


@pytest.fixture(autouse=True)
def queued_tasks(settings):
    settings.TASKS = DB_TASKS
    settings.JOB_RETRIES = 3
    settings.JOB_RETRY_MILLISECONDS = 1


def prepare_job(operator, snapshot_factory, count: int) -> Job:
    cases = [
        services.case_load_snapshot(
            actor=operator, snapshot=snapshot_factory(stage="late", tournament_id=f"T{number}")
        )
        for number in range(count)
    ]
    return jobs.job_start(
        kind=Job.Kind.PREPARE, actor=operator, target="t",
        items=[jobs.NewItem(key=str(case.pk), label=str(case)) for case in cases],
    )  # fmt: skip


def flaky_prepare(monkeypatch, fails: dict[str, int]):
    """Make the prepare step of the item keys in ``fails`` raise a database error that many
    times (after its service has written, so the rollback is what keeps it whole)."""
    prepare = jobs.STEPS[Job.Kind.PREPARE]

    def step(job, item):
        outcome = prepare(job, item)
        if fails.get(item.key, 0) > 0:
            fails[item.key] -= 1
            raise OperationalError("server closed the connection unexpectedly")
        return outcome

    monkeypatch.setitem(jobs.STEPS, Job.Kind.PREPARE, step)


def test_an_item_interrupted_by_the_database_is_retried_and_done_once(
    monkeypatch, operator, snapshot_factory
):
    job = prepare_job(operator, snapshot_factory, 3)
    second = job.items.get(position=2)
    flaky_prepare(monkeypatch, {second.key: 2})
    outcome = run_job.call(job_id=job.pk, token=job.run_token)
    job.refresh_from_db()
    assert outcome["done"] == 3 and (job.status, job.error) == (Job.Status.DONE, "")
    assert Settlement.objects.count() == 3
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == 3


def test_an_item_that_keeps_failing_so_fails_alone_after_its_retries(
    monkeypatch, operator, snapshot_factory
):
    job = prepare_job(operator, snapshot_factory, 3)
    second = job.items.get(position=2)
    flaky_prepare(monkeypatch, {second.key: 99})
    outcome = run_job.call(job_id=job.pk, token=job.run_token)
    job.refresh_from_db()
    second.refresh_from_db()
    assert (second.status, second.message) == (JobItem.Status.FAILED, job_retries.DATABASE_TROUBLE)
    assert (outcome["done"], outcome["failed"]) == (2, 1) and job.status == Job.Status.DONE
    # 1 try and 3 retries, each rolled back whole.
    assert Settlement.objects.count() == 2
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == 2


def test_a_database_out_of_reach_leaves_the_job_to_the_recovery(
    monkeypatch, operator, snapshot_factory
):
    job = prepare_job(operator, snapshot_factory, 2)

    def unreachable(*, job):
        raise job_retries.StepInterrupted(None) from OperationalError("connection refused")

    monkeypatch.setattr(jobs, "job_step", unreachable)
    assert run_job.call(job_id=job.pk, token=job.run_token) == {"ran": False, "interrupted": True}
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.RUNNING, "")

    monkeypatch.undo()
    later = timezone.now() + timedelta(seconds=600)
    assert jobs.job_recover_stale(now=later) == [job.pk]
    job.refresh_from_db()
    assert run_job.call(job_id=job.pk, token=job.run_token)["done"] == 2
    job.refresh_from_db()
    assert (job.status, job.attempts) == (Job.Status.DONE, 2)


def test_the_jobs_bookkeeping_is_retried_too(monkeypatch, operator, snapshot_factory):
    job = prepare_job(operator, snapshot_factory, 1)
    begin, failures = jobs.job_begin, [OperationalError("terminating connection")]

    def begin_after_a_drop(**kwargs):
        if failures:
            raise failures.pop()
        return begin(**kwargs)

    monkeypatch.setattr(services, "job_begin", begin_after_a_drop)
    assert run_job.call(job_id=job.pk, token=job.run_token)["done"] == 1


def test_a_database_blip_while_looking_for_lost_jobs_is_a_warning(monkeypatch, caplog):
    """An operator's alerts fire on errors: a database that drops a connection for a moment is
    expected, and the look goes on from a new connection, so it is logged without a traceback."""
    import logging
    import threading

    from settlements.management.commands.run_worker import Command

    def blip():
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(services, "job_recover_stale", blip)
    stop = threading.Event()
    stop.set()
    with caplog.at_level(logging.WARNING, logger="crashdesk.jobs"):
        Command()._sweep(stop)
    records = [r for r in caplog.records if r.name == "crashdesk.jobs"]
    assert [(r.levelno, r.exc_info) for r in records] == [(logging.WARNING, None)]
