"""Prizes given in error: a Tournament Manager proposes to withdraw one (another approves or
rejects it) or leaves it, each with a confirmation.

GET/POST /cases/<id>/prize-withdrawal/               propose a withdrawal, or leave the prize
GET/POST /prize-withdrawals/<id>/approve/            approve a withdrawal (not one's own)
GET/POST /prize-withdrawals/<id>/reject/             reject it, saying why
"""

from django.http import Http404
from django.urls import reverse

from settlements.access import permissions
from settlements.access.decorators import role_required
from settlements.forms import PrizeWithdrawalForm, ReasonForm
from settlements.models import PrizeWithdrawal
from settlements.selectors.compensation import prize_withdrawal_detail
from settlements.services import individual_cases
from settlements.views import confirming
from settlements.views.lookups import case_or_404
from settlements.views.rendering import render_page

ACTIONS = {
    "approve": (
        individual_cases.prize_withdrawal_approve,
        permissions.prize_withdrawal_approve,
        "Approve",
        "approved: its line goes to the cashier",
    ),
    "reject": (
        individual_cases.prize_withdrawal_reject,
        permissions.prize_withdrawal_reject,
        "Reject",
        "rejected: nothing is collected",
    ),
}


@role_required(*permissions.PRIZE_WITHDRAWAL_DECIDERS)
def prize_withdrawal_new(request, case_id: int):
    case = case_or_404(case_id)
    form = PrizeWithdrawalForm(request.POST or None, currency=case.tournament.currency)
    context = {"case": case, "tournament": case.tournament, "form": form, "confirming": False}
    template = "settlements/prize_withdrawal_new.html"
    if request.method != "POST":
        return render_page(request, template, context, partial="withdrawal_form")

    def perform(data):
        withdrawal = individual_cases.prize_withdrawal_decide(
            case=case,
            actor=request.user,
            player=data["player"],
            prize=data["prize"],
            outcome=data["outcome"],
            reason=data["reason"],
            amount=data["amount_minor"],
            unit=data["unit"],
        )
        if withdrawal.outcome == PrizeWithdrawal.Outcome.WITHDRAW:
            message = (
                f"{withdrawal} proposed; another Tournament Manager approves it before the "
                "cashier collects anything."
            )
        else:
            message = f"Recorded for {withdrawal.player}: the prize is left with them."
        return message, reverse("case_detail", args=[case.pk])

    return confirming.post_with_confirmation(
        request,
        template=template,
        context=context,
        form=form,
        partial="withdrawal_form",
        perform=perform,
    )


@role_required(*permissions.APPROVERS)
def prize_withdrawal_approve(request, withdrawal_id: int):
    return _answer(request, withdrawal_id, "approve")


@role_required(*permissions.APPROVERS)
def prize_withdrawal_reject(request, withdrawal_id: int):
    return _answer(request, withdrawal_id, "reject")


def _answer(request, withdrawal_id: int, action: str):
    try:
        withdrawal = prize_withdrawal_detail(withdrawal_id)
    except PrizeWithdrawal.DoesNotExist:
        raise Http404("No such prize withdrawal.") from None
    service, permission, verb, done = ACTIONS[action]
    form = ReasonForm(request.POST or None)
    refusal = permission(withdrawal=withdrawal, user=request.user)
    context = {
        "withdrawal": withdrawal,
        "case": withdrawal.case,
        "tournament": withdrawal.case.tournament,
        "action": action,
        "verb": verb,
        "form": form,
        "refusal": refusal,
    }
    return confirming.answer_review(
        request,
        template="settlements/prize_withdrawal_confirm.html",
        context=context,
        form=form,
        perform=lambda reason: service(withdrawal=withdrawal, actor=request.user, reason=reason),
        done_message=f"{withdrawal} {done}.",
        done_url=reverse("case_detail", args=[withdrawal.case_id]) + "#case-followups",
        own_work=refusal is not None and refusal.kind == permissions.OWN_WORK,
    )
