"""The dashboard: what is open, what waits for the signed-in user, and the counts."""

from functools import partial

from django.core.paginator import Paginator

from settlements.access import permissions, roles
from settlements.access.decorators import role_required
from settlements.selectors import dashboard as dashboard_selectors
from settlements.selectors.access_review import access_review_due
from settlements.selectors.cases import case_status_counts
from settlements.views.paging import page_number
from settlements.views.rendering import render_page

TEMPLATE = "settlements/dashboard.html"


@role_required(*roles.DESK_ROLES)
def dashboard(request):
    user = request.user
    # Paging over the count gives the last or first page for a number out of range or none.
    page = Paginator(
        range(dashboard_selectors.open_incident_count()),
        dashboard_selectors.DASHBOARD_INCIDENTS_PER_PAGE,
    ).get_page(page_number(request))
    context = {
        "page": page,
        "counts": case_status_counts,
        "waiting": partial(dashboard_selectors.dashboard_queues, user),
        "incidents": partial(dashboard_selectors.dashboard_incidents, page),
        # Auditors review who holds which access every ACCESS_REVIEW_DAYS.
        "access_review": partial(_access_review_due, user),
    }
    return render_page(request, TEMPLATE, context, partial="incident_list")


def _access_review_due(user):
    if not roles.has_role(user, *permissions.ACCESS_REVIEWERS):
        return None
    return access_review_due()
