"""The tasks the workers run (``manage.py run_worker``); the work is in services/jobs.py."""

from django.tasks import task

from settlements.services import jobs


@task
def run_job(job_id: int, token: str) -> dict:
    return jobs.job_run(job_id=job_id, token=token)
