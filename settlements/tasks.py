"""The background work the workers run (``manage.py run_worker``): each task calls services
(settlements.services.jobs) and reports its progress through them.

A job's tasks are queued when a service queues a run of the job (``services.job_queued``), in
the same transaction; this module is imported when the app is ready, so that is answered.
"""

from django.dispatch import receiver
from django.tasks import task

from settlements import services
from settlements.models import Job


@task
def run_job(job_id: int, token: str) -> dict:
    """Run the job's pending items (one of the tasks of a run; never inside a transaction).

    A run is queued as up to JOB_WORKERS_PER_JOB tasks, so that as many workers share its
    items: each takes the next pending item that no other holds and runs it, until none is
    left; the one that finds none pending at all marks the job done. Transient database errors
    are retried (services.jobs says how), never the job's end.
    """
    job = services.retry_transient(lambda: services.job_begin(job_id=job_id, token=token))
    if job is None:
        return {"ran": False}
    try:
        with services.job_heartbeat(job.pk):
            finished = services.job_work(job=job)
        if not finished:
            services.retry_transient(lambda: services.job_hand_over(job_id=job_id, token=token))
            return {"ran": False, "stopped": True}
        progress = services.retry_transient(lambda: services.job_finish(job_id=job_id))
    except services.JobInterrupted:
        # The database stayed away: the job is left running, and its silent heartbeat hands
        # it to the recovery of lost jobs once the database is back.
        return {"ran": False, "interrupted": True}
    except Exception as error:
        services.job_stop(job=job, error=error)
        raise
    return {"ran": True, **progress.__dict__}


# Workers take the highest priority first. An ICM second opinion, started by every prepare of
# a middle or late stage, samples for seconds to minutes; queued in turn, a large outage's
# 1,200 of them held its submit back for eight minutes. So they wait for the desk's own work.
PRIORITY = {Job.Kind.ICM: -10}


@receiver(services.job_queued)
def queue_run(sender, *, job, runs: int, **kwargs) -> bool:
    """Queue the tasks of a new run of ``job``, in the transaction that queued it; whether
    they have run already (the immediate backend)."""
    queued = run_job.using(priority=PRIORITY.get(job.kind, run_job.priority))
    results = [queued.enqueue(job_id=job.pk, token=job.run_token) for _ in range(runs)]
    return any(result.is_finished for result in results)
