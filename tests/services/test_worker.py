"""The real database worker (``manage.py run_worker``) in its own process, on PostgreSQL."""

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from settlements import audit_log, services
from settlements.models import Event, Job, Settlement
from settlements.services import jobs

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
    env = {
        **os.environ, "DATABASE_URL": url, "JOB_HEARTBEAT_SECONDS": "1",
        "JOB_RETRY_MILLISECONDS": "100", "JOB_WORKERS_PER_JOB": str(settings.JOB_WORKERS_PER_JOB),
    }  # fmt: skip
    command = [sys.executable, "manage.py", "run_worker", "--no-reload", "--no-startup-delay"]
    return subprocess.Popen(
        [*command, "--interval", "0.2", *extra],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def prepare_job(operator, snapshot_factory, entrants: int) -> Job:
    case = services.case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(stage="middle", entrants=entrants)
    )
    return jobs.job_start(
        kind=Job.Kind.PREPARE, actor=operator, target=f"case:{case.pk}",
        items=[jobs.NewItem(key=str(case.pk), label=str(case))],
    )  # fmt: skip


def commit_order_waiters() -> int:
    """How many other backends of the test database wait for the event chain's lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objid = %s"
            " AND a.datname = current_database() AND a.pid <> pg_backend_pid()",
            [audit_log.CHAIN_LOCK],
        )
        return cursor.fetchone()[0]


def waiting_for_commit_order() -> bool:
    return commit_order_waiters() > 0


def test_the_worker_runs_a_queued_job(operator, snapshot_factory):
    job = prepare_job(operator, snapshot_factory, 50)
    assert job.status == Job.Status.QUEUED
    assert worker("--batch").wait(timeout=120) == 0
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.attempts == 1
    assert Settlement.objects.count() == 1


def test_a_worker_killed_mid_step_leaves_nothing_and_the_job_runs_again(operator, snapshot_factory):
    job = prepare_job(operator, snapshot_factory, 2_000)
    # Holding the lock every service takes before its event stops the worker's prepare there,
    # its settlement written but not committed, however fast the machine runs the engine.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [audit_log.CHAIN_LOCK])
    try:
        process = worker()
        try:
            deadline = time.monotonic() + 120
            while not waiting_for_commit_order():
                assert process.poll() is None, "the worker stopped on its own"
                assert time.monotonic() < deadline, "the worker never reached the event"
                time.sleep(0.05)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [audit_log.CHAIN_LOCK])
    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING
    assert not Settlement.objects.exists()
    assert not Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).exists()

    # Another worker finds it silent, queues it again and runs it to the end.
    later = timezone.now() + timedelta(seconds=60)
    assert jobs.job_recover_stale(now=later) == [job.pk]
    assert worker("--batch").wait(timeout=180) == 0
    job.refresh_from_db()
    assert (job.status, job.attempts) == (Job.Status.DONE, 2)
    assert Settlement.objects.count() == 1
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == 1


def wait_for(condition, process: subprocess.Popen, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert process.poll() is None, f"the worker stopped before {what}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def commit_order_lock(take: bool) -> None:
    with connection.cursor() as cursor:
        function = "pg_advisory_lock" if take else "pg_advisory_unlock"
        cursor.execute(f"SELECT {function}(%s)", [audit_log.CHAIN_LOCK])


def test_a_worker_whose_connections_are_terminated_mid_job_goes_on(operator, snapshot_factory):
    cases = [
        services.case_load_snapshot(
            actor=operator,
            snapshot=snapshot_factory(stage="middle", entrants=30, tournament_id=f"T{number}"),
        )
        for number in range(6)
    ]
    job = jobs.job_start(
        kind=Job.Kind.PREPARE, actor=operator, target="cases",
        items=[jobs.NewItem(key=str(case.pk), label=str(case)) for case in cases],
    )  # fmt: skip
    # The event chain's lock, held here, stops the worker at the event of an item: let one item
    # through, then hold the next one in the middle of its transaction.
    commit_order_lock(True)
    process = worker()
    try:
        wait_for(waiting_for_commit_order, process, "the first item")
        commit_order_lock(False)
        commit_order_lock(True)
        wait_for(waiting_for_commit_order, process, "the second item")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            assert cursor.fetchone()[0] >= 1
        commit_order_lock(False)
        job_over = lambda: Job.objects.get(pk=job.pk).status not in Job.ACTIVE  # noqa: E731
        wait_for(job_over, process, "the end of the job")
        assert process.poll() is None, "the worker should go on after its connection dropped"
    finally:
        process.terminate()
        process.wait(timeout=30)
    job.refresh_from_db()
    # The same run finished it: no recovery, no stop, every item done once.
    assert (job.status, job.attempts, job.error) == (Job.Status.DONE, 1, "")
    assert set(job.items.values_list("status", flat=True)) == {"done"}
    assert Settlement.objects.count() == len(cases)
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == len(cases)


def test_four_workers_share_a_job_and_do_no_item_twice(settings, operator, snapshot_factory):
    settings.JOB_WORKERS_PER_JOB = 4
    cases = [
        services.case_load_snapshot(
            actor=operator,
            snapshot=snapshot_factory(stage="middle", entrants=30, tournament_id=f"T{number}"),
        )
        for number in range(12)
    ]
    job = jobs.job_start(
        kind=Job.Kind.PREPARE, actor=operator, target="cases",
        items=[jobs.NewItem(key=str(case.pk), label=str(case)) for case in cases],
    )  # fmt: skip
    # Held here, the commit-order lock stops each worker in the middle of its first item: four
    # waiting at once are four workers holding four different items of the one job.
    commit_order_lock(True)
    processes = [worker("--batch", "--worker-id", f"w{number}") for number in range(4)]
    try:
        wait_for(lambda: commit_order_waiters() == 4, processes[0], "four workers at work")
        commit_order_lock(False)
        assert [process.wait(timeout=180) for process in processes] == [0, 0, 0, 0]
    finally:
        for process in processes:
            process.kill()
            process.wait(timeout=30)
    from django_tasks_db.models import DBTaskResult

    tasks = DBTaskResult.objects.filter(args_kwargs__kwargs__token=job.run_token)
    assert sorted(worker for task in tasks for worker in task.worker_ids) == [
        "w0", "w1", "w2", "w3"
    ]  # fmt: skip
    job.refresh_from_db()
    assert (job.status, job.attempts) == (Job.Status.DONE, 1)
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
