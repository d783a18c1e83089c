"""A job and the outcome of its items, for its progress page."""

from django.db.models import QuerySet

from settlements.models import Job, JobItem


def job_detail(job_id: int) -> Job:
    return Job.objects.select_related("incident", "created_by").get(pk=job_id)


def job_items(job: Job, *, status: str = "") -> QuerySet[JobItem]:
    """The job's items in the order they were queued, of one status if given; unevaluated,
    for the page to read one page of. Only what the page shows: a file still to load carries
    its bytes, and the case is a link by its id."""
    items = job.items.only("position", "label", "status", "message", "case").order_by("position")
    if status:
        items = items.filter(status=status)
    return items
