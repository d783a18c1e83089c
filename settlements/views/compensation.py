"""Compensation: the Tournament Manager's queue of proposals, and their answers.

GET      /compensation/                         the queue, by status (?status=&page=)
GET/POST /cases/<id>/compensation/new/          propose (operators, Tournament Managers)
GET      /compensation/<id>/                    one proposal with its players and amounts
GET/POST /compensation/<id>/approve/ | reject/  confirm, then answer (not one's own)
GET      /compensation/<id>/ledger.csv          an approved compensation's lines, streamed
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.urls import reverse
from django.views.decorators.http import require_safe

from settlements import desk_roles
from settlements.access import permissions
from settlements.access.decorators import role_required
from settlements.errors import DomainError, InvalidTransition, NotAllowed
from settlements.exports import ledger
from settlements.exports.spreadsheets import csv_download
from settlements.forms import CompensationForm, ReasonForm
from settlements.models import Compensation
from settlements.selectors.payments.lines import releases_of
from settlements.selectors.payments.reconciliation import reconciliation
from settlements.selectors.queues import compensation_queue
from settlements.services import compensation as compensation_services
from settlements.site_policy import IcmFlag
from settlements.views import confirming, second_opinion
from settlements.views.lookups import case_or_404, compensation_or_404
from settlements.views.paging import CountedPaginator, page_number
from settlements.views.rendering import go_to, render_invalid, render_page
from settlements.workflow import CompensationStatus

PER_PAGE = 25


ITEMS_PER_PAGE = 50


STATUS_TABS = (
    (CompensationStatus.PROPOSED, "Awaiting approval"),
    (CompensationStatus.APPROVED, "Approved"),
    (CompensationStatus.REJECTED, "Rejected"),
    (CompensationStatus.WITHDRAWN, "Withdrawn"),
    ("all", "All"),
)


# What the Tournament Manager's two answers do: service, permission, words for the page.
COMPENSATION_ACTIONS = {
    "approve": (
        compensation_services.compensation_approve,
        permissions.compensation_approve,
        "Approve",
        "approved",
    ),
    "reject": (
        compensation_services.compensation_reject,
        permissions.compensation_reject,
        "Reject",
        "rejected",
    ),
}


@require_safe
@role_required(*desk_roles.COMPENSATION_READERS)
def compensation_list(request):
    status = request.GET.get("status") or CompensationStatus.PROPOSED
    if status not in dict(STATUS_TABS):
        status = CompensationStatus.PROPOSED
    queue = compensation_queue(None if status == "all" else status)
    context = {
        "status": status,
        "tabs": STATUS_TABS,
        "page": Paginator(queue, PER_PAGE).get_page(page_number(request)),
    }
    return render_page(
        request, "settlements/compensation_list.html", context, partial="compensation_list"
    )


@role_required(*permissions.COMPENSATION_PROPOSERS)
def compensation_new(request, case_id: int):
    case = case_or_404(case_id)
    currency = case.tournament.currency
    # ?from=icm: the flagged players of the ICM second opinion, each with what the policy pays
    # them short of their stack's ICM value, for the Tournament Manager to edit.
    initial = (
        second_opinion.compensation_initial(case, currency)
        if request.GET.get("from") == "icm"
        else None
    )
    form = CompensationForm(request.POST or None, currency=currency, initial=initial)
    context = {"case": case, "tournament": case.tournament, "form": form}
    template = "settlements/compensation_new.html"
    if request.method == "POST":
        if form.is_valid():
            try:
                compensation = compensation_services.compensation_propose(
                    case=case,
                    actor=request.user,
                    reason=form.cleaned_data["reason"],
                    entries=form.cleaned_data["entries"],
                    from_icm=form.cleaned_data["from_icm"],
                )
            except NotAllowed:
                raise PermissionDenied from None
            except DomainError as error:
                form.add_domain_error(error)
            else:
                messages.success(
                    request, f"{compensation} proposed; another Tournament Manager decides on it."
                )
                return go_to(request, reverse("compensation_detail", args=[compensation.pk]))
        return render_invalid(request, template, context, partial="compensation_form")
    return render_page(request, template, context, partial="compensation_form")


@require_safe
@role_required(*desk_roles.COMPENSATION_READERS)
def compensation_detail(request, compensation_id: int):
    compensation = compensation_or_404(compensation_id)
    context = _compensation_context(request, compensation)
    return render_page(
        request,
        "settlements/compensation_detail.html",
        context,
        partial={"compensation-items": "items", "compensation-actions": "actions"},
    )


@role_required(*permissions.APPROVERS)
def compensation_approve(request, compensation_id: int):
    return _answer(request, compensation_id, "approve")


@role_required(*permissions.APPROVERS)
def compensation_reject(request, compensation_id: int):
    return _answer(request, compensation_id, "reject")


@require_safe
@role_required(*permissions.LEDGER_READERS)
def compensation_ledger(request, compensation_id: int):
    compensation = compensation_or_404(compensation_id)
    try:
        rows = ledger.compensation_ledger_csv(compensation)
    except InvalidTransition:
        raise Http404("Only an approved compensation has a ledger to pay.") from None
    return csv_download(rows, ledger.ledger_filename(compensation))


def _answer(request, compensation_id: int, action: str):
    compensation = compensation_or_404(compensation_id)
    service, permission, verb, done = COMPENSATION_ACTIONS[action]
    form = ReasonForm(request.POST or None)
    refusal = permission(compensation=compensation, user=request.user)
    context = {
        "compensation": compensation,
        "case": compensation.case,
        "currency": compensation.currency,
        "action": action,
        "verb": verb,
        "form": form,
        "refusal": refusal,
        "players": len({item.player for item in compensation.items.all()}),
    }
    return confirming.answer_review(
        request,
        template="settlements/compensation_confirm.html",
        context=context,
        form=form,
        perform=lambda reason: service(
            compensation=compensation, actor=request.user, reason=reason
        ),
        done_message=f"{compensation} {done}.",
        done_url=reverse("compensation_detail", args=[compensation.pk]),
        own_work=refusal is not None and refusal.kind == permissions.OWN_WORK,
    )


def _icm_rows(compensation: Compensation, page) -> list[dict] | None:
    """The page's items beside the ICM figures kept with a proposal made from the second
    opinion, so that the approver sees what each amount answers; a player added by hand has
    no figures, or figures the threshold does not flag, and says so."""
    figures = compensation.icm_figures
    if not figures:
        return None
    flag = IcmFlag(**figures["flag"])
    rows = []
    for item in page:
        player = figures["players"].get(item.player)
        flagged = player is not None and flag.flags(player["difference"], player["icm"])
        rows.append({"item": item, "icm": player, "flagged": flagged})
    return rows


def _compensation_context(request, compensation: Compensation) -> dict:
    user = request.user
    items = compensation.items.all()
    refusal = permissions.compensation_approve(compensation=compensation, user=user)
    page = CountedPaginator(items, ITEMS_PER_PAGE, count=len(items)).get_page(page_number(request))
    return {
        "compensation": compensation,
        "case": compensation.case,
        "currency": compensation.currency,
        "page": page,
        "icm_rows": _icm_rows(compensation, page),
        "can_answer": refusal is None,
        "own_work": refusal is not None and refusal.kind == permissions.OWN_WORK,
        "can_download": compensation.status == CompensationStatus.APPROVED,
        "payments": reconciliation(releases_of(compensation=compensation.pk))
        if compensation.status == CompensationStatus.APPROVED
        else None,
    }
