"""The tasks the workers run (``manage.py run_worker``); the work itself is in settlements.jobs."""

from django.tasks import TaskContext, task

from settlements import jobs


@task(takes_context=True)
def run_job(context: TaskContext, job_id: int) -> dict:
    return jobs.job_run(job_id=job_id, task_id=str(context.task_result.id))
