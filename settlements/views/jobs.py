"""A job's page: what a bulk action (views/bulk.py) or a long prepare is doing, and what each
of its items came to.

GET  /jobs/<id>/          the progress (polled while the job runs) and each item's outcome
POST /jobs/<id>/retry/    run a stopped job again over what is left
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from settlements.access import permissions, roles
from settlements.access.decorators import role_required
from settlements.errors import DomainError
from settlements.models import Job, JobItem
from settlements.selectors.bulk import decision_groups, next_decision_group
from settlements.selectors.jobs import job_items
from settlements.services import jobs
from settlements.views.lookups import job_or_404
from settlements.views.paging import CountedPaginator, RangePaginator, page_number
from settlements.views.rendering import go_to, render_page, wants_partial

JOB_ITEMS_PER_PAGE = 100

OUTCOME_FILTERS = (
    ("", "All"),
    (JobItem.Status.FAILED, "Failed"),
    (JobItem.Status.SKIPPED, "Skipped"),
    (JobItem.Status.DONE, "Done"),
)


@require_safe
@role_required(*roles.DESK_ROLES)
def job_detail(request, job_id: int):
    """A job's progress, polled each second while it runs, and each item's outcome."""
    job = job_or_404(job_id)
    status = request.GET.get("status", "")
    status = status if status in JobItem.Status.values else ""
    polled = wants_partial(request) and request.htmx.target != "job-items-section"
    progress = jobs.job_progress(job)
    context = {
        "job": job,
        "progress": progress,
        "status": status,
        "outcome_filters": OUTCOME_FILTERS,
        "can_retry": request.user.pk == job.created_by_id and not job.is_active,
    }
    if not polled:
        context["page"] = _items_page(job, status, progress, page_number(request))
    if not wants_partial(request):
        context["next_group"] = _next_decision_group(request, job)
    response = render_page(
        request,
        "settlements/job_detail.html",
        context,
        partial={"job-progress": "progress", "job-items-section": "items"},
    )
    if polled and not job.is_active:
        # The list of items, read once when the page loaded, reads itself again now.
        response["HX-Trigger"] = "job-finished"
    return response


def _next_decision_group(request, job):
    """After a grouped decision, the next kind of case of its incident still waiting for one
    (the kind just answered aside, though its cases wait until the job has run)."""
    if job.kind != Job.Kind.DECIDE or job.incident is None:
        return None
    if not roles.has_role(request.user, *permissions.DECISION_MAKERS):
        return None
    groups = decision_groups(job.incident)
    return next_decision_group(groups, job.params.get("group"))


def _items_page(job, status: str, progress: jobs.Progress, number: int):
    """One page of the job's items, counted by the progress already read. Unfiltered, their
    positions run 1..total without gaps, so a page is a range of positions (no OFFSET)."""
    items = job_items(job, status=status)
    if not status:
        paginator = RangePaginator(
            items, JOB_ITEMS_PER_PAGE, count=progress.total, field="position", first=1
        )
    else:
        count = {
            JobItem.Status.DONE: progress.done,
            JobItem.Status.SKIPPED: progress.skipped,
            JobItem.Status.FAILED: progress.failed,
        }.get(status, progress.total - progress.finished)
        paginator = CountedPaginator(items, JOB_ITEMS_PER_PAGE, count=count)
    return paginator.get_page(number)


@require_POST
@role_required(*roles.DESK_ROLES)
def job_retry(request, job_id: int):
    job = job_or_404(job_id)
    if request.user.pk != job.created_by_id:
        raise PermissionDenied
    try:
        jobs.job_retry(job=job, actor=request.user)
    except DomainError as error:
        messages.error(request, error.message)
    return go_to(request, reverse("job_detail", args=[job.pk]))
