"""The invitations of a rescheduled freeroll, shown on its case and its settlement: the new
date, who is invited and the list itself, paged (a freeroll may have 300,000 entrants)."""

from settlements.models import Case, Decision
from settlements.selectors.cases import decision_invitee_ids
from settlements.views.paging import CountedPaginator

INVITEES_PER_PAGE = 20

# The element the invitation pages swap, and the partial that draws it on either page.
PARTIALS = {"invitations": "invitations"}


def invitations(request, case: Case, decision: Decision | None) -> dict | None:
    """The context of templates/settlements/includes/invitations.html, or None when the
    decision is not a reschedule."""
    if decision is None or decision.option != "reschedule":
        return None
    ids, count = decision_invitee_ids(decision, case)
    paginator = CountedPaginator(ids, INVITEES_PER_PAGE, count=count)
    return {
        "decision": decision,
        "count": count,
        "page": paginator.get_page(request.GET.get("invite_page")),
    }
