"""The real database worker (``manage.py run_worker``) in its own process, on PostgreSQL."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from settlements.models import Case, Event, Job, Settlement
from settlements.services import jobs
from settlements.services.snapshots import case_load_snapshot

# Slow: each test starts manage.py run_worker in a fresh process.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("database_tasks"),
]

ROOT = Path(__file__).resolve().parents[2]


def worker(*extra: str) -> subprocess.Popen:
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    # The workers share the test's number of tasks a job runs as, by which they share its items.
    # A worker waits as long as a test holds the row it needs (see ``hold_cases``).
    env = {
        "DATABASE_LOCK_TIMEOUT_MS": "600000",
        **os.environ,
        "DATABASE_URL": url,
        "JOB_WORKERS_PER_JOB": str(settings.JOB_WORKERS_PER_JOB),
        "JOB_LEASE_SECONDS": str(settings.JOB_LEASE_SECONDS),
    }
    command = [sys.executable, "manage.py", "run_worker", "--no-reload", "--no-startup-delay"]
    return subprocess.Popen(
        [*command, "--interval", "0.2", *extra],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def prepare_job(operator, snapshot_factory, entrants: int) -> Job:
    case = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(stage="middle", entrants=entrants)
    )
    return jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target=f"case:{case.pk}",
        items=[jobs.NewItem(key=str(case.pk), label=str(case))],
    )


class hold_cases:
    """Lock the cases' rows from a connection of its own until ``release``: a worker whose
    batch needs one waits there, in the middle of its batch, its items' rows locked."""

    def __init__(self, *cases):
        db = connection.settings_dict
        self.connection = psycopg.connect(
            host=db["HOST"], port=db["PORT"], user=db["USER"], dbname=db["NAME"]
        )
        self.connection.execute(
            f"SELECT 1 FROM {Case._meta.db_table} WHERE id = ANY(%s) FOR UPDATE",
            [[case.pk for case in cases]],
        )

    def release(self) -> None:
        # Its connection may have been terminated by the test meanwhile, which released it.
        with contextlib.suppress(psycopg.Error):
            self.connection.rollback()
        self.connection.close()


def lock_waiters() -> int:
    """How many other backends of the test database wait for a lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
            " AND datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def waiting_for_a_lock() -> bool:
    return lock_waiters() > 0


def job_over(job: Job):
    return lambda: Job.objects.get(pk=job.pk).status not in Job.ACTIVE


def no_task_running() -> bool:
    from django_tasks_db.models import DBTaskResult

    return not DBTaskResult.objects.filter(status="RUNNING").exists()


def test_the_worker_runs_a_queued_job(operator, snapshot_factory):
    job = prepare_job(operator, snapshot_factory, 50)
    assert job.status == Job.Status.QUEUED
    assert worker("--batch").wait(timeout=120) == 0
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.items.get().attempts == 1
    assert Settlement.objects.count() == 1


def test_a_worker_killed_mid_step_leaves_nothing_and_the_job_runs_again(
    settings, operator, snapshot_factory
):
    settings.JOB_LEASE_SECONDS = 2
    job = prepare_job(operator, snapshot_factory, 2_000)
    # Holding the case's row stops the worker in the middle of its batch, its item leased.
    held = hold_cases(Case.objects.get())
    try:
        process = worker()
        try:
            wait_for(waiting_for_a_lock, process, "the batch")
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
    finally:
        held.release()
    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING
    assert not Settlement.objects.exists()
    assert not Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).exists()

    # Another worker takes the item over once its lease ran out, and runs the job to the end.
    other = worker()
    try:
        wait_for(job_over(job), other, "the item taken over")
        wait_for(no_task_running, other, "the lost task's row to end")
    finally:
        other.terminate()
        other.wait(timeout=30)
    job.refresh_from_db()
    assert (job.status, job.items.get().attempts) == (Job.Status.DONE, 2)
    assert Settlement.objects.count() == 1
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == 1


def wait_for(condition, process: subprocess.Popen, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, f"the worker stopped before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_worker_whose_connections_are_terminated_mid_job_goes_on(operator, snapshot_factory):
    cases = [
        case_load_snapshot(
            actor=operator,
            snapshot=snapshot_factory(stage="middle", entrants=30, tournament_id=f"T{number}"),
        )
        for number in range(6)
    ]
    job = jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target="cases",
        items=[jobs.NewItem(key=str(case.pk), label=str(case)) for case in cases],
    )
    # The last case's row, held here, stops the worker in the middle of the batch that has it.
    held = hold_cases(cases[-1])
    process = worker()
    try:
        wait_for(waiting_for_a_lock, process, "the last item's batch")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            assert cursor.fetchone()[0] >= 1
        held.release()
        wait_for(job_over(job), process, "the end of the job")
        assert process.poll() is None, "the worker should go on after its connection dropped"
    finally:
        held.release()
        process.terminate()
        process.wait(timeout=30)
    job.refresh_from_db()
    # The worker went on with it: no stop, every item done once, the interrupted batch's
    # items leased a second time.
    assert (job.status, job.error) == (Job.Status.DONE, "")
    assert set(job.items.values_list("attempts", flat=True)) <= {1, 2}
    assert set(job.items.values_list("status", flat=True)) == {"done"}
    assert Settlement.objects.count() == len(cases)
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == len(cases)


def test_four_workers_share_a_job_and_do_no_item_twice(settings, operator, snapshot_factory):
    settings.JOB_WORKERS_PER_JOB = 4
    cases = [
        case_load_snapshot(
            actor=operator,
            snapshot=snapshot_factory(stage="middle", entrants=30, tournament_id=f"T{number}"),
        )
        for number in range(12)
    ]
    job = jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target="cases",
        items=[jobs.NewItem(key=str(case.pk), label=str(case)) for case in cases],
    )
    # The cases' rows, held here, stop each worker in the middle of its first batch: four
    # waiting at once are four workers holding four different batches of the one job.
    held = hold_cases(*cases)
    processes = [worker("--batch", "--worker-id", f"w{number}") for number in range(4)]
    try:
        wait_for(lambda: lock_waiters() == 4, processes[0], "four workers at work")
        held.release()
        assert [process.wait(timeout=180) for process in processes] == [0, 0, 0, 0]
    finally:
        held.release()
        for process in processes:
            process.kill()
            process.wait(timeout=30)
    from django_tasks_db.models import DBTaskResult

    tasks = DBTaskResult.objects.filter(args_kwargs__kwargs__job_id=job.pk)
    assert sorted(worker for task in tasks for worker in task.worker_ids) == [
        "w0",
        "w1",
        "w2",
        "w3",
    ]
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    assert set(job.items.values_list("attempts", flat=True)) == {1}
    assert set(job.items.values_list("status", flat=True)) == {"done"}
    prepared = Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED)
    assert sorted(prepared.values_list("case_id", flat=True)) == sorted(c.pk for c in cases)
    assert Settlement.objects.count() == len(cases)


def test_an_idle_worker_looks_for_work_as_often_as_the_setting_says(settings):
    from django.core.management import load_command_class

    settings.JOB_POLL_MILLISECONDS = 150
    command = load_command_class("settlements", "run_worker")
    options = command.create_parser("manage.py", "run_worker").parse_args([])
    assert options.interval == 0.15


def six_cases_job(operator, snapshot_factory) -> tuple[Job, list]:
    cases = [
        case_load_snapshot(
            actor=operator,
            snapshot=snapshot_factory(stage="middle", entrants=30, tournament_id=f"T{number}"),
        )
        for number in range(6)
    ]
    job = jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target="cases",
        items=[jobs.NewItem(key=str(case.pk), label=str(case)) for case in cases],
    )
    return job, cases


def test_sigterm_stops_a_worker_after_its_batch_and_another_goes_on(
    settings, monkeypatch, operator, snapshot_factory
):
    settings.JOB_WORKERS_PER_JOB = 1
    monkeypatch.setenv("JOB_BATCH_ITEMS", "1")
    job, cases = six_cases_job(operator, snapshot_factory)
    held = hold_cases(cases[0])
    process = worker()
    try:
        wait_for(waiting_for_a_lock, process, "the first batch")
        process.send_signal(signal.SIGTERM)
        held.release()
        assert process.wait(timeout=60) == 0
    finally:
        held.release()
        process.kill()
        process.wait(timeout=30)
    job.refresh_from_db()
    # One batch of one item done, the rest handed on rather than run by a stopping worker.
    assert job.status == Job.Status.RUNNING
    assert sorted(job.items.values_list("status", flat=True)) == ["done"] + ["pending"] * 5
    started = job.started_at
    assert worker("--batch").wait(timeout=180) == 0
    job.refresh_from_db()
    assert (job.status, job.started_at) == (Job.Status.DONE, started)
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == len(cases)


def test_a_worker_frozen_mid_batch_holding_a_lock_is_bounded_and_taken_over(
    settings, monkeypatch, operator, snapshot_factory
):
    """SIGSTOP freezes a worker inside its batch's transaction, holding its items' rows and
    their cases'. The server ends its transaction after DATABASE_IDLE_TIMEOUT_MS, which frees
    the cases for other writers and the items for the worker that takes them over."""
    settings.JOB_WORKERS_PER_JOB, settings.JOB_LEASE_SECONDS = 1, 2
    monkeypatch.setenv("DATABASE_IDLE_TIMEOUT_MS", "2000")
    job, cases = six_cases_job(operator, snapshot_factory)
    held = hold_cases(cases[0])
    frozen = worker()
    other = None
    try:
        wait_for(waiting_for_a_lock, frozen, "the batch")
        frozen.send_signal(signal.SIGSTOP)
        # The frozen worker is granted the case, and holds it while it cannot move.
        held.release()
        began = time.monotonic()
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT 1 FROM {Case._meta.db_table} WHERE id = %s FOR UPDATE", [cases[0].pk]
            )
        assert time.monotonic() - began < 2 + 5, "another writer waited past the idle bound"

        other = worker()
        wait_for(job_over(job), other, "the job taken over")
        wait_for(no_task_running, other, "the task rows to end")
    finally:
        held.release()
        frozen.send_signal(signal.SIGCONT)
        for process in [frozen, other]:
            if process is not None:
                process.kill()
                process.wait(timeout=30)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    assert set(job.items.values_list("status", flat=True)) == {"done"}
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == len(cases)
    assert Settlement.objects.count() == len(cases)
