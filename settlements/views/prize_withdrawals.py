"""Prizes given in error: a Tournament Manager withdraws one or leaves it, with a confirmation.

GET/POST /cases/<id>/prize-withdrawal/          withdraw or leave a prize given in error
"""

from django.contrib import messages
from django.urls import reverse

from settlements import roles, services
from settlements.errors import DomainError
from settlements.forms import PrizeWithdrawalForm
from settlements.views import confirming
from settlements.views.decorators import role_required
from settlements.views.lookups import case_or_404
from settlements.views.rendering import go_to, render_invalid, render_page


@role_required(roles.TOURNAMENT_MANAGER)
def prize_withdrawal_new(request, case_id: int):
    case = case_or_404(case_id)
    form = PrizeWithdrawalForm(request.POST or None, currency=case.tournament.currency)
    context = {"case": case, "tournament": case.tournament, "form": form, "confirming": False}
    template = "settlements/prize_withdrawal_new.html"
    if request.method != "POST":
        return render_page(request, template, context, partial="withdrawal_form")
    if not form.is_valid():
        return render_invalid(request, template, context, partial="withdrawal_form")
    step = confirming.step(request)
    if step == confirming.CONFIRM:
        data = form.cleaned_data
        try:
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
        except DomainError as error:
            form.add_domain_error(error)
            return render_invalid(request, template, context, partial="withdrawal_form")
        messages.success(
            request,
            f"Recorded for {withdrawal.player}: {withdrawal.get_outcome_display().lower()}.",
        )
        return go_to(request, reverse("case_detail", args=[case.pk]))
    context["confirming"] = step != confirming.EDIT
    return render_page(request, template, context, partial="withdrawal_form")
