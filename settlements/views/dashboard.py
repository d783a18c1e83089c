"""The dashboard: what is open, what waits for the signed-in user, and the counts."""

from django.template.loader import render_to_string

from settlements import selectors
from settlements.access import roles
from settlements.access.decorators import role_required
from settlements.views.paging import page_number
from settlements.views.rendering import render_page

TEMPLATE = "settlements/dashboard.html"


@role_required(*roles.ALL_ROLES)
def dashboard(request):
    # What the incident list's markup depends on besides its data and the reporters' names:
    # whether the user may report crashes (its links), and the query its page links keep.
    variant = f"{roles.has_role(request.user, roles.OPERATOR)}:{request.GET.urlencode()}"
    summary = selectors.dashboard_summary(request.user, page=page_number(request), variant=variant)
    context = {
        "page": summary.page,
        "incidents": summary.incidents,
        "counts": summary.counts,
        "queues": summary.queues,
        "waiting_total": summary.waiting_total,
    }
    # Rendering the incident list was two thirds of the page's time; it is kept under the
    # change mark with the data (selectors.dashboard_summary), so a change shows at once.
    incident_list = summary.incident_list
    if incident_list is None:
        incident_list = render_to_string(f"{TEMPLATE}#incident_list", context, request=request)
        summary.keep_incident_list(incident_list)
    context["incident_list_html"] = incident_list
    return render_page(request, TEMPLATE, context, partial="incident_list")
