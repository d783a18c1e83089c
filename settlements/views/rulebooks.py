"""Rulebooks: their versions, the text and parameters of each, and the four-eyes steps.

GET      /rulebooks/                                   every rulebook, its version in force
GET      /rulebooks/<key>/                             one rulebook's versions
GET      /rulebooks/<key>/versions/<n>/                a version: text, parameters, diff
GET/POST /rulebooks/propose/                           propose (Tournament Managers)
GET/POST /rulebooks/<key>/versions/<n>/approve/        confirm, then approve (not one's own)
GET/POST /rulebooks/<key>/versions/<n>/withdraw/       confirm, then withdraw
POST     /rulebooks/<key>/versions/<n>/simulate/       simulate it over past cases
GET      /simulations/<id>/ | <id>.csv                 a simulation's figures, per case
"""

import difflib

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe

from settlements import difference_chart, markdown
from settlements.access import permissions
from settlements.access.decorators import role_required
from settlements.errors import DomainError, NotAllowed
from settlements.exports.spreadsheets import csv_chunks, csv_download, safe_cell
from settlements.forms import ReasonForm, RulebookVersionForm, SimulationForm
from settlements.models import RulebookVersion, Simulation, Unit
from settlements.rules import parse_policy
from settlements.rules.policy import KEYS_BY_NAME, POLICY_KEYS
from settlements.selectors import rulebooks
from settlements.services import rulebooks as rulebook_services
from settlements.services.jobs import job_progress
from settlements.views import confirming
from settlements.views.rendering import go_to, render_invalid, render_page
from settlements.workflow import RulebookVersionStatus


@require_safe
@role_required(*permissions.RULEBOOK_READERS)
def rulebook_list(request):
    now = timezone.now()
    rows = [
        {"rulebook": rulebook, "in_force": _in_force(rulebook.versions.all(), now)}
        for rulebook in rulebooks.rulebook_list()
    ]
    context = {
        "rows": rows,
        "can_propose": permissions.rulebook_propose(user=request.user) is None,
    }
    return render_page(request, "settlements/rulebook_list.html", context, partial="rulebooks")


@require_safe
@role_required(*permissions.RULEBOOK_READERS)
def rulebook_detail(request, key: str):
    rulebook = rulebooks.rulebook_named(key, with_versions=True)
    if rulebook is None:
        raise Http404(f"There is no rulebook {key!r}.")
    versions = list(rulebook.versions.all())
    context = {
        "rulebook": rulebook,
        "versions": versions,
        "in_force": _in_force(versions, timezone.now()),
        "can_propose": permissions.rulebook_propose(user=request.user) is None,
    }
    return render_page(request, "settlements/rulebook_detail.html", context, partial="versions")


@require_safe
@role_required(*permissions.RULEBOOK_READERS)
def rulebook_version(request, key: str, number: int):
    version = _version_or_404(key, number)
    context = _version_context(request, version)
    return render_page(request, "settlements/rulebook_version.html", context, partial="version")


@role_required(*permissions.RULEBOOK_WRITERS)
def rulebook_version_new(request):
    key = request.GET.get("key", "")
    # A new version of an existing rulebook starts from its latest approved one.
    rulebook = rulebooks.rulebook_named(key)
    base = rulebooks.latest_approved_version(rulebook) if rulebook else None
    form = RulebookVersionForm(
        request.POST or None,
        initial={"key": key, "text": base.text if base else ""},
        initial_parameters=base.parameters if base else None,
    )
    context = {"form": form, "base": base}
    template = "settlements/rulebook_version_new.html"
    if request.method == "POST":
        if form.is_valid():
            try:
                version = rulebook_services.rulebook_version_propose(
                    key=form.cleaned_data["key"],
                    parameters=form.parameters(),
                    text=form.cleaned_data["text"],
                    effective_from=form.cleaned_data["effective_from"],
                    actor=request.user,
                    reason=form.cleaned_data["reason"],
                )
            except NotAllowed:
                raise PermissionDenied from None
            except DomainError as error:
                form.add_domain_error(error)
            else:
                messages.success(
                    request, f"{version} proposed; another Tournament Manager approves it."
                )
                return go_to(
                    request,
                    reverse("rulebook_version", args=[version.rulebook.key, version.number]),
                )
        return render_invalid(request, template, context, partial="proposal")
    return render_page(request, template, context, partial="proposal")


@role_required(*permissions.RULEBOOK_WRITERS)
def rulebook_version_approve(request, key: str, number: int):
    version = _version_or_404(key, number)
    refusal = permissions.rulebook_version_approve(version=version, user=request.user)
    return _answer(request, version, "approve", refusal, rulebook_services.rulebook_version_approve)


@role_required(*permissions.RULEBOOK_WRITERS)
def rulebook_version_withdraw(request, key: str, number: int):
    version = _version_or_404(key, number)
    refusal = permissions.rulebook_version_withdraw(
        version=version, user=request.user, now=timezone.now()
    )
    return _answer(
        request, version, "withdraw", refusal, rulebook_services.rulebook_version_withdraw
    )


def _answer(request, version: RulebookVersion, action: str, refusal, service):
    form = ReasonForm(request.POST or None)
    context = _version_context(request, version) | {
        "action": action,
        "verb": action.capitalize(),
        "form": form,
        "refusal": refusal,
    }
    return confirming.answer_review(
        request,
        template="settlements/rulebook_version_confirm.html",
        context=context,
        form=form,
        perform=lambda reason: service(version=version, actor=request.user, reason=reason),
        done_message=f"{version} {'approved' if action == 'approve' else 'withdrawn'}.",
        done_url=reverse("rulebook_version", args=[version.rulebook.key, version.number]),
        own_work=refusal is not None and refusal.kind == permissions.OWN_WORK,
    )


def _version_or_404(key: str, number: int) -> RulebookVersion:
    version = rulebooks.version_numbered(key, number)
    if version is None:
        raise Http404(f"Rulebook {key!r} has no version {number}.")
    return version


def _simulation_or_404(simulation_id: int) -> Simulation:
    simulation = rulebooks.simulation_numbered(simulation_id)
    if simulation is None:
        raise Http404(f"There is no simulation {simulation_id}.")
    return simulation


def _in_force(versions, now) -> RulebookVersion | None:
    approved = [
        v
        for v in versions
        if v.status == RulebookVersionStatus.APPROVED and v.effective_from <= now
    ]
    return max(approved, key=lambda v: v.effective_from, default=None)


def _version_context(request, version: RulebookVersion) -> dict:
    user = request.user
    replaced = rulebooks.replaced_version(version)
    policy = parse_policy(version.parameters)
    changed = policy.differences(parse_policy(replaced.parameters)) if replaced else {}
    simulation = rulebooks.latest_simulation(version)
    return {
        "version": version,
        "rulebook": version.rulebook,
        "html": markdown.render(version.text),
        "parameters": [
            {
                "name": key.name,
                "value": version.parameters.get(key.name),
                "default": key.default,
                "explanation": key.explanation,
                "was": changed[key.name][1] if key.name in changed else None,
                "changed": key.name in changed,
            }
            for key in POLICY_KEYS
        ],
        "replaced": replaced,
        "text_diff": list(
            difflib.unified_diff(
                replaced.text.splitlines(),
                version.text.splitlines(),
                fromfile=str(replaced),
                tofile=str(version),
                lineterm="",
            )
        )
        if replaced
        else [],
        "can_approve": permissions.rulebook_version_approve(version=version, user=user) is None,
        "can_withdraw": permissions.rulebook_version_withdraw(
            version=version, user=user, now=timezone.now()
        )
        is None,
        "keys": KEYS_BY_NAME,
        "simulation": simulation,
        "simulation_currency": rulebooks.simulation_currency(simulation),
        "simulation_form": SimulationForm(),
        "can_simulate": permissions.rulebook_propose(user=user) is None,
    }


@require_POST
@role_required(*permissions.RULEBOOK_WRITERS)
def rulebook_version_simulate(request, key: str, number: int):
    version = _version_or_404(key, number)
    form = SimulationForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Check the cases to simulate: " + form.errors.as_text())
        return go_to(request, reverse("rulebook_version", args=[key, number]))
    selection = {name: value for name, value in form.cleaned_data.items() if value}
    try:
        simulation = rulebook_services.simulation_start(
            version=version,
            actor=request.user,
            cases=rulebooks.simulation_cases(**form.cleaned_data),
            selection={
                name: value.isoformat() if hasattr(value, "isoformat") else value
                for name, value in selection.items()
            },
        )
    except NotAllowed:
        raise PermissionDenied from None
    except DomainError as error:
        messages.error(request, error.message)
        return go_to(request, reverse("rulebook_version", args=[key, number]))
    return go_to(request, reverse("simulation_detail", args=[simulation.pk]))


@require_safe
@role_required(*permissions.RULEBOOK_READERS)
def simulation_detail(request, simulation_id: int):
    simulation = _simulation_or_404(simulation_id)
    context = {
        "simulation": simulation,
        "simulation_currency": rulebooks.simulation_currency(simulation),
        "results": rulebooks.simulation_results(simulation),
        "progress": job_progress(simulation.job) if simulation.job else None,
        "difference_charts": _difference_charts(simulation) if simulation.finished_at else [],
    }
    return render_page(request, "settlements/simulation_detail.html", context, partial="figures")


def _difference_charts(simulation: Simulation) -> list[difference_chart.DifferenceChart]:
    by_unit, currency = rulebooks.simulation_differences(simulation)
    return [
        difference_chart.difference_chart(
            amounts,
            unit=unit,
            currency=currency,
            unit_label=Unit(unit).label if unit in Unit.values else unit,
        )
        for unit, amounts in by_unit.items()
    ]


@require_safe
@role_required(*permissions.RULEBOOK_READERS)
def simulation_csv(request, simulation_id: int):
    simulation = _simulation_or_404(simulation_id)
    header = [
        "case",
        "tournament",
        "stage_then",
        "remedy_then",
        "stage_draft",
        "remedy_draft",
        "needs_decision",
        "unit",
        "total_then",
        "total_draft",
        "players_better",
        "players_worse",
        "players_unchanged",
    ]
    rows = [header]
    for result in rulebooks.simulation_results(simulation):
        units = sorted(set(result.totals_then) | set(result.totals_draft)) or [""]
        for unit in units:
            differences = result.differences.get(unit, [])
            rows.append(
                [
                    result.case_id,
                    safe_cell(result.case.tournament.operator_id),
                    result.stage_then,
                    result.remedy_then,
                    result.stage_draft,
                    result.remedy_draft,
                    "yes" if result.needs_decision else "no",
                    unit,
                    result.totals_then.get(unit, 0),
                    result.totals_draft.get(unit, 0),
                    sum(1 for d in differences if d > 0),
                    sum(1 for d in differences if d < 0),
                    sum(1 for d in differences if d == 0),
                ]
            )
    return csv_download(csv_chunks(rows), f"simulation-{simulation.pk}.csv")
