"""The background work the workers run (``manage.py run_worker``): each task calls services
(settlements.services.jobs) and reports its progress through them.

A job's tasks are queued when a service asks for them (``jobs.job_queued``), in the same
transaction; this module is imported when the app is ready, so that is answered.
"""

from django.dispatch import receiver
from django.tasks import task
from django_tasks_db.models import DBTaskResult

from settlements.models import Job
from settlements.services import jobs


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
