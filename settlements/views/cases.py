"""The case page, the hub of one crashed tournament: its stage, its remedy or the decision it
waits for, and its settlements. Later steps (decisions, review, compensation) add sections.

GET      /cases/<id>/             the case page
POST     /cases/<id>/prepare/     an operator prepares the settlement
GET/POST /cases/<id>/withdraw/    withdraw a crash case loaded in error, with a confirmation
"""

from django.contrib import messages
from django.http import Http404
from django.urls import reverse
from django.views.decorators.http import require_POST

from settlements import charts, roles, selectors, services, wording
from settlements.errors import DomainError
from settlements.forms import ReasonForm
from settlements.models import Case
from settlements.rules import Policy
from settlements.views import confirming
from settlements.views.compensation import PROPOSERS
from settlements.views.decorators import role_required
from settlements.views.lookups import case_or_404
from settlements.views.rendering import go_to, render_invalid, render_page
from settlements.workflow import CaseStatus, CompensationStatus, case_allows, settlement_allows

# The case page's swap targets: element id -> partialdef in case_detail.html. Sections added
# later (decisions, compensation) register theirs here.
CASE_PARTIALS = {
    "case-next-step": "next_step",
    "case-stage": "stage",
    "case-settlements": "settlements",
}
# Who may withdraw a crash case loaded in error (services.case_withdraw checks it again).
WITHDRAWERS = (roles.OPERATOR, roles.TOURNAMENT_MANAGER)


@role_required(*roles.ALL_ROLES)
def case_detail(request, case_id: int):
    case = case_or_404(case_id)
    return render_page(
        request, "settlements/case_detail.html", _context(request, case), partial=CASE_PARTIALS
    )


@require_POST
@role_required(roles.OPERATOR)
def case_prepare(request, case_id: int):
    case = case_or_404(case_id)
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


@role_required(*WITHDRAWERS)
def case_withdraw(request, case_id: int):
    """The confirmation page of a withdrawal (what will happen, a reason), and the withdrawal."""
    case = case_or_404(case_id)
    if not case.is_crash:
        raise Http404("An individual case is resolved, not withdrawn.")
    form = ReasonForm(request.POST or None)
    context = {
        "case": case,
        "tournament": case.tournament,
        "form": form,
        "subject": f"Case #{case.pk}",
        "refusal": _withdraw_refusal(case),
        "settlements_withdrawn": [
            settlement
            for settlement in case.settlements.all()
            if not settlement.is_adjustment and settlement_allows(settlement.status, "withdraw")
        ],
    }
    return confirming.answer_review(
        request,
        template="settlements/case_withdraw.html",
        context=context,
        form=form,
        perform=lambda reason: services.case_withdraw(case=case, actor=request.user, reason=reason),
        done_message=(
            f"Case #{case.pk} withdrawn. Tournament {case.tournament.operator_id} can be "
            "loaded again with the right snapshot."
        ),
        done_url=reverse("case_detail", args=[case.pk]),
        own_work=False,
    )


def _withdraw_refusal(case: Case) -> str:
    """Why the case cannot be withdrawn now, as services.case_withdraw would say; else ""."""
    if case.status == CaseStatus.APPROVED:
        return (
            f"Case #{case.pk} has an approved settlement, so it stays; correct that settlement "
            "with an adjustment instead."
        )
    if case.status == CaseStatus.WITHDRAWN:
        return f"Case #{case.pk} was already withdrawn."
    waiting = selectors.compensation_list(case=case, status=CompensationStatus.PROPOSED)
    if waiting:
        listed = ", ".join(f"#{compensation.pk}" for compensation in waiting)
        return (
            f"Compensation {listed} of this case still waits for a Tournament Manager's "
            "answer; have it approved or rejected before withdrawing the case."
        )
    return ""


def _context(request, case: Case) -> dict:
    withdrawn = case.status == CaseStatus.WITHDRAWN
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
        "can_withdraw": roles.has_role(request.user, *WITHDRAWERS)
        and case.is_crash
        and case_allows(case.status, "withdraw"),
        "withdrawn": withdrawn,
        "in_force": selectors.crash_case_in_force(case.tournament_id) if withdrawn else None,
        "next_step_error": "",
        **_followups(request.user, case),
    }
    if case.is_crash and case.entrants:
        context["stage_bar"] = charts.stage_bar(
            entrants=case.entrants,
            eliminated=case.eliminated,
            paid_places=case.paid_places,
            policy=Policy(**case.policy),
            started=case.started is not False,
        )
    return context


def _followups(user, case: Case) -> dict:
    """What the case page shows below its settlements: compensation proposals, prizes given
    in error, and for an individual case its players and outcome, with the actions the
    user's roles allow (the views check them again)."""
    # Compensation answers a computed settlement (RULES.md §6), so a crash case needs one first.
    open_to_proposals = (
        bool(case.settlements.all()) if case.is_crash else case.status == CaseStatus.OPEN
    )
    # A case withdrawn as loaded in error takes nothing more; its tournament's new case does.
    withdrawn = case.status == CaseStatus.WITHDRAWN
    return {
        "compensations": list(selectors.compensation_list(case=case)),
        "withdrawals": list(selectors.prize_withdrawal_list(case=case)),
        "can_propose": open_to_proposals and not withdrawn and roles.has_role(user, *PROPOSERS),
        "can_decide_prize": not withdrawn and roles.has_role(user, roles.TOURNAMENT_MANAGER),
        "can_resolve": not case.is_crash
        and case.status == CaseStatus.OPEN
        and roles.has_role(user, roles.TOURNAMENT_MANAGER),
    }
