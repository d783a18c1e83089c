"""Prizes given in error: a Tournament Manager withdraws one or leaves it, with a confirmation.

GET/POST /cases/<id>/prize-withdrawal/          withdraw or leave a prize given in error
"""

from django.urls import reverse

from settlements import services
from settlements.access import roles
from settlements.access.decorators import role_required
from settlements.forms import PrizeWithdrawalForm
from settlements.views import confirming
from settlements.views.lookups import case_or_404
from settlements.views.rendering import render_page


@role_required(roles.TOURNAMENT_MANAGER)
def prize_withdrawal_new(request, case_id: int):
    case = case_or_404(case_id)
    form = PrizeWithdrawalForm(request.POST or None, currency=case.tournament.currency)
    context = {"case": case, "tournament": case.tournament, "form": form, "confirming": False}
    template = "settlements/prize_withdrawal_new.html"
    if request.method != "POST":
        return render_page(request, template, context, partial="withdrawal_form")

    def perform(data):
        withdrawal = services.prize_withdrawal_decide(
            case=case,
            actor=request.user,
            player=data["player"],
            prize=data["prize"],
            outcome=data["outcome"],
            reason=data["reason"],
            amount=data["amount_minor"],
            unit=data["unit"],
        )
        message = f"Recorded for {withdrawal.player}: {withdrawal.get_outcome_display().lower()}."
        return message, reverse("case_detail", args=[case.pk])

    return confirming.post_with_confirmation(
        request,
        template=template,
        context=context,
        form=form,
        partial="withdrawal_form",
        perform=perform,
    )
