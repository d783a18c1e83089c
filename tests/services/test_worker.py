"""The real database worker (``manage.py run_worker``) in its own process, on PostgreSQL."""

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from settlements import change_mark, services
from settlements.models import Event, Job, Settlement
from settlements.services import jobs

# Slow: each test starts manage.py run_worker in a fresh process.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
DB_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


@pytest.fixture(autouse=True)
def database_tasks(settings):
    if connection.vendor != "postgresql":
        pytest.skip("the worker shares the test database only on PostgreSQL")
    settings.TASKS = DB_TASKS


def worker(*extra: str) -> subprocess.Popen:
    db = connection.settings_dict
    url = f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    env = {**os.environ, "DATABASE_URL": url, "JOB_HEARTBEAT_SECONDS": "1"}
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


def waiting_for_commit_order() -> bool:
    """Whether another backend of the test database waits for the commit-order lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
            " WHERE l.locktype = 'advisory' AND NOT l.granted AND l.objid = %s"
            " AND a.datname = current_database() AND a.pid <> pg_backend_pid()",
            [change_mark._COMMIT_ORDER_LOCK],
        )
        return cursor.fetchone()[0] > 0


def test_the_worker_runs_a_queued_job(operator, snapshot_factory):
    job = prepare_job(operator, snapshot_factory, 50)
    assert job.status == Job.Status.QUEUED
    assert worker("--batch").wait(timeout=120) == 0
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and job.attempts == 1
    assert Settlement.objects.count() == 1


def test_a_worker_killed_mid_step_leaves_nothing_and_the_job_runs_again(operator, snapshot_factory):
    job = prepare_job(operator, snapshot_factory, 100_000)
    # Holding the lock every service takes before its event stops the worker's prepare there,
    # its settlement written but not committed, however fast the machine runs the engine.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [change_mark._COMMIT_ORDER_LOCK])
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
            cursor.execute("SELECT pg_advisory_unlock(%s)", [change_mark._COMMIT_ORDER_LOCK])
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


def test_an_idle_worker_looks_for_work_as_often_as_the_setting_says(settings):
    from django.core.management import load_command_class

    settings.JOB_POLL_MILLISECONDS = 150
    command = load_command_class("settlements", "run_worker")
    options = command.create_parser("manage.py", "run_worker").parse_args([])
    assert options.interval == 0.15
