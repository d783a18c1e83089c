"""A whole outage in one sitting: the bulk actions, their progress, and closing the incident.

POST     /incidents/<id>/prepare-ready/     every ready case prepared (operator, a job)
POST     /incidents/<id>/submit-prepared/   every prepared settlement submitted (operator, a job)
GET/POST /incidents/<id>/approve/           chosen settlements approved with one reason (TM)
GET/POST /incidents/<id>/decide/            one answer to several alike cases (MM)
GET/POST /incidents/<id>/upload-many/       several snapshots or one zip (operator, a job)
GET/POST /incidents/<id>/close/             close an incident whose work is done
GET      /queues/<name>/                    one "waiting for you" list in full
GET      /queues/cases/, /queues/incidents/ the lists behind the dashboard's counts
GET      /jobs/<id>/                        a job's progress (polled) and its outcome per item
POST     /jobs/<id>/retry/                  run a stopped job again over what is left
"""

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from settlements import bounds, selectors, services, wording
from settlements.access import roles
from settlements.access.decorators import role_required
from settlements.archive import snapshot_files
from settlements.errors import DomainError, Duplicate
from settlements.forms import BulkDecisionForm, ReasonForm
from settlements.models import Incident, Job, JobItem, Stage, TournamentType
from settlements.selectors import bulk
from settlements.selectors.dashboard import DASHBOARD_QUEUES
from settlements.services import jobs
from settlements.views import confirming
from settlements.views.paging import page_number
from settlements.views.rendering import go_to, render_invalid, render_page, wants_partial
from settlements.workflow import CaseStatus

ITEMS_SHOWN = 500
QUEUE_PER_PAGE = 25
# Rows per page where a bulk action is chosen: the action covers every page.
BULK_PER_PAGE = 25


@require_POST
@role_required(roles.OPERATOR)
def incident_prepare_ready(request, incident_id: int):
    incident = _incident(incident_id)
    items = [
        jobs.NewItem(str(case.pk), _case_label(case)) for case in bulk.ready_to_prepare(incident)
    ]
    return _start(request, incident, Job.Kind.PREPARE, items)


@require_POST
@role_required(roles.OPERATOR)
def incident_submit_prepared(request, incident_id: int):
    incident = _incident(incident_id)
    items = [
        jobs.NewItem(str(settlement.pk), _settlement_label(settlement))
        for settlement in bulk.prepared_settlements(incident)
    ]
    return _start(request, incident, Job.Kind.SUBMIT, items)


@role_required(roles.TOURNAMENT_MANAGER)
def incident_approve(request, incident_id: int):
    """Approve many settlements with one reason, in two steps.

    Choosing: every settlement of the incident waiting for approval (of one type or stage if
    filtered), paged; the selection is all of them except those left out, whatever the page
    shown. Confirming: how many, the totals by currency and unit, those that will be skipped
    and why, and the reason. Both posts carry the exact ids chosen, so what is approved is what
    was confirmed: should any of them stop waiting meanwhile, the choice is shown again.
    """
    incident = _incident(incident_id)
    if request.method != "POST" or confirming.step(request) == confirming.EDIT:
        return render_page(
            request, "settlements/incident_approve.html",
            _approve_choice(request, incident), partial="bulk_form",
        )  # fmt: skip
    ids = _ids(request.POST.get("selection", ""))
    chosen = list(bulk.awaiting_approval(incident).filter(pk__in=ids))
    summary = bulk.approval_summary(chosen, request.user)
    context = _approve_choice(request, incident)
    if len(chosen) < len(ids):
        context["problem"] = _changed(len(ids) - len(chosen), "settlement", "waiting for approval")
    elif not summary.to_approve:
        context["problem"] = "None of the chosen settlements is one you may approve."
    else:
        context.update(summary=summary, confirming=True, selection=_joined(chosen))
        if confirming.step(request) != confirming.CONFIRM:
            # Asked here, once the selection is settled; an unbound form shows no errors yet.
            context["form"] = ReasonForm(initial={"reason": request.POST.get("reason", "")})
            return render_page(
                request, "settlements/incident_approve.html", context, partial="bulk_form"
            )
        form = context["form"] = ReasonForm(request.POST)
        if form.is_valid():
            items = [jobs.NewItem(str(s.pk), _settlement_label(s)) for s in summary.to_approve]
            return _start(
                request, incident, Job.Kind.APPROVE, items,
                params={"reason": form.cleaned_data["reason"]}, form=form, context=context,
                template="settlements/incident_approve.html",
            )  # fmt: skip
    return render_invalid(
        request, "settlements/incident_approve.html", context, partial="bulk_form"
    )


def _approve_choice(request, incident) -> dict:
    """The choosing step: the matching settlements paged, the selection over all pages."""
    filters = bulk.ApprovalFilter.from_query(request.GET)
    matching = list(bulk.awaiting_approval(incident, filters))
    left_out = _ids(request.GET.get("out", ""))
    selected = [s for s in matching if s.pk not in left_out]
    summary = bulk.approval_summary(selected, request.user)
    page = Paginator(matching, BULK_PER_PAGE).get_page(page_number(request))
    return {
        "incident": incident,
        "filters": filters,
        "choices": {"type": TournamentType.choices, "stage": Stage.choices},
        "page": page,
        "rows": _choice_rows(request, page, left_out),
        "left_out": len(matching) - len(selected),
        "summary": summary,
        "selection": _joined(selected),
        "form": ReasonForm(None),
        "confirming": False,
        "problem": "",
        "query": request.GET.urlencode(),
    }


@role_required(roles.MARKETING_MANAGER)
def incident_decide(request, incident_id: int):
    """Cases alike (type, stage, options), paged with each one's preview; one answer to all of
    a kind except those left out. The post carries the exact ids shown as chosen; should any
    of them stop waiting for a decision meanwhile, the choice is shown again."""
    incident = _incident(incident_id)
    groups = bulk.decision_groups(incident)
    group = next((g for g in groups if g.key == request.GET.get("group")), None) or (
        groups[0] if groups else None
    )
    left_out = _ids(request.GET.get("out", ""))
    selected = [case for case in group.cases if case.pk not in left_out] if group else []
    page = Paginator(group.cases if group else [], BULK_PER_PAGE).get_page(page_number(request))
    option = request.POST.get("option", "")
    form = BulkDecisionForm(request.POST if request.method == "POST" else None, option=option)
    context = {
        "incident": incident,
        "groups": groups,
        "group": group,
        "page": page,
        "rows": _preview_rows(request, page, left_out),
        "selected": len(selected),
        "left_out": len(group.cases) - len(selected) if group else 0,
        "selection": _joined(selected),
        "form": form,
        "option": option,
        "option_labels": {code: wording.option_label(code) for code in group.options}
        if group
        else {},
        "query": request.GET.urlencode(),
    }
    if request.method == "POST" and group is not None:
        ids = _ids(request.POST.get("selection", ""))
        in_group = {case.pk: case for case in group.cases}
        chosen = [in_group[pk] for pk in sorted(ids) if pk in in_group]
        if option not in group.options:
            form.is_valid()
            form.add_error(None, "Choose the answer to give.")
        elif not ids:
            form.is_valid()
            form.add_error(None, "Every case is left out: put back at least one.")
        elif len(chosen) < len(ids):
            form.is_valid()
            changed = _changed(len(ids) - len(chosen), "case", "waiting for this answer")
            form.add_error(None, changed)
        elif form.is_valid():
            items = [jobs.NewItem(str(case.pk), _case_label(case)) for case in chosen]
            reschedule_at = form.cleaned_data["reschedule_at"]
            params = {"option": option, "reason": form.cleaned_data["reason"]}
            if reschedule_at is not None:
                params["reschedule_at"] = reschedule_at.isoformat()
            return _start(
                request, incident, Job.Kind.DECIDE, items, params=params,
                form=form, context=context, template="settlements/incident_decide.html",
            )  # fmt: skip
        return render_invalid(
            request, "settlements/incident_decide.html", context, partial="bulk_form"
        )
    return render_page(request, "settlements/incident_decide.html", context, partial="bulk_form")


def _preview_rows(request, page, left_out: set[int]):
    """Each case on the page with the preview of every option. Previews are the engine's work
    (cached), read as the page renders: a decision posted without a problem starts its job
    and renders nothing, so it reads none."""
    for row in _choice_rows(request, page, left_out):
        yield row, selectors.decision_previews(row["item"])


def _choice_rows(request, page, left_out: set[int]) -> list[dict]:
    """Each record on the page, whether it is left out, and the link that toggles that."""
    rows = []
    for item in page:
        toggled = left_out ^ {item.pk}
        query = request.GET.copy()
        query.pop("out", None)
        if toggled:
            query["out"] = ",".join(map(str, sorted(toggled)))
        rows.append({"item": item, "left_out": item.pk in left_out, "toggle": query.urlencode()})
    return rows


def _ids(raw: str) -> set[int]:
    """Record ids posted or linked as "12,15,31" (anything else in the list is ignored)."""
    numbers = (bounds.whole_number(part.strip()) for part in raw.split(","))
    return {number for number in numbers if number is not None}


def _joined(records) -> str:
    return ",".join(str(record.pk) for record in records)


def _changed(count: int, noun: str, waiting: str) -> str:
    return (
        f"Nothing was done: {count} of the chosen {noun}s {'is' if count == 1 else 'are'} no "
        f"longer {waiting}, changed by someone else meanwhile. The list below is up to date; "
        "check it and choose again."
    )


@role_required(roles.OPERATOR)
def incident_upload_many(request, incident_id: int):
    incident = _incident(incident_id)
    context = {"incident": incident, "refused": [], "max_files": settings.ARCHIVE_MAX_FILES}
    if request.method == "POST":
        uploads = request.FILES.getlist("files")
        if not uploads:
            context["error"] = "Choose one or more snapshot files, or one zip archive of them."
            return render_invalid(
                request, "settlements/incident_upload_many.html", context, partial="bulk_form"
            )
        files = snapshot_files(uploads)
        context["refused"] = [f for f in files if f.content is None]
        if len(context["refused"]) < len(files):
            items = [jobs.NewItem(f.name[:255], f.name[:255], f.content, f.problem) for f in files]
            job = jobs.job_start(
                kind=Job.Kind.UPLOAD, actor=request.user,
                target=f"incident:{incident.pk}:upload:{request.user.pk}:{_digest(files)}",
                items=items, incident=incident,
            )  # fmt: skip
            return go_to(request, reverse("job_detail", args=[job.pk]))
        context["error"] = "No file could be taken; see why below."
        return render_invalid(
            request, "settlements/incident_upload_many.html", context, partial="bulk_form"
        )
    return render_page(
        request, "settlements/incident_upload_many.html", context, partial="bulk_form"
    )


@require_safe
@role_required(*roles.ALL_ROLES)
def queue(request, name: str):
    """One "waiting for you" list in full: paged, filtered by incident."""
    queue = next((q for q in DASHBOARD_QUEUES if q[1] == name), None)
    if queue is None:
        raise Http404("No such list.")
    title, attribute, role, kind = queue
    if not roles.has_role(request.user, role):
        raise PermissionDenied
    items = getattr(selectors.waiting_for(request.user), attribute)
    incident = bounds.whole_number(request.GET.get("incident"))
    if incident is not None:
        items = items.filter(**{"incident_id" if kind == "case" else "case__incident_id": incident})
    page = Paginator(items, QUEUE_PER_PAGE).get_page(page_number(request))
    context = {
        "title": title,
        "name": name,
        "kind": kind,
        "page": page,
        "incident": "" if incident is None else str(incident),
        "incidents": selectors.incident_list(open_only=True)[:50],
    }
    return render_page(request, "settlements/queue.html", context, partial="queue")


@require_safe
@role_required(*roles.ALL_ROLES)
def case_queue(request):
    """Every case, or those in one status: the list behind each status count on the dashboard
    (which counts every case, so this lists every case, whoever asks)."""
    status = request.GET.get("status", "")
    status = status if status in CaseStatus.values else ""
    incident = bounds.whole_number(request.GET.get("incident"))
    cases = selectors.case_list(status=status or None, incident=incident)
    context = {
        "title": f"Cases: {CaseStatus(status).label.lower()}" if status else "Every case",
        "status": status,
        "statuses": CaseStatus.choices,
        "incident": "" if incident is None else str(incident),
        "incidents": selectors.incident_list(open_only=True)[:50],
        # Oldest first, as in the queues: the longest waiting is the first to see to.
        "page": Paginator(cases.order_by("created_at", "pk"), QUEUE_PER_PAGE).get_page(
            page_number(request)
        ),
    }
    return render_page(request, "settlements/case_queue.html", context, partial="queue")


@require_safe
@role_required(*roles.ALL_ROLES)
def incident_queue(request):
    """Incidents, open ones by default (the dashboard's count), or closed, or all."""
    state = request.GET.get("state", "open")
    state = state if state in INCIDENT_STATES else "open"
    incidents = selectors.incident_list(open_only=state == "open")
    if state == "closed":
        incidents = incidents.filter(closed_at__isnull=False)
    context = {
        "state": state,
        "states": INCIDENT_STATES.items(),
        "page": Paginator(incidents, QUEUE_PER_PAGE).get_page(page_number(request)),
    }
    return render_page(request, "settlements/incident_queue.html", context, partial="queue")


INCIDENT_STATES = {"open": "Open", "closed": "Closed", "all": "All"}


@role_required(roles.OPERATOR, roles.TOURNAMENT_MANAGER)
def incident_close(request, incident_id: int):
    incident = _incident(incident_id)
    form = ReasonForm(request.POST if request.method == "POST" else None)
    open_work = bulk.open_work_count(incident)
    context = {"incident": incident, "form": form, "open_work": open_work}
    if request.method == "POST" and form.is_valid():
        try:
            services.incident_close(
                incident=incident, actor=request.user, reason=form.cleaned_data["reason"]
            )
        except DomainError as error:
            form.add_domain_error(error)
        else:
            messages.success(request, f"{incident} closed.")
            return go_to(request, reverse("incident_tournaments", args=[incident.pk]))
    if form.is_bound:
        return render_invalid(
            request, "settlements/incident_close.html", context, partial="bulk_form"
        )
    return render_page(request, "settlements/incident_close.html", context, partial="bulk_form")


@require_safe
@role_required(*roles.ALL_ROLES)
def job_detail(request, job_id: int):
    """A job's progress, polled each second while it runs, and each item's outcome."""
    job = get_object_or_404(Job.objects.select_related("incident", "created_by"), pk=job_id)
    status = request.GET.get("status", "")
    status = status if status in JobItem.Status.values else ""
    polled = wants_partial(request) and request.htmx.target != "job-items-section"
    context = {
        "job": job,
        "progress": jobs.job_progress(job),
        "items_shown": ITEMS_SHOWN,
        "status": status,
        "outcome_filters": OUTCOME_FILTERS,
        "can_retry": request.user.pk == job.created_by_id and not job.is_active,
    }
    if not polled:
        items = job.items.select_related("case").order_by("position")
        context["job_items"] = (items.filter(status=status) if status else items)[:ITEMS_SHOWN]
    response = render_page(
        request, "settlements/job_detail.html", context,
        partial={"job-progress": "progress", "job-items-section": "items"},
    )  # fmt: skip
    if polled and not job.is_active:
        # The list of items, read once when the page loaded, reads itself again now.
        response["HX-Trigger"] = "job-finished"
    return response


OUTCOME_FILTERS = (
    ("", "All"),
    (JobItem.Status.FAILED, "Failed"),
    (JobItem.Status.SKIPPED, "Skipped"),
    (JobItem.Status.DONE, "Done"),
)


@require_POST
@role_required(*roles.ALL_ROLES)
def job_retry(request, job_id: int):
    job = get_object_or_404(Job, pk=job_id)
    if request.user.pk != job.created_by_id:
        raise PermissionDenied
    try:
        jobs.job_retry(job=job, actor=request.user)
    except DomainError as error:
        messages.error(request, error.message)
    return go_to(request, reverse("job_detail", args=[job.pk]))


def _start(request, incident, kind, items, *, params=None, form=None, context=None, template=""):
    try:
        job = jobs.job_start(
            kind=kind, actor=request.user, target=f"incident:{incident.pk}", items=items,
            incident=incident, params=params,
        )  # fmt: skip
    except Duplicate as duplicate:
        if duplicate.existing is not None:
            messages.info(request, duplicate.message)
            return go_to(request, reverse("job_detail", args=[duplicate.existing.pk]))
        raise
    except DomainError as error:
        if form is None:
            messages.error(request, error.message)
            return go_to(request, reverse("incident_tournaments", args=[incident.pk]))
        form.add_domain_error(error)
        return render_invalid(request, template, context, partial="bulk_form")
    return go_to(request, reverse("job_detail", args=[job.pk]))


def _incident(incident_id: int) -> Incident:
    try:
        return selectors.incident_detail(incident_id)
    except Incident.DoesNotExist:
        raise Http404("No such incident.") from None


def _case_label(case) -> str:
    return f"Case #{case.pk} · {case.tournament.operator_id}"[:255]


def _settlement_label(settlement) -> str:
    return f"{settlement} · {settlement.case.tournament.operator_id}"[:255]


def _digest(files) -> str:
    import hashlib

    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode())
        digest.update(file.content or b"")
    return digest.hexdigest()[:16]
