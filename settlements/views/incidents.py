"""The "report a crash" wizard; each step has its own URL so reload and back behave.

1. /incidents/new/                   incident details -> services.incident_report
2. /incidents/<id>/tournaments/      the tournaments it hit (pick a registered one, or let the
                                     snapshot register it); also the incident's own page
3. /incidents/<id>/upload/           the snapshot, as a file or pasted -> case_load_snapshot
4. /cases/<id>/                      the stage and the remedy (views/cases.py)

And the end of an outage, once its work is done:

GET/POST /incidents/<id>/close/      close the incident, with a reason

Its bulk actions are in views/bulk.py, their progress in views/jobs.py.
"""

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404
from django.urls import reverse

from settlements import bounds
from settlements.access import permissions, roles
from settlements.access.decorators import role_required
from settlements.errors import DomainError, Duplicate
from settlements.forms import IncidentForm, ReasonForm, SnapshotForm
from settlements.models import Case, Incident, Stage, Tournament, TournamentType
from settlements.rules import InvalidInput
from settlements.selectors import bulk, incidents
from settlements.selectors.payments.lines import releases_of
from settlements.selectors.payments.reconciliation import reconciliation
from settlements.services import incidents as incident_services
from settlements.services.snapshots import case_load_snapshot
from settlements.views.lookups import incident_or_404, tournament_or_404
from settlements.views.paging import CountedPaginator, page_number
from settlements.views.rendering import go_to, render_invalid, render_page
from settlements.workflow import CaseStatus

TOURNAMENTS_PER_PAGE = 10
CASES_PER_PAGE = 25
JOBS_SHOWN = 5
REFUSED_SHOWN = 20
SORT_LABELS = {
    "case": "Case",
    "tournament": "Tournament",
    "type": "Type",
    "stage": "Stage",
    "entrants": "Entrants",
    "pool": "Pool",
    "status": "Status",
}

WIZARD_STEPS = ("Incident details", "Tournaments hit", "Snapshot", "Stage and remedy")


@role_required(*permissions.INCIDENT_REPORTERS)
def incident_new(request):
    form = IncidentForm(request.POST or None)
    context = {"form": form, "steps": _steps(0)}
    if request.method == "POST" and form.is_valid():
        try:
            incident = incident_services.incident_report(actor=request.user, **form.cleaned_data)
        except DomainError as error:
            form.add_domain_error(error)
        else:
            return go_to(request, reverse("incident_tournaments", args=[incident.pk]))
    if form.is_bound:
        return render_invalid(
            request, "settlements/incident_new.html", context, partial="incident_form"
        )
    return render_page(request, "settlements/incident_new.html", context, partial="incident_form")


@role_required(*roles.DESK_ROLES)
def incident_tournaments(request, incident_id: int):
    incident = incident_or_404(incident_id)
    search = request.GET.get("q", "").strip()
    candidates = Paginator(incidents.tournaments_without_crash_case(search), TOURNAMENTS_PER_PAGE)
    chosen = bulk.WorkbenchFilter.from_query(request.GET)
    counts = bulk.incident_counts(incident)
    workbench = bulk.incident_workbench(incident, chosen)
    if chosen.stage or chosen.type:
        paginator = Paginator(workbench, CASES_PER_PAGE)
    else:
        # Filtered by status at most: the counts by status already say how many there are.
        known = sum(row["count"] for row in counts if chosen.status in ("", row["status"]))
        paginator = CountedPaginator(workbench, CASES_PER_PAGE, count=known)
    cases = paginator.get_page(page_number(request, "cases_page"))
    for case in cases:
        case.next_step = bulk.NEXT_STEP[case.status]
    refused = incidents.incident_refused_files(incident, limit=REFUSED_SHOWN)
    context = {
        "incident": incident,
        "cases": cases,
        "sort_columns": [
            (key, (label, chosen.query(sort=_toggled(chosen, key))))
            for key, label in SORT_LABELS.items()
        ],
        "chosen": chosen,
        "counts": counts,
        # How many cases are in each status: the bulk actions show only where they have work.
        "in_status": {row["status"]: row["count"] for row in counts},
        "open_work": sum(row["count"] for row in counts if row["who"]),
        "jobs": incidents.incident_jobs(incident, limit=JOBS_SHOWN),
        "refused_files": refused[:REFUSED_SHOWN],
        "more_refused": len(refused) > REFUSED_SHOWN,
        # None hides the panel: only those who follow payments see them.
        "incident_payments": _incident_payments(request.user, incident),
        "choices": {
            "status": CaseStatus.choices,
            "stage": Stage.choices,
            "type": TournamentType.choices,
        },
        "search": search,
        "tournaments": candidates.get_page(page_number(request)),
        "steps": _steps(_reached(counts)),
    }
    return render_page(
        request,
        "settlements/incident_tournaments.html",
        context,
        partial={"tournament-picker": "tournament_picker", "workbench": "workbench"},
    )


@role_required(*permissions.SNAPSHOT_LOADERS)
def incident_upload(request, incident_id: int):
    incident = incident_or_404(incident_id)
    tournament = _picked_tournament(request.GET)
    form = SnapshotForm(request.POST or None, request.FILES or None)
    context = {
        "incident": incident,
        "tournament": tournament,
        "form": form,
        "problems": [],
        "existing_case": None,
        "steps": _steps(2),
    }
    if request.method != "POST":
        return render_page(
            request, "settlements/incident_upload.html", context, partial="upload_form"
        )
    if form.is_valid():
        try:
            case = case_load_snapshot(
                actor=request.user,
                snapshot=form.snapshot,
                incident=incident,
                tournament=tournament,
            )
        except InvalidInput as invalid:
            context["problems"] = invalid.problems
        except Duplicate as duplicate:
            form.add_domain_error(duplicate)
            if isinstance(duplicate.existing, Case):
                context["existing_case"] = duplicate.existing
        except DomainError as error:
            form.add_domain_error(error)
        else:
            return go_to(request, reverse("case_detail", args=[case.pk]))
    context["file_name"] = form.files["file"].name if "file" in form.files else ""
    return render_invalid(
        request, "settlements/incident_upload.html", context, partial="upload_form"
    )


@role_required(*permissions.INCIDENT_CLOSERS)
def incident_close(request, incident_id: int):
    incident = incident_or_404(incident_id)
    template = "settlements/incident_close.html"
    form = ReasonForm(request.POST if request.method == "POST" else None)
    context = {"incident": incident, "form": form, "open_work": bulk.open_work_count(incident)}
    if request.method == "POST" and form.is_valid():
        try:
            incident_services.incident_close(
                incident=incident, actor=request.user, reason=form.cleaned_data["reason"]
            )
        except DomainError as error:
            form.add_domain_error(error)
        else:
            messages.success(request, f"{incident} closed.")
            return go_to(request, reverse("incident_tournaments", args=[incident.pk]))
    if form.is_bound:
        return render_invalid(request, template, context, partial="bulk_form")
    return render_page(request, template, context, partial="bulk_form")


def _toggled(chosen: bulk.WorkbenchFilter, key: str) -> str:
    """A column's sort link: ascending first, descending on a second click."""
    return f"-{key}" if chosen.sort == key and not chosen.descending else key


def _incident_payments(user, incident: Incident):
    if not roles.has_role(user, *permissions.PAYMENT_READERS):
        return None
    summary = reconciliation(releases_of(incident=incident.pk))
    return summary if summary.lines else ""


def _picked_tournament(data) -> Tournament | None:
    """The registered tournament chosen in step 2, if any (?tournament=<pk>)."""
    raw = data.get("tournament", "")
    if not raw:
        return None
    number = bounds.whole_number(raw)
    if number is None:
        raise Http404("No such tournament.")
    return tournament_or_404(number)


def _reached(counts: list[dict]) -> int:
    """The step of reporting a crash an incident is at, from its cases by status: choosing the
    tournaments hit until one is loaded, the remedy while any case awaits a decision, and past
    the last step (every one done) once none does."""
    in_status = {row["status"]: row["count"] for row in counts}
    if not in_status:
        return WIZARD_STEPS.index("Tournaments hit")
    if in_status.get(CaseStatus.AWAITING_DECISION):
        return WIZARD_STEPS.index("Stage and remedy")
    return len(WIZARD_STEPS)


def _steps(current: int) -> list[dict]:
    return [
        {"label": label, "current": index == current, "done": index < current}
        for index, label in enumerate(WIZARD_STEPS)
    ]
