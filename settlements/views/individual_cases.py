"""Individual cases: players hit while the tournament went on for the rest.

GET      /individual-cases/                     individual cases, open first
GET/POST /individual-cases/new/                 open one (Tournament Managers)
GET/POST /cases/<id>/resolve/                   resolve one, with a confirmation
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.urls import reverse
from django.views.decorators.http import require_safe

from settlements import desk_roles
from settlements.access import permissions
from settlements.access.decorators import role_required
from settlements.errors import DomainError
from settlements.forms import IndividualCaseForm, ResolveForm
from settlements.models import Case
from settlements.selectors.cases import case_list
from settlements.selectors.compensation import case_compensations
from settlements.services import individual_cases
from settlements.views import confirming
from settlements.views.compensation import PER_PAGE
from settlements.views.lookups import case_or_404
from settlements.views.paging import page_number
from settlements.views.rendering import go_to, render_invalid, render_page
from settlements.workflow import CaseStatus, CompensationStatus


@require_safe
@role_required(*desk_roles.INDIVIDUAL_CASE_READERS)
def individual_case_list(request):
    status = request.GET.get("status") or CaseStatus.OPEN
    if status not in (CaseStatus.OPEN, CaseStatus.RESOLVED):
        status = CaseStatus.OPEN
    cases = case_list(kind=Case.Kind.INDIVIDUAL, status=status)
    context = {
        "status": status,
        "tabs": ((CaseStatus.OPEN, "Open"), (CaseStatus.RESOLVED, "Resolved")),
        "page": Paginator(cases, PER_PAGE).get_page(page_number(request)),
        "can_open": permissions.individual_case_open(user=request.user) is None,
    }
    return render_page(
        request, "settlements/individual_case_list.html", context, partial="individual_cases"
    )


@role_required(*permissions.INDIVIDUAL_CASE_HANDLERS)
def individual_case_new(request):
    form = IndividualCaseForm(request.POST or None)
    context = {"form": form}
    template = "settlements/individual_case_new.html"
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                case = individual_cases.individual_case_open(
                    tournament=data["tournament"],
                    actor=request.user,
                    players=data["players"],
                    description=data["description"],
                    incident=data["incident"],
                )
            except DomainError as error:
                form.add_domain_error(error)
            else:
                messages.success(request, f"Individual case #{case.pk} opened.")
                return go_to(request, reverse("case_detail", args=[case.pk]))
        return render_invalid(request, template, context, partial="case_form")
    return render_page(request, template, context, partial="case_form")


@role_required(*permissions.INDIVIDUAL_CASE_HANDLERS)
def individual_case_resolve(request, case_id: int):
    case = case_or_404(case_id)
    if case.is_crash:
        raise Http404("A crash case ends with its settlement.")
    form = ResolveForm(request.POST or None)
    context = {
        "case": case,
        "tournament": case.tournament,
        "form": form,
        "confirming": False,
        # Compensation still waiting is not answered by resolving: said before, not after.
        "waiting_compensation": [
            compensation
            for compensation in case_compensations(case)
            if compensation.status == CompensationStatus.PROPOSED
        ],
    }
    template = "settlements/individual_case_resolve.html"
    if request.method != "POST":
        return render_page(request, template, context, partial="resolve_form")

    def perform(data):
        individual_cases.individual_case_resolve(
            case=case, actor=request.user, outcome=data["outcome"]
        )
        return f"Case #{case.pk} resolved.", reverse("case_detail", args=[case.pk])

    return confirming.post_with_confirmation(
        request,
        template=template,
        context=context,
        form=form,
        partial="resolve_form",
        perform=perform,
    )
