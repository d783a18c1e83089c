"""The lists behind the dashboard's counts, in full and paged.

GET /queues/<name>/                    one "waiting for you" list, filtered by incident
GET /queues/cases/                     every case, or those in one status
GET /queues/incidents/                 open incidents, or closed, or all
"""

from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.views.decorators.http import require_safe

from settlements import bounds
from settlements.access import roles
from settlements.access.decorators import role_required
from settlements.selectors import queues
from settlements.selectors.dashboard import awaiting, waiting_rows
from settlements.views.paging import page_number
from settlements.views.rendering import render_page
from settlements.views.sorting import chosen_sort, sort_columns
from settlements.workflow import CaseStatus

QUEUE_PER_PAGE = 25
# Column headers by sort key (selectors.WAITING_SORTS, selectors.CASE_SORTS).
WAITING_COLUMNS = {"waiting": "Waiting since", "tournament": "Tournament", "incident": "Incident"}
CASE_COLUMNS = {
    "case": "Case",
    "tournament": "Tournament",
    "incident": "Incident",
    "status": "Status",
    "created": "Loaded",
}
INCIDENT_STATES = {"open": "Open", "closed": "Closed", "all": "All"}


@require_safe
@role_required(*roles.DESK_ROLES)
def queue(request, name: str):
    """One "waiting for you" list in full: paged, filtered by incident."""
    state = awaiting(name)
    if state is None:
        raise Http404("No such list.")
    if not roles.has_role(request.user, state.role):
        raise PermissionDenied
    incident = bounds.whole_number(request.GET.get("incident"))
    sorting = chosen_sort(request, queues.WAITING_SORTS, "waiting")
    records = queues.waiting_queue(
        request.user, state, incident=incident, sort=sorting.key, descending=sorting.descending
    )
    page = Paginator(records, QUEUE_PER_PAGE).get_page(page_number(request))
    context = {
        "title": state.title,
        "name": name,
        "page": page,
        "columns": sort_columns(request, sorting, WAITING_COLUMNS),
        "sorting": sorting,
        "rows": waiting_rows(state, page.object_list),
        "incident": "" if incident is None else str(incident),
        "incidents": queues.incident_choices(),
    }
    return render_page(request, "settlements/queue.html", context, partial="queue")


@require_safe
@role_required(*roles.DESK_ROLES)
def case_queue(request):
    """Every case, or those in one status: the list behind each status count on the dashboard
    (which counts every case, so this lists every case, whoever asks)."""
    status = request.GET.get("status", "")
    status = status if status in CaseStatus.values else ""
    incident = bounds.whole_number(request.GET.get("incident"))
    sorting = chosen_sort(request, queues.CASE_SORTS, "created")
    cases = queues.case_queue(
        status=status or None, incident=incident, sort=sorting.key, descending=sorting.descending
    )
    context = {
        "columns": sort_columns(request, sorting, CASE_COLUMNS),
        "sorting": sorting,
        "title": f"Cases: {CaseStatus(status).label.lower()}" if status else "Every case",
        "status": status,
        "statuses": CaseStatus.choices,
        "incident": "" if incident is None else str(incident),
        "incidents": queues.incident_choices(),
        "page": Paginator(cases, QUEUE_PER_PAGE).get_page(page_number(request)),
    }
    return render_page(request, "settlements/case_queue.html", context, partial="queue")


@require_safe
@role_required(*roles.DESK_ROLES)
def incident_queue(request):
    """Incidents, open ones by default (the dashboard's count), or closed, or all."""
    state = request.GET.get("state", "open")
    state = state if state in INCIDENT_STATES else "open"
    context = {
        "state": state,
        "states": INCIDENT_STATES.items(),
        "page": Paginator(queues.incident_queue(state), QUEUE_PER_PAGE).get_page(
            page_number(request)
        ),
    }
    return render_page(request, "settlements/incident_queue.html", context, partial="queue")
