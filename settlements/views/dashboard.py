"""The dashboard: what is open, what waits for the signed-in user, and the counts."""

from settlements import roles, selectors
from settlements.views.decorators import role_required
from settlements.views.paging import page_number
from settlements.views.rendering import render_page


@role_required(*roles.ALL_ROLES)
def dashboard(request):
    summary = selectors.dashboard_summary(request.user, page=page_number(request))
    context = {
        "page": summary.page,
        "incidents": summary.incidents,
        "counts": summary.counts,
        "queues": summary.queues,
        "waiting_total": summary.waiting_total,
    }
    return render_page(request, "settlements/dashboard.html", context, partial="incident_list")
