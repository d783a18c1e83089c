"""The Marketing Manager's decision: the options side by side, each previewed as the
settlement the engine would compute, then a reason, a confirmation and the record.

GET  /cases/<id>/decision/      the options with their previews and the form
POST /cases/<id>/decision/      check, then restate (step 2), then record (step=confirm)
"""

from django.http import Http404
from django.urls import reverse

from settlements import charts, wording
from settlements.access import permissions
from settlements.access.decorators import role_required
from settlements.forms import DecisionForm
from settlements.models import Case, Stage
from settlements.selectors.cases import case_entrants
from settlements.services.decisions import decision_record
from settlements.views import cached_previews, confirming
from settlements.views.lookups import case_or_404
from settlements.views.paging import CountedPaginator, page_number
from settlements.views.rendering import render_page

INVITEES_PER_PAGE = 20

# Swap targets of the decision page: element id -> partialdef.
DECISION_PARTIALS = {"decision-form": "decision_form", "invitees": "invitees"}


@role_required(*permissions.DECISION_MAKERS)
def case_decision(request, case_id: int):
    case = _case(case_id)
    refusal = permissions.decision_record(case=case, user=request.user)
    decision = next(iter(case.decision_list), None)
    # A decision that can no longer change is shown with its radios and date disabled.
    locked = refusal is not None
    initial = _in_force(decision) if locked else None
    form = DecisionForm(request.POST or None, case=case, locked=locked, initial=initial)
    context = _context(request, case, form, decision=decision, refusal=refusal)
    template = "settlements/case_decision.html"
    if request.method != "POST":
        return render_page(request, template, context, partial=DECISION_PARTIALS)

    if not context["can_decide"]:
        form.add_error(None, context["closed_reason"])

    def perform(data):
        decision = decision_record(
            case=case,
            actor=request.user,
            option=data["option"],
            reason=data["reason"],
            reschedule_at=data["reschedule_at"],
            invited_players=form.invited_players,
        )
        label = wording.option_label(decision.option)
        message = f"Decision recorded for case #{case.pk}: {label}."
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


def _in_force(decision) -> dict | None:
    if decision is None:
        return None
    return {
        "option": decision.option,
        "reschedule_at": decision.reschedule_at,
        "invited": "\n".join(decision.invited_players),
    }


def _context(request, case: Case, form: DecisionForm, *, decision, refusal) -> dict:
    currency = case.tournament.currency
    reads = cached_previews.decision_page_reads(case)
    previews = reads.previews
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
                "seats": _seats(case, preview),
            }
        )

    # A reschedule invites every entrant in the early stage, the players still in later on.
    remaining_only = case.stage != Stage.EARLY
    invite_count = case.remaining if remaining_only else case.entrants
    invitees = CountedPaginator(
        case_entrants(case, remaining_only=remaining_only),
        INVITEES_PER_PAGE,
        count=invite_count or 0,
    ).get_page(page_number(request, "invite_page"))

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
        "decision": decision,
        "can_decide": refusal is None,
        "closed_reason": refusal or "",
        "confirming": False,
        "comparison": _comparison(reads.comparison, form),
    }


def _seats(case: Case, preview) -> dict | None:
    """What a satellite option's seats come to: how many, their worth at the seat value, and
    the rest of the pool paid in T$. None for other tournaments."""
    seat_value = case.tournament.seat_value
    if case.tournament.type != "satellite" or not seat_value or preview.problem:
        return None
    pool = preview.totals.by_source.get("pool", {})
    count = pool.get("tickets", 0)
    return {
        "count": count,
        "value": seat_value,
        "worth": count * seat_value,
        "tdollars": pool.get("tdollars", 0),
        "pool": case.pool,
    }


def _comparison(comparison, form: DecisionForm) -> dict | None:
    """The comparison with the options' labels, for the table."""
    if comparison is None:
        return None
    first, second = comparison.options
    # A reschedule pays nothing now but gives a seat in the replay: it is not "0 players get
    # more", so the page says what each option gives instead of counting who gains.
    replay = "reschedule" in comparison.options
    return {
        "first": _label(form, first),
        "second": _label(form, second),
        "replay": replay,
        "rescheduled_first": first == "reschedule",
        "paid_now": comparison.better_first if second == "reschedule" else comparison.better_second,
        "split": _label(form, first if second == "reschedule" else second) if replay else "",
        "reschedule": _label(form, "reschedule") if replay else "",
        "better_first": comparison.better_first,
        "better_second": comparison.better_second,
        "same": comparison.same,
        "in_points": comparison.in_points,
        "rows": [
            {
                "row": row,
                "gainer": _label(form, second if row.difference > 0 else first),
                "gain": abs(row.difference),
            }
            for row in comparison.largest
        ],
    }


def _label(form: DecisionForm, option: str) -> str:
    return dict(form.fields["option"].choices).get(option, option)
