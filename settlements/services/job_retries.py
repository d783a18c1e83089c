"""Keeping a job going through database trouble: which errors are transient, retrying a
transaction with back-off, and the heartbeat that tells a running job from a lost one."""

import logging
import random
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager

from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, connection
from django.utils import timezone

from settlements.models import Job, JobItem

log = logging.getLogger("crashdesk.jobs")

# What a person is shown for an item that kept failing for the database's sake.
DATABASE_TROUBLE = (
    "The database kept failing on this item (connection lost, deadlock or time-out); running "
    "the work again should do it."
)

# Errors that say the database, not the item, failed: a connection lost or refused, a deadlock,
# a serialization failure, a statement cancelled (psycopg raises these as OperationalError),
# and a connection already closed (InterfaceError).
TRANSIENT = (OperationalError, InterfaceError)


class StepInterrupted(Exception):
    """A step rolled back by a transient database error; ``item_id`` is None when it failed
    before an item was taken."""

    def __init__(self, item_id: int | None):
        super().__init__(item_id)
        self.item_id = item_id


class JobInterrupted(Exception):
    """The database stayed out of reach through every retry: the task ends, the job is left
    running and its silent heartbeat hands it to the recovery of lost jobs."""


def retry_transient(work: Callable[[], object]):
    """Call ``work`` (a whole transaction) again after a growing pause while it fails for a
    transient database error; ``JobInterrupted`` after JOB_RETRIES retries."""
    attempt = 0
    while True:
        try:
            return work()
        except TRANSIENT as error:
            attempt += 1
            log.warning("jobs: the database failed (attempt %s): %s", attempt, error)
            if attempt > settings.JOB_RETRIES:
                raise JobInterrupted(str(error)) from error
            pause_before_retry(attempt, error)


def pause_before_retry(attempt: int, error: Exception) -> None:
    """Wait before a retry (doubling, with jitter so that workers do not retry in step), then
    drop the connection if it no longer works, so the retry opens a new one. Inside a caller's
    transaction (the immediate backend) nothing can be retried: the error is the caller's."""
    if connection.in_atomic_block:
        raise error
    base = settings.JOB_RETRY_MILLISECONDS / 1000 * 2 ** (attempt - 1)
    time.sleep(base * random.uniform(0.5, 1.0))  # noqa: S311 (jitter, not secrecy)
    close_old_connections()


def give_up_item(item_id: int) -> None:
    JobItem.objects.filter(pk=item_id, status=JobItem.Status.PENDING).update(
        status=JobItem.Status.FAILED, message=DATABASE_TROUBLE
    )


@contextmanager
def job_heartbeat(job_id: int):
    """Write the job's heartbeat from a thread while its steps run (one step may take
    seconds: a 300,000-entrant prepare); a job whose heartbeat stops is recovered."""
    if connection.in_atomic_block:
        # Run inline (the immediate backend): no other worker could take it over anyway.
        yield
        return
    stop = threading.Event()

    def beat():
        try:
            while not stop.wait(settings.JOB_HEARTBEAT_SECONDS):
                try:
                    Job.objects.filter(pk=job_id).update(heartbeat_at=timezone.now())
                except TRANSIENT as error:
                    # A lost connection must not silence a job that is still running: the
                    # next beat opens a new one.
                    log.warning("job %s: heartbeat not written: %s", job_id, error)
                    close_old_connections()
        finally:
            connection.close()

    thread = threading.Thread(target=beat, name=f"job-{job_id}-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        close_old_connections()
