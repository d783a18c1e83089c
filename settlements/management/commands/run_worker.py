"""``manage.py run_worker``: django-tasks-db's worker, plus the recovery of lost jobs.

Start one or more on any machine that reaches the database. Besides running tasks, each
worker looks every few seconds for jobs whose worker went silent (killed, machine lost) and
queues them again; see settlements.services.jobs.

A worker outlives its database connection: when the connection drops (a restart, a failover,
an administrator's pg_terminate_backend) the worker waits a little, connects again and goes
on, and so does its look for lost jobs.

SIGTERM (or SIGINT) stops a worker after the batch it is running: its job is queued again for
another worker to go on with (django-tasks-db's own handling would wait for the whole task, a
worker's whole share of the job).
"""

import logging
import os
import random
import threading
import time

from django.conf import settings
from django.core.management.base import CommandError
from django.db import close_old_connections, connection
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands import db_worker

from settlements import services
from settlements.services.job_retries import TRANSIENT
from settlements.services.jobs import stopping

log = logging.getLogger("crashdesk.jobs")


class Worker(db_worker.Worker):
    """django-tasks-db's worker, whose stop also tells the running job to stop after its batch."""

    def shutdown(self, signum, frame) -> None:
        stopping.set()
        super().shutdown(signum, frame)


class Command(db_worker.Command):
    help = "Run background tasks (database queue) and recover jobs whose worker was lost."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.set_defaults(interval=settings.JOB_POLL_MILLISECONDS / 1000)

    def handle(self, *args, **options):
        stop = threading.Event()
        sweeper = threading.Thread(target=self._sweep, args=(stop,), daemon=True)
        sweeper.start()
        try:
            self._work(*args, **options)
        finally:
            stop.set()

    def _run(self, *, verbosity, queue_name, interval, batch, backend_name, startup_delay,
             reload, max_tasks, worker_id, exclude_queues, **options) -> None:  # fmt: skip
        """django-tasks-db's ``handle``, with the worker above."""
        self.configure_logging(verbosity)
        excluded = exclude_queues.split(",") if exclude_queues else []
        if excluded and "*" not in queue_name.split(","):
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = Worker(
            queue_names=queue_name.split(","), interval=interval, batch=batch,
            backend_name=backend_name, startup_delay=startup_delay, max_tasks=max_tasks,
            worker_id=worker_id, excluded_queue_names=excluded,
        )  # fmt: skip
        if reload and not batch:
            if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":
                worker.configure_signals()
            run_with_reloader(worker.run)
        else:
            worker.configure_signals()
            worker.run()

    def _work(self, *args, **options) -> None:
        """django-tasks-db's loop, started again when the database drops it (its own loop
        lets such an error end the process)."""
        failures, last_failure = 0, 0.0
        while True:
            try:
                self._run(*args, **options)
                return
            except TRANSIENT as error:
                # Pauses grow over an outage, not over a worker's life of unrelated blips.
                if time.monotonic() - last_failure > 60:
                    failures = 0
                failures, last_failure = failures + 1, time.monotonic()
                log.warning("worker: the database failed (%s in a row): %s", failures, error)
                # Doubling pauses, capped at the heartbeat: an outage of minutes is waited out.
                pause = min(
                    settings.JOB_RETRY_MILLISECONDS / 1000 * 2 ** (failures - 1),
                    settings.JOB_HEARTBEAT_SECONDS,
                )
                time.sleep(pause * random.uniform(0.5, 1.0))  # noqa: S311 (jitter)
                close_old_connections()

    def _sweep(self, stop: threading.Event) -> None:
        try:
            while True:
                try:
                    services.job_recover_stale()
                except TRANSIENT as error:
                    # A database blip, not a fault: the next look goes on from a new connection.
                    log.warning("could not look for lost jobs: %s", error)
                    close_old_connections()
                except Exception:
                    log.exception("could not look for lost jobs")
                    # A dropped connection is replaced before the next look.
                    close_old_connections()
                if stop.wait(settings.JOB_HEARTBEAT_SECONDS):
                    return
        finally:
            connection.close()
