"""The tasks the workers run (``manage.py run_worker``); the work is in services/jobs.py."""

from django.tasks import TaskContext, task

from settlements.services import jobs


@task(takes_context=True)
def run_job(context: TaskContext, job_id: int) -> dict:
    return jobs.job_run(job_id=job_id, task_id=str(context.task_result.id))
