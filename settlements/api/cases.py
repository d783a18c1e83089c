"""GET /api/v1/cases and /api/v1/cases/ID: the cases, newest first a page at a time, and one
case with its settlement once prepared, lines included: one case is read by the roles that read
the ledger (``permissions.ledger_read``), as on the pages."""

from typing import Annotated

import msgspec
from django.http import HttpRequest, JsonResponse
from django.urls import reverse

from settlements import problems
from settlements.access import permissions, roles
from settlements.api.answers import CaseDetail, CasePage, Refusal
from settlements.api.base import answer, api_endpoint, next_page
from settlements.api.reading import Id, read_query
from settlements.models import Case, TokenScope
from settlements.selectors import cases as case_selectors
from settlements.selectors.settlements import settlement_adjustments, settlements_as_dicts
from settlements.workflow import CaseStatus

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


class CasesQuery(msgspec.Struct, kw_only=True, frozen=True):
    """Filters and the page: ``after`` is the id of the last case of the previous page."""

    after: Annotated[
        Id | None, msgspec.Meta(description="A case id: the page starts after it (see `next`).")
    ] = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE_SIZE, description="Cases a page.")] = (
        PAGE_SIZE
    )
    status: CaseStatus | None = None
    tournament: Annotated[
        str | None, msgspec.Meta(description="The operator's tournament id, as in the snapshot.")
    ] = None
    incident: Annotated[Id | None, msgspec.Meta(description="An incident's id.")] = None


@api_endpoint(
    "GET",
    "HEAD",
    scope=TokenScope.CASES_READ,
    allowed=roles.DESK_ROLES,
    query=CasesQuery,
    answers={200: CasePage},
    links={200: {"first_case": ("case", {"case_id": "$response.body#/results/0/id"})}},
)
def cases(request: HttpRequest, user) -> JsonResponse:
    """The cases, newest first, a page at a time.

    ``next`` is the URL of the following page (keyset pagination on the case id, so pages stay
    right while new cases arrive)."""
    query = read_query(request.GET, CasesQuery)
    page, more = case_selectors.case_page(
        limit=query.limit,
        before=query.after,
        status=query.status,
        incident=query.incident,
        tournament=query.tournament,
    )
    next_url = next_page(request, after=str(page[-1].pk)) if more else None
    return answer(
        {"results": [_case_summary(request, case) for case in page], "next": next_url}, CasePage
    )


@api_endpoint(
    "GET",
    "HEAD",
    scope=TokenScope.CASES_READ,
    allowed=permissions.LEDGER_READERS,
    answers={200: CaseDetail, 404: Refusal},
    links={
        200: {
            "statements": (
                "settlement_statements",
                {"settlement_id": "$response.body#/settlement_id"},
            )
        }
    },
)
def case(request: HttpRequest, user, case_id: int) -> JsonResponse:
    """One case, with its settlement once prepared and the settlement's adjustments."""
    try:
        found = case_selectors.case_detail(case_id)
    except Case.DoesNotExist:
        return problems.refusal(404, "$", f"There is no case #{case_id}.")
    data = _case_summary(request, found)
    data["policy"] = found.policy or None
    version = found.rulebook_version
    data["rulebook"] = {"key": version.rulebook.key, "version": version.number} if version else None
    data["engine_version"] = found.engine_version or None
    settlement = case_selectors.case_current_settlement(found) if found.is_crash else None
    adjustments, documents = [], []
    if settlement is not None:
        adjustments = list(settlement_adjustments(settlement))
        for record in (settlement, *adjustments):
            record.case = found
        # The stored engine output, in the format of `manage.py settle`: not computed again.
        # Two queries for the settlement and all its adjustments together.
        documents = settlements_as_dicts([settlement, *adjustments])
    data["settlement_id"] = settlement.pk if settlement else None
    data["settlement_status"] = settlement.status if settlement else None
    data["settlement"] = documents[0] if settlement else None
    data["adjustments"] = [
        {"id": adjustment.pk, "status": adjustment.status, "document": document}
        for adjustment, document in zip(adjustments, documents[1:], strict=True)
    ]
    return answer(data, CaseDetail)


def _case_summary(request: HttpRequest, case: Case) -> dict:
    tournament = case.tournament
    return {
        "id": case.pk,
        "url": request.build_absolute_uri(reverse("api:case", args=[case.pk])),
        "kind": case.kind,
        "status": case.status,
        "incident": case.incident_id,
        "tournament": {
            "id": tournament.operator_id,
            "name": tournament.name,
            "type": tournament.type,
            "currency": tournament.currency,
        },
        "crashed_at": case.crashed_at.isoformat() if case.crashed_at else None,
        "stage": case.stage or None,
        "entrants": case.entrants,
        "eliminated": case.eliminated,
        "remaining": case.remaining,
        "paid_places": case.paid_places,
        "pool": case.pool,
        "decision_options": list(case.decision_options),
        "decision": case.decision or None,
        "created_at": case.created_at.isoformat(),
        "updated_at": case.updated_at.isoformat(),
    }
