"""The bulk path through an outage: one action over many cases or settlements, run as a job
whose progress the job page shows (views/jobs.py).

GET/POST /incidents/<id>/prepare-ready/     every ready case prepared (operator)
GET/POST /incidents/<id>/submit-prepared/   every prepared settlement submitted (operator)
                                            (both restate what they will do, then do it)
GET/POST /incidents/<id>/approve/           chosen settlements approved with one reason (TM)
GET/POST /incidents/<id>/decide/            one answer to several alike cases (MM)
GET/POST /incidents/<id>/upload-many/       several snapshots or one zip (operator)
"""

import hashlib

from django.conf import settings
from django.contrib import messages
from django.urls import reverse

from settlements import bounds, wording
from settlements.access import permissions
from settlements.access.decorators import role_required
from settlements.archive import snapshot_files
from settlements.errors import DomainError, Duplicate
from settlements.forms import BulkDecisionForm, ReasonForm
from settlements.models import Job, Stage, TournamentType
from settlements.selectors import approvals, bulk
from settlements.selectors.cases import default_invite_scope
from settlements.selectors.common import with_ids
from settlements.selectors.incidents import chosen_for_approval
from settlements.services.jobs import NewItem, job_start
from settlements.views import cached_previews, confirming
from settlements.views.lookups import incident_or_404
from settlements.views.paging import CountedPaginator, page_number
from settlements.views.rendering import go_to, render_invalid, render_page

# Rows per page where a bulk action is chosen: the action covers every page.
BULK_PER_PAGE = 25
# Cases a decision's confirmation names one by one; any more are counted.
CONFIRM_NAMED = 100


@role_required(*permissions.SETTLEMENT_PREPARERS)
def incident_prepare_ready(request, incident_id: int):
    """What preparing every ready case will do, then (confirmed) do it."""
    incident = incident_or_404(incident_id)
    summary = bulk.prepare_summary(incident)
    return _confirm_bulk(request, incident, Job.Kind.PREPARE, summary, _case_label)


@role_required(*permissions.SETTLEMENT_SUBMITTERS)
def incident_submit_prepared(request, incident_id: int):
    """What submitting every prepared settlement will do, then (confirmed) do it."""
    incident = incident_or_404(incident_id)
    summary = bulk.submit_summary(incident)
    return _confirm_bulk(request, incident, Job.Kind.SUBMIT, summary, _settlement_label)


def _confirm_bulk(request, incident, kind: str, summary, label):
    """The confirmation of a bulk prepare or submit: the records, what they pay, their
    remedies and what is left aside; the confirming post carries the exact ids shown, so what
    runs is what was confirmed (should any have moved on meanwhile, it is shown again)."""
    context = {
        "incident": incident,
        "kind": kind,
        "summary": summary,
        "selection": ",".join(map(str, summary.records.values_list("pk", flat=True))),
        "problem": "",
        "action_url": request.path,
    }
    template = "settlements/incident_bulk_confirm.html"
    if request.method == "POST" and confirming.step(request) == confirming.CONFIRM:
        ids = _ids(request.POST.get("selection", ""))
        chosen = list(with_ids(summary.records, ids))
        if len(chosen) < len(ids):
            noun, waiting = (
                ("case", "ready to prepare")
                if kind == Job.Kind.PREPARE
                else ("settlement", "prepared")
            )
            context["problem"] = _changed(len(ids) - len(chosen), noun, waiting)
            return render_invalid(request, template, context, partial="bulk_form")
        items = [NewItem(str(record.pk), label(record)) for record in chosen]
        return _start(request, incident, kind, items)
    return render_page(request, template, context, partial="bulk_form")


@role_required(*permissions.APPROVERS)
def incident_approve(request, incident_id: int):
    """Approve many settlements with one reason, in two steps.

    Choosing: every settlement of the incident waiting for approval (of one type or stage if
    filtered), paged; the selection is all of them except those left out, whatever the page
    shown. Confirming: how many, the totals by currency and unit, those that will be skipped
    and why, and the reason. Both posts carry the exact ids chosen, so what is approved is what
    was confirmed: should any of them stop waiting meanwhile, the choice is shown again.
    """
    incident = incident_or_404(incident_id)
    template = "settlements/incident_approve.html"
    if request.method != "POST" or confirming.step(request) == confirming.EDIT:
        return render_page(
            request, template, _approve_choice(request, incident), partial="bulk_form"
        )
    ids = _ids(request.POST.get("selection", ""))
    chosen = chosen_for_approval(incident, ids)
    chosen_ids = list(chosen.values_list("pk", flat=True))
    summary = approvals.approval_summary(chosen, request.user)
    confirmable = len(chosen_ids) == len(ids) and summary.count
    # Confirming shows the chosen settlements' summary: the choice's need not be made again.
    context = _approve_choice(request, incident, summary if confirmable else None)
    if len(chosen_ids) < len(ids):
        context["problem"] = _changed(
            len(ids) - len(chosen_ids), "settlement", "waiting for approval"
        )
    elif not summary.count:
        context["problem"] = "None of the chosen settlements is one you may approve."
    else:
        context.update(summary=summary, confirming=True, selection=",".join(map(str, chosen_ids)))
        if confirming.step(request) != confirming.CONFIRM:
            # Asked here, once the selection is settled; an unbound form shows no errors yet.
            context["form"] = ReasonForm(initial={"reason": request.POST.get("reason", "")})
            return render_page(request, template, context, partial="bulk_form")
        form = context["form"] = ReasonForm(request.POST)
        if form.is_valid():
            items = [
                NewItem(str(r.pk), _row_label(r))
                for r in approvals.approval_rows(summary.to_approve)
            ]
            return _start(
                request,
                incident,
                Job.Kind.APPROVE,
                items,
                params={"reason": form.cleaned_data["reason"]},
                form=form,
                context=context,
                template=template,
            )
    return render_invalid(request, template, context, partial="bulk_form")


def _approve_choice(request, incident, summary=None) -> dict:
    """The choosing step: the matching settlements paged, the selection over all pages, and
    its summary; or, confirming, the chosen settlements' ``summary``, where no list shows.
    Whatever the number waiting, the page reads their ids, one grouped summary and a page of
    rows."""
    filters = approvals.ApprovalFilter.from_query(request.GET)
    left_out = _ids(request.GET.get("out", ""))
    page, every, selected, rows = None, [], [], []
    if summary is None:
        matching = approvals.awaiting_approval(incident, filters)
        every = list(matching.values_list("pk", flat=True))
        selected = [pk for pk in every if pk not in left_out]
        summary = approvals.approval_summary(matching.exclude(pk__in=left_out), request.user)
        paginator = CountedPaginator(matching, BULK_PER_PAGE, count=len(every))
        page = paginator.get_page(page_number(request))
        rows = _choice_rows(request, approvals.approval_rows(page.object_list), left_out)
    return {
        "incident": incident,
        "filters": filters,
        "choices": {"type": TournamentType.choices, "stage": Stage.choices},
        "page": page,
        "rows": [{**row, "totals": approvals.unit_totals([row["item"]])} for row in rows],
        "left_out": len(every) - len(selected),
        "summary": summary,
        "selection": ",".join(map(str, selected)),
        "form": ReasonForm(None),
        "confirming": False,
        "problem": "",
        "query": request.GET.urlencode(),
    }


@role_required(*permissions.DECISION_MAKERS)
def incident_decide(request, incident_id: int):
    """Cases alike (type, stage, options), paged with each one's preview; one answer to all of
    a kind except those left out. The post carries the exact ids shown as chosen; should any
    of them stop waiting for a decision meanwhile, the choice is shown again."""
    incident = incident_or_404(incident_id)
    template = "settlements/incident_decide.html"
    groups = bulk.decision_groups(incident)
    asked = request.GET.get("group")
    group = next((g for g in groups if g.key == asked), None)
    # A kind asked for by name but no longer waiting (all decided meanwhile) is said so, with
    # the next kind to answer, rather than quietly showing another.
    gone = bool(asked) and group is None
    if group is None and not gone and groups:
        group = groups[0]
    option = request.POST.get("option", "")
    form = BulkDecisionForm(request.POST if request.method == "POST" else None, option=option)
    context = _decide_context(request, incident, groups, group, form, option)
    context.update(gone=gone, next_group=bulk.next_decision_group(groups, None))
    if request.method != "POST" or group is None:
        render = render_invalid if gone and request.method == "POST" else render_page
        return render(request, template, context, partial="bulk_form")
    ids = _ids(request.POST.get("selection", ""))
    chosen = with_ids(bulk.decision_group_cases(incident, group), ids)
    count = chosen.count()
    problem = _decision_problem(group, option, ids, count)
    if problem:
        form.is_valid()
        form.add_error(None, problem)
    elif form.is_valid():
        if confirming.step(request) == confirming.CONFIRM:
            items = [NewItem(str(case.pk), _case_label(case)) for case in chosen]
            reschedule_at = form.cleaned_data["reschedule_at"]
            # The kind answered: the job's page links on to the next kind still waiting.
            params = {"option": option, "reason": form.cleaned_data["reason"], "group": group.key}
            if reschedule_at is not None:
                params["reschedule_at"] = reschedule_at.isoformat()
            return _start(
                request,
                incident,
                Job.Kind.DECIDE,
                items,
                params=params,
                form=form,
                context=context,
                template=template,
            )
        # Checked before it is recorded, as a single decision is: the answer in words, the
        # cases it goes to, and what each of their players gets under it.
        context["confirming"] = confirming.step(request) != confirming.EDIT
        context.update(chosen=chosen[:CONFIRM_NAMED], chosen_count=count)
        context["versions"] = bulk.decision_versions(chosen)
        context["chosen_more"] = count - min(count, CONFIRM_NAMED)
        context["description"] = wording.option_description(group.type, group.stage, option)
        context["invited"] = (
            bulk.invited_by_reschedule(chosen, group.stage) if option == "reschedule" else None
        )
        # A reschedule pays nothing now; any other answer is added up over every chosen case,
        # from the previews the table shows (kept in the cache, so mostly read, not computed).
        context["totals"] = (
            None if option == "reschedule" else cached_previews.option_totals(chosen, option)
        )
        return render_page(request, template, context, partial="bulk_form")
    return render_invalid(request, template, context, partial="bulk_form")


def _invited(case) -> int:
    """How many players a reschedule of ``case`` invites, by the rules' default scope."""
    if default_invite_scope(case.stage) == "entrants":
        return case.entrants
    return case.remaining


def _decide_context(request, incident, groups, group, form, option: str) -> dict:
    """The group shown, paged with the previews, and the selection over all its pages."""
    cases = bulk.decision_group_cases(incident, group)
    left_out = _ids(request.GET.get("out", ""))
    selected = list(cases.exclude(pk__in=left_out).values_list("pk", flat=True))
    count = group.count if group else 0
    page = CountedPaginator(cases, BULK_PER_PAGE, count=count).get_page(page_number(request))
    return {
        "incident": incident,
        "groups": groups,
        "group": group,
        "page": page,
        "rows": _preview_rows(request, page, left_out),
        "selected": len(selected),
        "left_out": count - len(selected),
        "selection": ",".join(map(str, selected)),
        "form": form,
        "option": option,
        "option_labels": {code: wording.option_label(code) for code in group.options}
        if group
        else {},
        # What each answer gives, in words, the same for every case of the group.
        "option_words": [
            (wording.option_label(code), wording.option_description(group.type, group.stage, code))
            for code in group.options
        ]
        if group
        else [],
        "query": request.GET.urlencode(),
    }


def _decision_problem(group, option: str, ids: set[int], chosen: int) -> str:
    """Why the posted answer cannot be given to the posted cases (``chosen`` of them still
    waiting for it), or ""."""
    if option not in group.options:
        return "Choose the answer to give."
    if not ids:
        return "Every case is left out: put back at least one."
    if chosen < len(ids):
        return _changed(len(ids) - chosen, "case", "waiting for this answer")
    return ""


def _preview_rows(request, page, left_out: set[int]):
    """Each case on the page with the preview of every option. Previews are the engine's work
    (cached), read as the page renders: a decision posted without a problem starts its job
    and renders nothing, so it reads none."""
    rows = _choice_rows(request, page, left_out)
    previews = cached_previews.decision_previews_of([row["item"] for row in rows])
    for row in rows:
        yield row, previews[row["item"].pk], _invited(row["item"])


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


def _changed(count: int, noun: str, waiting: str) -> str:
    return (
        f"Nothing was done: {count} of the chosen {noun}s {'is' if count == 1 else 'are'} no "
        f"longer {waiting}, changed by someone else meanwhile. The list below is up to date; "
        "check it and choose again."
    )


@role_required(*permissions.SNAPSHOT_LOADERS)
def incident_upload_many(request, incident_id: int):
    incident = incident_or_404(incident_id)
    template = "settlements/incident_upload_many.html"
    context = {"incident": incident, "refused": [], "max_files": settings.ARCHIVE_MAX_FILES}
    if request.method != "POST":
        return render_page(request, template, context, partial="bulk_form")
    uploads = request.FILES.getlist("files")
    if not uploads:
        context["error"] = "Choose one or more snapshot files, or one zip archive of them."
        return render_invalid(request, template, context, partial="bulk_form")
    files = snapshot_files(uploads)
    context["refused"] = [f for f in files if f.content is None]
    if len(context["refused"]) == len(files):
        context["error"] = "No file could be taken; see why below."
        return render_invalid(request, template, context, partial="bulk_form")
    items = [NewItem(f.name[:255], f.name[:255], f.content, f.problem) for f in files]
    job = job_start(
        kind=Job.Kind.UPLOAD,
        actor=request.user,
        target=f"incident:{incident.pk}:upload:{request.user.pk}:{_digest(files)}",
        items=items,
        incident=incident,
    )
    return go_to(request, reverse("job_detail", args=[job.pk]))


def _start(request, incident, kind, items, *, params=None, form=None, context=None, template=""):
    """Start the job, then follow it; a refusal shows on the form, or on the incident's page
    where nothing was asked."""
    try:
        job = job_start(
            kind=kind,
            actor=request.user,
            target=f"incident:{incident.pk}",
            items=items,
            incident=incident,
            params=params,
        )
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


def _case_label(case) -> str:
    return f"Case #{case.pk} · {case.tournament.operator_id}"[:255]


def _settlement_label(settlement) -> str:
    return f"{settlement} · {settlement.case.tournament.operator_id}"[:255]


def _row_label(row) -> str:
    return f"{row} · {row.operator_id}"[:255]


def _digest(files) -> str:
    """The files' names and contents in short: the same upload twice is the same work."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode())
        digest.update(file.content or b"")
    return digest.hexdigest()[:16]
