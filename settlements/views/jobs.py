"""A job's page: what a bulk action (views/bulk.py) or a long prepare is doing, and what each
of its items came to.

GET  /jobs/<id>/          the progress (polled while the job runs) and each item's outcome
POST /jobs/<id>/retry/    run a stopped job again over what is left
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from settlements import selectors, services
from settlements.access import roles
from settlements.access.decorators import role_required
from settlements.errors import DomainError
from settlements.models import JobItem
from settlements.views.lookups import job_or_404
from settlements.views.rendering import go_to, render_page, wants_partial

ITEMS_SHOWN = 500

OUTCOME_FILTERS = (
    ("", "All"),
    (JobItem.Status.FAILED, "Failed"),
    (JobItem.Status.SKIPPED, "Skipped"),
    (JobItem.Status.DONE, "Done"),
)


@require_safe
@role_required(*roles.ALL_ROLES)
def job_detail(request, job_id: int):
    """A job's progress, polled each second while it runs, and each item's outcome."""
    job = job_or_404(job_id)
    status = request.GET.get("status", "")
    status = status if status in JobItem.Status.values else ""
    polled = wants_partial(request) and request.htmx.target != "job-items-section"
    context = {
        "job": job,
        "progress": services.job_progress(job),
        "items_shown": ITEMS_SHOWN,
        "status": status,
        "outcome_filters": OUTCOME_FILTERS,
        "can_retry": request.user.pk == job.created_by_id and not job.is_active,
    }
    if not polled:
        context["job_items"] = selectors.job_items(job, status=status, limit=ITEMS_SHOWN)
    response = render_page(
        request, "settlements/job_detail.html", context,
        partial={"job-progress": "progress", "job-items-section": "items"},
    )  # fmt: skip
    if polled and not job.is_active:
        # The list of items, read once when the page loaded, reads itself again now.
        response["HX-Trigger"] = "job-finished"
    return response


@require_POST
@role_required(*roles.ALL_ROLES)
def job_retry(request, job_id: int):
    job = job_or_404(job_id)
    if request.user.pk != job.created_by_id:
        raise PermissionDenied
    try:
        services.job_retry(job=job, actor=request.user)
    except DomainError as error:
        messages.error(request, error.message)
    return go_to(request, reverse("job_detail", args=[job.pk]))
