"""The order the database worker takes queued jobs in (settlements.tasks)."""

import pytest

from settlements.models import Job
from settlements.services import jobs

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("database_tasks")]


def _start(kind: str, actor, target: str) -> Job:
    return jobs.job_start(
        kind=kind, actor=actor, target=target, items=[jobs.NewItem(key="1:0", label="one")]
    )


def test_the_desks_own_work_is_taken_before_second_opinions_queued_earlier(operator):
    from django_tasks_db.models import DBTaskResult

    sampling = _start(Job.Kind.ICM, operator, "icm:1")
    submit = _start(Job.Kind.SUBMIT, operator, "cases")
    # What a worker claims next: the head of the ready queue, in the queue's own order.
    order = [task.args_kwargs["kwargs"]["job_id"] for task in DBTaskResult.objects.ready()]
    assert order[0] == submit.pk
    assert set(order) == {submit.pk, sampling.pk}
    assert order.index(sampling.pk) > max(i for i, job in enumerate(order) if job == submit.pk)
