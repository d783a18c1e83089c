"""``manage.py run_worker``: django-tasks-db's worker.

Start one or more on any machine that reaches the database. A lost worker's items are taken
over by the others through their leases (settlements.services.jobs); no worker looks for lost
ones.

A worker outlives its database connection: when the connection drops (a restart, a failover,
an administrator's pg_terminate_backend) the worker waits a little, connects again and goes
on.

SIGTERM (or SIGINT) stops a worker after the batch it is running: its job is queued again for
another worker to go on with (django-tasks-db's own handling would wait for the whole task, a
worker's whole share of the job).
"""

import logging
import os
import random
import time

from django.conf import settings
from django.core.management.base import CommandError
from django.db import close_old_connections
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands import db_worker

from settlements.services.jobs import TRANSIENT, stopping

log = logging.getLogger("crashdesk.jobs")

# The first pause after the database dropped the worker, doubling up to the last: an outage of
# minutes is waited out without hammering the server.
FIRST_PAUSE_SECONDS, LAST_PAUSE_SECONDS = 0.5, 5.0


class Worker(db_worker.Worker):
    """django-tasks-db's worker, whose stop also tells the running job to stop after its batch."""

    def shutdown(self, signum, frame) -> None:
        stopping.set()
        super().shutdown(signum, frame)


class Command(db_worker.Command):
    help = "Run background tasks (database queue)."

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.set_defaults(interval=settings.JOB_POLL_MILLISECONDS / 1000)

    def handle(self, *args, **options):
        self._work(*args, **options)

    def _run(
        self,
        *,
        verbosity,
        queue_name,
        interval,
        batch,
        backend_name,
        startup_delay,
        reload,
        max_tasks,
        worker_id,
        exclude_queues,
        **options,
    ) -> None:
        """django-tasks-db's ``handle``, with the worker above."""
        self.configure_logging(verbosity)
        excluded = exclude_queues.split(",") if exclude_queues else []
        if excluded and "*" not in queue_name.split(","):
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = Worker(
            queue_names=queue_name.split(","),
            interval=interval,
            batch=batch,
            backend_name=backend_name,
            startup_delay=startup_delay,
            max_tasks=max_tasks,
            worker_id=worker_id,
            excluded_queue_names=excluded,
        )
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
                pause = min(FIRST_PAUSE_SECONDS * 2 ** (failures - 1), LAST_PAUSE_SECONDS)
                time.sleep(pause * random.uniform(0.5, 1.0))  # noqa: S311 (jitter)
                close_old_connections()
