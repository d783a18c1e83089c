"""``manage.py run_worker``: django-tasks-db's worker, plus the recovery of lost jobs.

Start one or more on any machine that reaches the database. Besides running tasks, each
worker looks every few seconds for jobs whose worker went silent (killed, machine lost) and
queues them again; see settlements.services.jobs.
"""

import logging
import threading

from django.conf import settings
from django.db import connection
from django_tasks_db.management.commands import db_worker

from settlements import services

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
            super().handle(*args, **options)
        finally:
            stop.set()

    def _sweep(self, stop: threading.Event) -> None:
        try:
            while True:
                try:
                    services.job_recover_stale()
                except Exception:
                    log.exception("could not look for lost jobs")
                if stop.wait(settings.JOB_HEARTBEAT_SECONDS):
                    return
        finally:
            connection.close()
