"""A job and the outcome of its items, for its progress page."""

from django.db.models import QuerySet

from settlements.models import Job, JobItem


def job_detail(job_id: int) -> Job:
    return Job.objects.select_related("incident", "created_by").get(pk=job_id)


def job_items(job: Job, *, status: str = "") -> QuerySet[JobItem]:
    """The job's items in the order they were queued, of one status if given, each with its
    case; unevaluated, for the page to read one page of."""
    items = job.items.select_related("case").order_by("position")
    if status:
        items = items.filter(status=status)
    return items
