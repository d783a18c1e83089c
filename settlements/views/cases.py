"""The case page, the hub of one crashed tournament: its stage, its remedy or the decision it
waits for, and its settlements. Later steps (decisions, review, compensation) add sections.

GET      /cases/<id>/             the case page
POST     /cases/<id>/prepare/     an operator prepares the settlement
GET/POST /cases/<id>/withdraw/    withdraw a crash case loaded in error, with a confirmation
"""

from django.conf import settings
from django.contrib import messages
from django.http import Http404
from django.urls import reverse
from django.views.decorators.http import require_POST

from settlements import charts, wording
from settlements.access import permissions, roles
from settlements.access.decorators import role_required
from settlements.errors import DomainError, Duplicate
from settlements.forms import ReasonForm
from settlements.models import Case, Job
from settlements.rules import Policy
from settlements.selectors import compensation
from settlements.selectors.cases import case_entry_figures, crash_case_in_force
from settlements.selectors.payments.queues import withdrawals_collected
from settlements.services import jobs, snapshots
from settlements.services.settlements import settlement_prepare
from settlements.views import case_entries, confirming, invitations
from settlements.views.lookups import case_or_404
from settlements.views.rendering import go_to, render_invalid, render_page
from settlements.workflow import (
    CaseStatus,
    CompensationStatus,
    SettlementStatus,
    case_allows,
    settlement_allows,
)

# The case page's swap targets: element id -> partialdef in case_detail.html. Sections added
# later (decisions, compensation) register theirs here.
CASE_PARTIALS = {
    "case-next-step": "next_step",
    "case-stage": "stage",
    "case-settlements": "settlements",
    **invitations.PARTIALS,
}


@role_required(*roles.DESK_ROLES)
def case_detail(request, case_id: int):
    if case_entries.is_list_swap(request):
        return case_entries.list_swap(request, case_or_404(case_id))
    case = _case_read(case_id)
    return render_page(
        request, "settlements/case_detail.html", _context(request, case), partial=CASE_PARTIALS
    )


@require_POST
@role_required(*permissions.SETTLEMENT_PREPARERS)
def case_prepare(request, case_id: int):
    case = case_or_404(case_id)
    if (case.entrants or 0) > settings.PREPARE_INLINE_MAX_ENTRANTS:
        # Seconds of engine work: a worker does it while the page shows its progress.
        try:
            job = jobs.job_start(
                kind=Job.Kind.PREPARE,
                actor=request.user,
                target=f"case:{case.pk}",
                items=[jobs.NewItem(str(case.pk), f"Case #{case.pk} · {case.tournament}"[:255])],
                incident=case.incident,
                params={"note": request.POST.get("note", "")},
            )
        except Duplicate as duplicate:
            job = duplicate.existing
        return go_to(request, reverse("job_detail", args=[job.pk]))
    try:
        settlement = settlement_prepare(
            case=case, actor=request.user, note=request.POST.get("note", "")
        )
    except DomainError as error:
        context = _context(request, _case_read(case_id))
        context["next_step_error"] = error.message
        return render_invalid(request, "settlements/case_detail.html", context, partial="next_step")
    messages.success(request, f"{settlement} prepared. Check it, then submit it for approval.")
    return go_to(request, reverse("case_detail", args=[case.pk]))


@role_required(*permissions.CASE_WITHDRAWERS)
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
        "refusal": permissions.case_withdraw(
            case=case,
            user=request.user,
            approved_compensations=compensation.compensation_approved_ids(case),
        ),
        "settlements_withdrawn": [
            settlement
            for settlement in case.settlement_list
            if not settlement.is_adjustment and settlement_allows(settlement.status, "withdraw")
        ],
        "compensation_withdrawn": list(
            compensation.compensation_list(status=CompensationStatus.PROPOSED, case=case)
        ),
    }
    return confirming.answer_review(
        request,
        template="settlements/case_withdraw.html",
        context=context,
        form=form,
        perform=lambda reason: snapshots.case_withdraw(
            case=case, actor=request.user, reason=reason
        ),
        done_message=(
            f"Case #{case.pk} withdrawn. Tournament {case.tournament.operator_id} can be "
            "loaded again with the right snapshot."
        ),
        done_url=reverse("case_detail", args=[case.pk]),
        own_work=False,
    )


def _case_read(case_id: int) -> Case:
    """The case with the records its page lists, the same for every user: its decisions and
    settlements (selectors.case_detail), ``compensation_list``, ``withdrawal_list`` (with
    what the cashier said of each) and ``entry_figures``."""
    case = case_or_404(case_id)
    case.compensation_list = compensation.case_compensations(case)
    case.withdrawal_list = compensation.case_prize_withdrawals(case)
    withdrawals_collected(case.withdrawal_list)
    case.entry_figures = case_entry_figures(case) if case.is_crash else None
    return case


def _context(request, case: Case) -> dict:
    """The case page, with the actions settlements.access.permissions allows the user now (the
    services ask again when they act)."""
    user = request.user
    withdrawn = case.status == CaseStatus.WITHDRAWN
    compensations = case.compensation_list
    approved = [item.pk for item in compensations if item.status == CompensationStatus.APPROVED]
    settlements = case.settlement_list
    withdrawals = case.withdrawal_list
    for withdrawal in withdrawals:
        withdrawal.can_answer = (
            permissions.prize_withdrawal_approve(withdrawal=withdrawal, user=user) is None
        )
    decision = next(iter(case.decision_list), None)
    context = {
        "case": case,
        "tournament": case.tournament,
        "remedy": wording.case_remedy(case),
        "decision": decision,
        "invitations": invitations.invitations(request, case, decision),
        # Why the last settlement came back, while the case waits to be prepared again.
        "rejected": next(
            (item for item in settlements if item.status == SettlementStatus.REJECTED), None
        )
        if case.status == CaseStatus.REJECTED
        else None,
        "settlements": settlements,
        # Asked only where a prepare could be under way, so other pages pay no query for it.
        "preparing": jobs.case_being_prepared(case)
        if case.is_crash and case_allows(case.status, "prepare")
        else None,
        "can_prepare": permissions.settlement_prepare(case=case, user=user) is None,
        "awaiting_decision": case.status == CaseStatus.AWAITING_DECISION,
        "can_decide": permissions.decision_record(case=case, user=user) is None,
        "can_withdraw": permissions.case_withdraw(
            case=case, user=user, approved_compensations=approved
        )
        is None,
        "withdrawn": withdrawn,
        "in_force": crash_case_in_force(case.tournament_id) if withdrawn else None,
        "next_step_error": "",
        # Below the settlements: compensation proposals, prizes given in error, and for an
        # individual case its players and outcome.
        "compensations": compensations,
        "withdrawals": withdrawals,
        "can_propose": permissions.compensation_propose(
            case=case, user=user, has_settlement=bool(settlements)
        )
        is None,
        "can_decide_prize": permissions.prize_withdrawal_decide(case=case, user=user) is None,
        "can_resolve": permissions.individual_case_resolve(case=case, user=user) is None,
        "can_read_history": permissions.history_record_read(user=user, case_record=True) is None,
        "entry_figures": case.entry_figures,
        "entrants_list": case_entries.case_entrants(request, case),
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
