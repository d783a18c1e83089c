"""The case page, the hub of one crashed tournament: its stage, its remedy or the decision it
waits for, and its settlements. Later steps (decisions, review, compensation) add sections."""

from django.contrib import messages
from django.http import Http404
from django.urls import reverse
from django.views.decorators.http import require_POST

from settlements import charts, roles, selectors, services, wording
from settlements.errors import DomainError
from settlements.models import Case
from settlements.views.compensation import case_followups
from settlements.views.decorators import role_required
from settlements.views.rendering import go_to, render_invalid, render_page
from settlements.workflow import CaseStatus, case_allows

# The case page's swap targets: element id -> partialdef in case_detail.html. Sections added
# later (decisions, compensation) register theirs here.
CASE_PARTIALS = {
    "case-next-step": "next_step",
    "case-stage": "stage",
    "case-settlements": "settlements",
}


@role_required(*roles.ALL_ROLES)
def case_detail(request, case_id: int):
    case = _case(case_id)
    return render_page(
        request, "settlements/case_detail.html", _context(request, case), partial=CASE_PARTIALS
    )


@require_POST
@role_required(roles.OPERATOR)
def case_prepare(request, case_id: int):
    case = _case(case_id)
    try:
        settlement = services.settlement_prepare(
            case=case, actor=request.user, note=request.POST.get("note", "")
        )
    except DomainError as error:
        context = _context(request, case)
        context["next_step_error"] = error.message
        return render_invalid(request, "settlements/case_detail.html", context, partial="next_step")
    messages.success(request, f"{settlement} prepared. Check it, then submit it for approval.")
    return go_to(request, reverse("case_detail", args=[case.pk]))


def _case(case_id: int) -> Case:
    try:
        return selectors.case_detail(case_id)
    except Case.DoesNotExist:
        raise Http404("No such case.") from None


def _context(request, case: Case) -> dict:
    context = {
        "case": case,
        "tournament": case.tournament,
        "remedy": wording.case_remedy(case),
        "decision": next(iter(case.decisions.all()), None),
        "settlements": list(case.settlements.all()),
        "can_prepare": roles.has_role(request.user, roles.OPERATOR)
        and case.is_crash
        and case_allows(case.status, "prepare"),
        "awaiting_decision": case.status == CaseStatus.AWAITING_DECISION,
        "can_decide": roles.has_role(request.user, roles.MARKETING_MANAGER)
        and bool(case.decision_options)
        and case_allows(case.status, "decide"),
        "next_step_error": "",
        **case_followups(request.user, case),
    }
    if case.is_crash and case.entrants:
        policy = case.policy
        numbers = {
            "entrants": case.entrants,
            "eliminated": case.eliminated,
            "paid_places": case.paid_places,
            "pre_pct": policy["pre_pct"],
            "early_pct": policy["early_pct"],
        }
        context["stage_bar"] = charts.stage_bar_svg(
            **numbers, stage=case.stage, started=case.started is not False
        )
        context["stage_text"] = charts.stage_bar_text(
            **numbers, stage=case.stage, started=case.started is not False
        )
        context["eliminated_pct"] = charts.percent_text(case.eliminated, case.entrants)
    return context
