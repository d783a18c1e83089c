"""The auditor's access review.

GET  /access-review/              every user with what they hold and how they sign in, and every
                                  grant and revocation in a period (?start=&end=, paged)
GET  /access-review/users.csv     the users, as CSV
GET  /access-review/changes.csv   the period's grants and revocations, as CSV
POST /access-review/complete      record the review done, with the auditor's note
"""

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST, require_safe

from settlements.access import permissions
from settlements.access.decorators import role_required
from settlements.access_forms import AccessPeriodForm, AccessReviewForm, default_period
from settlements.errors import DomainError
from settlements.exports import access_review as export
from settlements.exports.spreadsheets import csv_chunks, csv_download
from settlements.selectors import access_review as access_review_selectors
from settlements.services import access_review as access_review_services
from settlements.views.paging import page_number
from settlements.views.rendering import go_to, render_invalid, render_page

TEMPLATE = "settlements/access_review.html"
CHANGES_PER_PAGE = 50


def _period(request, due):
    """The period asked for in the query, else the default one; and its form."""
    start, end = default_period(due.last)
    query = request.GET if "start" in request.GET or "end" in request.GET else None
    form = AccessPeriodForm(query, initial={"start": start, "end": end})
    if query is not None and form.is_valid():
        start, end = form.cleaned_data["start"], form.cleaned_data["end"]
    return form, start, end


def _context(request, due, period_form, start, end, review_form=None) -> dict:
    changes = Paginator(access_review_selectors.access_changes(start, end), CHANGES_PER_PAGE)
    return {
        "due": due,
        "review_days": settings.ACCESS_REVIEW_DAYS,
        "period_form": period_form,
        "start": start,
        "end": end,
        "query": urlencode({"start": start.isoformat(), "end": end.isoformat()}),
        "users": access_review_selectors.access_by_user(),
        "changes": changes.get_page(page_number(request)),
        "review_form": review_form
        or AccessReviewForm(initial={"start": start, "end": end}, auto_id="review_%s"),
    }


@require_safe
@role_required(*permissions.ACCESS_REVIEWERS)
def access_review(request):
    due = access_review_selectors.access_review_due()
    period_form, start, end = _period(request, due)
    context = _context(request, due, period_form, start, end)
    return render_page(request, TEMPLATE, context, partial="changes")


@require_safe
@role_required(*permissions.ACCESS_REVIEWERS)
def access_review_users_csv(request):
    rows = export.users_rows(access_review_selectors.access_by_user())
    return csv_download(csv_chunks(rows), "crashdesk-access-users.csv")


@require_safe
@role_required(*permissions.ACCESS_REVIEWERS)
def access_review_changes_csv(request):
    _, start, end = _period(request, access_review_selectors.access_review_due())
    rows = export.changes_rows(access_review_selectors.access_changes(start, end).iterator())
    return csv_download(csv_chunks(rows), f"crashdesk-access-changes-{start}-to-{end}.csv")


@require_POST
@role_required(*permissions.ACCESS_REVIEWERS)
def access_review_complete(request):
    form = AccessReviewForm(request.POST, auto_id="review_%s")
    if form.is_valid():
        data = form.cleaned_data
        try:
            access_review_services.access_review_complete(
                actor=request.user, start=data["start"], end=data["end"], note=data["note"]
            )
        except DomainError as error:
            form.add_domain_error(error)
        else:
            messages.success(request, "The access review is recorded.")
            return go_to(request, reverse("access_review"))
    due = access_review_selectors.access_review_due()
    period_form, start, end = _period(request, due)
    context = _context(request, due, period_form, start, end, review_form=form)
    return render_invalid(request, TEMPLATE, context, partial="review_form")
