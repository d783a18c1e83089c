"""The dashboard: what is open, what waits for the signed-in user, and the counts."""

from django.core.paginator import Paginator

from settlements import roles, selectors
from settlements.views.decorators import role_required
from settlements.views.rendering import render_page
from settlements.workflow import CaseStatus

INCIDENTS_PER_PAGE = 10
WAITING_SHOWN = 5

# Cases that need someone come first (a rejected settlement is redone before new work), then
# those moving through approval, then the finished ones, and last those withdrawn as loaded in
# error.
_STATUS_ORDER = {
    status: index
    for index, status in enumerate(
        (
            CaseStatus.AWAITING_DECISION,
            CaseStatus.REJECTED,
            CaseStatus.READY,
            CaseStatus.PREPARED,
            CaseStatus.AWAITING_APPROVAL,
            CaseStatus.OPEN,
            CaseStatus.APPROVED,
            CaseStatus.RESOLVED,
            CaseStatus.WITHDRAWN,
        )
    )
}


def in_workflow_order(cases) -> list:
    return sorted(cases, key=lambda case: (_STATUS_ORDER[case.status], case.pk))


# The "waiting for me" queues: (title, attribute of selectors.WaitingFor, role, record kind).
QUEUES = (
    ("Decisions to make", "decisions", roles.MARKETING_MANAGER, "case"),
    ("Settlements to prepare", "to_prepare", roles.OPERATOR, "case"),
    ("Settlements to submit", "to_submit", roles.OPERATOR, "settlement"),
    ("Settlements to approve", "approvals", roles.TOURNAMENT_MANAGER, "settlement"),
    ("Compensation to approve", "compensations", roles.TOURNAMENT_MANAGER, "compensation"),
    ("Individual cases to resolve", "individual_cases", roles.TOURNAMENT_MANAGER, "case"),
)


@role_required(*roles.ALL_ROLES)
def dashboard(request):
    page = Paginator(selectors.incident_list(open_only=True), INCIDENTS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    cases_by_incident: dict[int, list] = {incident.pk: [] for incident in page}
    for case in selectors.case_list().filter(incident__in=list(cases_by_incident)):
        cases_by_incident[case.incident_id].append(case)
    for incident in page:
        incident.case_rows = in_workflow_order(cases_by_incident[incident.pk])

    waiting = selectors.waiting_for(request.user)
    queues = []
    for title, attribute, role, kind in QUEUES:
        if roles.has_role(request.user, role):
            queryset = getattr(waiting, attribute)
            queues.append((title, queryset.count(), list(queryset[:WAITING_SHOWN]), kind))
    context = {
        "page": page,
        "counts": selectors.case_status_counts(),
        "queues": queues,
        "waiting_total": sum(count for _, count, _, _ in queues),
    }
    return render_page(request, "settlements/dashboard.html", context, partial="incident_list")
