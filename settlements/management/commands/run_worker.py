"""``manage.py run_worker``: django-tasks-db's worker, plus the recovery of lost jobs.

Start one or more on any machine that reaches the database. Besides running tasks, each
worker looks every few seconds for jobs whose worker went silent (killed, machine lost) and
queues them again; see settlements.services.jobs.

A worker outlives its database connection: when the connection drops (a restart, a failover,
an administrator's pg_terminate_backend) the worker waits a little, connects again and goes
on, and so does its look for lost jobs.
"""

import logging
import random
import threading
import time

from django.conf import settings
from django.db import close_old_connections, connection
from django_tasks_db.management.commands import db_worker

from settlements import services
from settlements.services.job_retries import TRANSIENT

log = logging.getLogger("crashdesk.jobs")


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

    def _work(self, *args, **options) -> None:
        """django-tasks-db's loop, started again when the database drops it (its own loop
        lets such an error end the process)."""
        failures, last_failure = 0, 0.0
        while True:
            try:
                super().handle(*args, **options)
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
                except Exception:
                    log.exception("could not look for lost jobs")
                    # A dropped connection is replaced before the next look.
                    close_old_connections()
                if stop.wait(settings.JOB_HEARTBEAT_SECONDS):
                    return
        finally:
            connection.close()
