"""The background work the workers run (``manage.py run_worker``): each task calls services
(settlements.services.jobs) and reports its progress through them.

A job's tasks are queued when a service asks for them (``jobs.job_queued``), in the same
transaction; this module is imported when the app is ready, so that is answered.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.dispatch import receiver
from django.tasks import task
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from settlements.models import Job
from settlements.services import jobs, notifications
from settlements.services.common import events_committed

logger = logging.getLogger(__name__)


@task
def run_job(job_id: int) -> dict:
    """Run the job's pending items (one of its tasks; never inside a transaction).

    A job is queued as up to JOB_WORKERS_PER_JOB tasks, so that as many workers share its
    items, and more are queued as its items are leased (services.jobs says how): each leases
    the next pending items that no other holds and runs them, until none is left; the one that
    finds none pending at all marks the job done.
    """
    job = None
    try:
        job = jobs.job_begin(job_id=job_id)
        if job is None:
            return {"ran": False}
        outcome = jobs.job_work(job=job)
        if outcome == jobs.STOPPING:
            jobs.job_hand_over(job=job)
            return {"ran": False, "stopped": True}
        if outcome == jobs.INTERRUPTED:
            return {"ran": False, "interrupted": True}
        progress = jobs.job_finish(job_id=job_id)
    except jobs.TRANSIENT as error:
        # The database went away outside a batch: the task queued with the job or its last
        # lease goes on with it once the database is back.
        jobs.job_database_failed(job_id=job_id, error=error)
        return {"ran": False, "interrupted": True}
    except Exception as error:
        if job is not None:
            jobs.job_stop(job=job, error=error)
        raise
    return {"ran": True, **progress.__dict__}


# Workers take the highest priority first. An ICM second opinion, started by every prepare of
# a middle or late stage, samples for seconds to minutes; queued in turn, a large outage's
# 1,200 of them held its submit back for eight minutes. So they wait for the desk's own work.
PRIORITY = {Job.Kind.ICM: -10}


@receiver(jobs.job_queued)
def queue_run(sender, *, job, runs: int, after=None, unless_waiting=False, **kwargs) -> bool:
    """Queue ``runs`` tasks of ``job`` in the transaction that asked for them (deferred to
    ``after``; none when ``unless_waiting`` and a task of the job waits already); whether they
    have run already. The immediate backend defers nothing: it runs the job in the caller's
    process, which no worker's loss can stop."""
    queued = run_job.using(priority=PRIORITY.get(job.kind, run_job.priority))
    if after is not None:
        if not queued.get_backend().supports_defer:
            return False
        queued = queued.using(run_after=after)
    if unless_waiting:
        waiting = DBTaskResult.objects.filter(status="READY", args_kwargs__kwargs__job_id=job.pk)
        if waiting.exists():
            return False
    results = [queued.enqueue(job_id=job.pk) for _ in range(runs)]
    return any(result.is_finished for result in results)


@task
def send_digest(user_id: int, attempt: int = 0) -> dict:
    """Email one person what waits for them (services.notifications.digest_send). Too soon
    after their last digest, it is queued again for when their interval allows; a failed send
    is tried again later, DIGEST_RETRIES times at most, waiting twice as long each time."""
    try:
        outcome = notifications.digest_send(user_id=user_id)
    except Exception as error:
        if attempt >= settings.DIGEST_RETRIES:
            logger.exception("digest to user %s not sent after %s tries", user_id, attempt + 1)
            return {"sent": False, "gave_up": True}
        delay = timedelta(seconds=settings.DIGEST_RETRY_SECONDS * 2**attempt)
        logger.warning("digest to user %s not sent (%s); trying again in %s", user_id, error, delay)
        _queue_digest(user_id, after=timezone.now() + delay, attempt=attempt + 1)
        return {"sent": False, "retry": attempt + 1}
    if isinstance(outcome, datetime):
        _queue_digest(user_id, after=outcome)
        return {"sent": False, "after": outcome.isoformat()}
    return {"sent": outcome == notifications.SENT, "outcome": outcome}


@receiver(events_committed)
def queue_digests(sender, **kwargs) -> None:
    """After business events commit: a digest for each person who may be told, unless one of
    theirs waits to run already (it will read what waits when it runs)."""
    users = notifications.digest_recipients()
    if not users:
        return
    waiting = set(
        DBTaskResult.objects.filter(
            status="READY",
            task_path=send_digest.module_path,
            args_kwargs__kwargs__user_id__in=users,
        ).values_list("args_kwargs__kwargs__user_id", flat=True)
    )
    for user_id in users:
        if user_id not in waiting:
            _queue_digest(user_id)


def _queue_digest(user_id: int, *, after: datetime | None = None, attempt: int = 0) -> None:
    queued = send_digest
    if after is not None:
        if not queued.get_backend().supports_defer:
            return  # the immediate backend (tests) runs nothing later: the next event asks again
        queued = queued.using(run_after=after)
    queued.enqueue(user_id=user_id, attempt=attempt)
