"""Following the money after approval: reconciliation, the payments queue, re-issues, the
auditor's answer, and an incident's payment batch.

GET      /payments/                               failed lines, overdue lines, re-issues to answer
GET/POST /payments/lines/<key>/reissue/           propose paying a failed line again
GET/POST /payments/reissues/<id>/approve/|reject/ another Tournament Manager answers
GET      /payments/audit/                         every approved line paid exactly once?
GET      /payments/audit.csv                      every approved line with what became of it
GET      /incidents/<id>/payments.csv|.json       the incident's payment batch
"""

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, StreamingHttpResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_safe

from settlements import bounds
from settlements.access import permissions, roles
from settlements.access.decorators import role_required
from settlements.errors import DomainError, NotAllowed
from settlements.exports import ledger
from settlements.exports.spreadsheets import csv_download
from settlements.forms import ReasonForm
from settlements.models import Incident, Reissue
from settlements.selectors.compensation import prizes_taken_back
from settlements.selectors.payments import lines as payment_lines
from settlements.selectors.payments import queues as payment_queues
from settlements.selectors.payments import reconciliation as payment_reconciliation
from settlements.selectors.queues import overdue_line_count
from settlements.services import reissues as reissue_services
from settlements.views import confirming
from settlements.views.lookups import incident_or_404
from settlements.views.rendering import go_to, render_invalid, render_page
from settlements.views.sorting import chosen_sort, sort_columns

PER_PAGE = 50
# The failed lines' sortable columns, by sort key (selectors.FAILED_SORTS).
FAILED_COLUMNS = {"key": "Key", "player": "Player", "amount": "Amount", "when": "When"}
# The waiting re-issues' sortable columns, by sort key (selectors.REISSUE_SORTS).
REISSUE_COLUMNS = {"player": "Player", "amount": "Amount", "proposed": "Proposed by"}
TABS = (("failed", "Failed"), ("overdue", "Not confirmed in time"), ("reissues", "Re-issues"))
REISSUE_ACTIONS = {
    "approve": (
        reissue_services.reissue_approve,
        permissions.reissue_approve,
        "Approve",
        "approved",
    ),
    "reject": (reissue_services.reissue_reject, permissions.reissue_reject, "Reject", "rejected"),
}


@require_safe
@role_required(*permissions.PAYMENT_READERS)
def payments_queue(request):
    tab = request.GET.get("tab") or "failed"
    if tab not in dict(TABS):
        tab = "failed"
    incident = _incident_filter(request)
    releases = payment_lines.releases_of(incident=incident.pk) if incident else None
    cutoff = timezone.now() - timedelta(hours=settings.PAYMENT_CONFIRMATION_HOURS)
    context = {
        "tab": tab,
        "tabs": TABS,
        "incident": incident,
        "hours": settings.PAYMENT_CONFIRMATION_HOURS,
        "can_propose": roles.has_role(request.user, *permissions.REISSUE_PROPOSERS),
        "can_answer": roles.has_role(request.user, *permissions.APPROVERS),
    }
    if tab == "failed":
        sorting = chosen_sort(request, payment_queues.FAILED_SORTS, "key")
        failed = payment_queues.failed_lines(
            releases, sort=sorting.key, descending=sorting.descending
        )
        context["page"] = Paginator(failed, PER_PAGE).get_page(request.GET.get("page"))
        context["columns"] = sort_columns(request, sorting, FAILED_COLUMNS)
    elif tab == "overdue":
        after = _place(request.GET.get("after"))
        lines = payment_queues.overdue_lines(cutoff, releases, after=after)
        shown = [line for line, _ in zip(lines, range(PER_PAGE + 1), strict=False)]
        context.update(
            {
                "lines": shown[:PER_PAGE],
                "next_after": shown[PER_PAGE - 1].position if len(shown) > PER_PAGE else None,
                "after": after,
                "overdue_count": overdue_line_count(cutoff, releases),
            }
        )
    else:
        sorting = chosen_sort(request, payment_queues.REISSUE_SORTS, "proposed")
        reissues = payment_queues.proposed_reissues(sort=sorting.key, descending=sorting.descending)
        context["page"] = Paginator(reissues, PER_PAGE).get_page(request.GET.get("page"))
        context["columns"] = sort_columns(request, sorting, REISSUE_COLUMNS)
    return render_page(request, "settlements/payments_queue.html", context, partial="queue")


@role_required(*permissions.REISSUE_PROPOSERS)
def reissue_new(request, key: str):
    line = payment_lines.lines_of([key]).get(key)
    if line is None:
        raise Http404("No approved line has this key.")
    state = next(payment_reconciliation.with_payments([line]))
    form = ReasonForm(request.POST if request.method == "POST" else None)
    context = {
        "line": line,
        "state": state,
        "form": form,
        "key": key,
        "taken_back": prizes_taken_back(line.player, line.release.case_id),
    }
    template = "settlements/reissue_new.html"
    if request.method == "POST" and form.is_valid():
        try:
            reissue = reissue_services.reissue_propose(
                actor=request.user, idempotency_key=key, reason=form.cleaned_data["reason"]
            )
        except NotAllowed:
            raise PermissionDenied from None
        except DomainError as error:
            form.add_domain_error(error)
        else:
            messages.success(
                request, f"{reissue} proposed; another Tournament Manager decides on it."
            )
            return go_to(request, f"{reverse('payments')}?tab=reissues")
    if form.is_bound:
        return render_invalid(request, template, context, partial="reissue_form")
    return render_page(request, template, context, partial="reissue_form")


@role_required(*permissions.APPROVERS)
def reissue_approve(request, reissue_id: int):
    return _answer(request, reissue_id, "approve")


@role_required(*permissions.APPROVERS)
def reissue_reject(request, reissue_id: int):
    return _answer(request, reissue_id, "reject")


@require_safe
@role_required(*permissions.PAYMENT_READERS)
def payments_audit(request):
    incident = _incident_filter(request)
    releases = payment_lines.releases_of(incident=incident.pk if incident else None)
    context = {"incident": incident, "answer": payment_reconciliation.exactly_once(releases)}
    return render_page(request, "settlements/payments_audit.html", context, partial="answer")


@require_safe
@role_required(*permissions.PAYMENT_READERS)
def payments_audit_export(request):
    incident = _incident_filter(request)
    releases = payment_lines.releases_of(incident=incident.pk if incident else None)
    name = f"incident-{incident.pk}" if incident else "all"
    return csv_download(ledger.audit_csv(releases), f"crashdesk-payments-{name}.csv")


@require_safe
@role_required(*permissions.LEDGER_READERS)
def incident_payments_csv(request, incident_id: int):
    incident = incident_or_404(incident_id)
    return csv_download(ledger.incident_batch_csv(incident), ledger.batch_filename(incident, "csv"))


@require_safe
@role_required(*permissions.LEDGER_READERS)
def incident_payments_json(request, incident_id: int):
    incident = incident_or_404(incident_id)
    response = StreamingHttpResponse(
        ledger.incident_batch_json(incident), content_type="application/json"
    )
    filename = ledger.batch_filename(incident, "json")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _answer(request, reissue_id: int, action: str):
    try:
        reissue = payment_queues.reissue_detail(reissue_id)
    except Reissue.DoesNotExist:
        raise Http404("No such re-issue.") from None
    service, permission, verb, done = REISSUE_ACTIONS[action]
    form = ReasonForm(request.POST or None)
    extra = {"paid_reference": None} if action == "approve" else {}
    refusal = permission(reissue=reissue, user=request.user, **extra)
    context = {"reissue": reissue, "action": action, "verb": verb, "form": form, "refusal": refusal}
    return confirming.answer_review(
        request,
        template="settlements/reissue_confirm.html",
        context=context,
        form=form,
        perform=lambda reason: service(reissue=reissue, actor=request.user, reason=reason),
        done_message=f"{reissue} {done}.",
        done_url=f"{reverse('payments')}?tab=reissues",
        own_work=refusal is not None and refusal.kind == permissions.OWN_WORK,
    )


def _incident_filter(request) -> Incident | None:
    raw = request.GET.get("incident", "")
    if not raw:
        return None
    number = bounds.whole_number(raw)
    if number is None:
        raise Http404("No such incident.")
    return incident_or_404(number)


def _place(raw: str | None) -> int:
    return bounds.whole_number(raw) or 0
