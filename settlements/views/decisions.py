"""The Marketing Manager's decision: the options side by side, each previewed as the
settlement the engine would compute, then a reason, a confirmation and the record.

GET  /cases/<id>/decision/      the options with their previews and the form
POST /cases/<id>/decision/      check, then restate (step 2), then record (step=confirm)
"""

from django.http import Http404
from django.urls import reverse

from settlements import charts, permissions, roles, selectors, services, wording
from settlements.forms import DecisionForm
from settlements.models import Case, Stage
from settlements.views import confirming
from settlements.views.decorators import role_required
from settlements.views.lookups import case_or_404
from settlements.views.paging import CountedPaginator, page_number
from settlements.views.rendering import render_page

INVITEES_PER_PAGE = 20

# Swap targets of the decision page: element id -> partialdef.
DECISION_PARTIALS = {"decision-form": "decision_form", "invitees": "invitees"}


@role_required(roles.MARKETING_MANAGER)
def case_decision(request, case_id: int):
    case = _case(case_id)
    form = DecisionForm(request.POST or None, case=case)
    context = _context(request, case, form)
    template = "settlements/case_decision.html"
    if request.method != "POST":
        return render_page(request, template, context, partial=DECISION_PARTIALS)

    if not context["can_decide"]:
        form.add_error(None, context["closed_reason"])

    def perform(data):
        decision = services.decision_record(
            case=case,
            actor=request.user,
            option=data["option"],
            reason=data["reason"],
            reschedule_at=data["reschedule_at"],
            invited_players=form.invited_players,
        )
        message = f"Decision recorded for case #{case.pk}: {decision.option}."
        return message, reverse("case_detail", args=[case.pk])

    def restate(page):
        option = form.cleaned_data["option"]
        page["chosen"] = next(item for item in page["options"] if item["option"] == option)
        page["custom_invitees"] = form.invited_players

    return confirming.post_with_confirmation(
        request,
        template=template,
        context=context,
        form=form,
        partial="decision_form",
        perform=perform,
        restate=restate,
    )


def _case(case_id: int) -> Case:
    case = case_or_404(case_id)
    if not case.is_crash:
        raise Http404("An individual case takes no Marketing decision.")
    return case


def _context(request, case: Case, form: DecisionForm) -> dict:
    currency = case.tournament.currency
    previews = selectors.decision_previews(case)
    options = []
    radios = {radio.data["value"]: radio for radio in form["option"]}
    # The charts sit side by side to be compared by eye, so they share one y axis.
    scale_top = max((point.amount for p in previews for point in p.chart), default=0)
    for preview in previews:
        chart = None
        if preview.chart:
            title = f"{_label(form, preview.option)}: payout by chip rank"
            chart = charts.payout_chart(
                preview.chart,
                count=preview.players_paid,
                currency=currency,
                title=title,
                title_id=f"preview-{preview.option}",
                scale_top=scale_top,
            )
        options.append(
            {
                "option": preview.option,
                "label": _label(form, preview.option),
                "text": wording.option_description(
                    case.tournament.type, case.stage, preview.option
                ),
                "radio": radios.get(preview.option),
                "preview": preview,
                "chart": chart,
            }
        )

    # A reschedule invites every entrant in the early stage, the players still in later on.
    remaining_only = case.stage != Stage.EARLY
    invite_count = case.remaining if remaining_only else case.entrants
    invitees = CountedPaginator(
        selectors.case_entrants(case, remaining_only=remaining_only),
        INVITEES_PER_PAGE,
        count=invite_count or 0,
    ).get_page(page_number(request, "invite_page"))

    refusal = permissions.decision_record(case=case, user=request.user)
    return {
        "case": case,
        "tournament": case.tournament,
        "currency": currency,
        "form": form,
        "options": options,
        "offers_reschedule": "reschedule" in case.decision_options,
        "invite_remaining_only": remaining_only,
        "invite_count": invite_count,
        "invitees": invitees,
        "decision": next(iter(case.decisions.all()), None),
        "can_decide": refusal is None,
        "closed_reason": refusal or "",
        "confirming": False,
    }


def _label(form: DecisionForm, option: str) -> str:
    return dict(form.fields["option"].choices).get(option, option)
