"""The rulebooks over the API: every desk role reads them; Tournament Managers propose new
versions, and another Tournament Manager approves or withdraws them (services.rulebooks)."""

from typing import Any

import msgspec
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils import timezone

from settlements import bounds, problems
from settlements.access import permissions
from settlements.api.answers import (
    Refusal,
    RulebookAnswer,
    RulebookPage,
    RulebookVersionAnswer,
    SimulationAnswer,
)
from settlements.api.base import answer, api_endpoint
from settlements.api.reading import read_object
from settlements.errors import DomainError, InvalidTransition, NotAllowed
from settlements.models import Rulebook, RulebookVersion, Simulation, TokenScope
from settlements.rules import InvalidInput, Problem
from settlements.selectors.rulebooks import rulebook_list, simulation_cases
from settlements.services import rulebooks as rulebook_services
from settlements.services.jobs import job_progress

# The text is at most 50,000 characters (settlements.markdown); room for its escapes.
BODY_MAX_BYTES = 512 * 1024


class VersionProposal(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    effective_from: str
    parameters: dict
    text: str
    reason: str


class Reason(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    reason: str


class SimulationRequest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """Which past cases to settle again under the version; all of them when nothing is given."""

    incident: int | None = None
    crashed_from: str | None = None
    crashed_until: str | None = None
    rulebook: str | None = None


@api_endpoint(
    "GET",
    "HEAD",
    scope=TokenScope.RULEBOOKS_READ,
    allowed=permissions.RULEBOOK_READERS,
    answers={200: RulebookPage},
)
def rulebooks(request: HttpRequest, user) -> HttpResponse:
    """Every rulebook with its versions, newest first, and the one in force now."""
    now = timezone.now()
    return answer(
        {"results": [_rulebook(request, rulebook, now) for rulebook in rulebook_list()]},
        RulebookPage,
    )


@api_endpoint(
    "GET",
    "HEAD",
    scope=TokenScope.RULEBOOKS_READ,
    allowed=permissions.RULEBOOK_READERS,
    answers={200: RulebookAnswer, 404: Refusal},
)
def rulebook(request: HttpRequest, user, key: str) -> HttpResponse:
    """One rulebook with its versions."""
    found = rulebook_list().filter(key=key).first()
    if found is None:
        return problems.refusal(404, "$", f"There is no rulebook {key!r}.")
    return answer(_rulebook(request, found, timezone.now()), RulebookAnswer)


@api_endpoint(
    "POST",
    scope=TokenScope.RULEBOOKS_WRITE,
    allowed=permissions.RULEBOOK_WRITERS,
    body=VersionProposal,
    answers={201: RulebookVersionAnswer},
    example={
        "effective_from": "2099-01-01T00:00:00Z",
        "parameters": {"pre_pct": 5, "early_pct": 25, "final_table_icm": 9},
        "text": "Final tables of nine or fewer are paid by ICM.",
        "reason": "Align with the published policy",
    },
)
def rulebook_versions(request: HttpRequest, user, key: str) -> HttpResponse:
    """Propose a new version of the rulebook (made with its first version when the key is
    new); another Tournament Manager approves it. The answer holds every parameter, defaults
    filled in."""
    proposal = _read(request, VersionProposal)
    try:
        effective_from = bounds.parse_rfc3339(proposal.effective_from)
    except ValueError as problem:
        raise InvalidInput.at("effective_from", str(problem)) from None
    try:
        version = rulebook_services.rulebook_version_propose(
            key=key,
            parameters=proposal.parameters,
            text=proposal.text,
            effective_from=effective_from,
            actor=user,
            reason=proposal.reason,
        )
    except DomainError as refusal:
        return _refused(refusal)
    return answer(_version(request, version), RulebookVersionAnswer, status=201)


@api_endpoint(
    "POST",
    scope=TokenScope.RULEBOOKS_WRITE,
    allowed=permissions.RULEBOOK_WRITERS,
    body=Reason,
    answers={200: RulebookVersionAnswer, 404: Refusal, 409: Refusal},
    example={"reason": "Simulated over last quarter's crashes"},
)
def rulebook_version_approve(request: HttpRequest, user, key: str, number: int) -> HttpResponse:
    """Approve a proposed version: not the proposer's own."""
    return _review(request, user, key, number, rulebook_services.rulebook_version_approve)


@api_endpoint(
    "POST",
    scope=TokenScope.RULEBOOKS_WRITE,
    allowed=permissions.RULEBOOK_WRITERS,
    body=Reason,
    answers={200: RulebookVersionAnswer, 404: Refusal, 409: Refusal},
    example={"reason": "The regulator asked for changes"},
)
def rulebook_version_withdraw(request: HttpRequest, user, key: str, number: int) -> HttpResponse:
    """Withdraw a version not yet in effect."""
    return _review(request, user, key, number, rulebook_services.rulebook_version_withdraw)


def _review(request, user, key: str, number: int, service) -> HttpResponse:
    body = _read(request, Reason)
    version = (
        RulebookVersion.objects.select_related("rulebook")
        .filter(rulebook__key=key, number=number)
        .first()
    )
    if version is None:
        return problems.refusal(404, "$", f"Rulebook {key!r} has no version {number}.")
    try:
        version = service(version=version, actor=user, reason=body.reason)
    except DomainError as refusal:
        return _refused(refusal)
    return answer(_version(request, version), RulebookVersionAnswer)


def _read[T: msgspec.Struct](request: HttpRequest, type_: type[T]) -> T:
    """The body as ``type_``; InvalidInput at paths named as the services name their fields
    (``text``, ``parameters.pre_pct``), the whole body being ``$``."""
    try:
        return read_object(_body(request), type_, root="")
    except InvalidInput as invalid:
        raise InvalidInput(
            [
                Problem(problem.path.removeprefix(".") or "$", problem.message)
                for problem in invalid.problems
            ]
        ) from None


def _body(request: HttpRequest) -> Any:
    """The JSON body, decoded; InvalidInput when it is too large or not JSON."""
    declared = bounds.whole_number(request.META.get("CONTENT_LENGTH", "").strip())
    too_large = InvalidInput.at("$", f"send at most {BODY_MAX_BYTES:,} bytes")
    if declared is not None and declared > BODY_MAX_BYTES:
        raise too_large
    body = request.read(BODY_MAX_BYTES + 1)
    if len(body) > BODY_MAX_BYTES:
        raise too_large
    try:
        return msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        raise InvalidInput.at("$", "must be a JSON object") from None


def _refused(refusal: DomainError) -> HttpResponse:
    if isinstance(refusal, NotAllowed):
        return problems.refusal(403, "Authorization", refusal.message)
    if isinstance(refusal, InvalidTransition):
        return problems.refusal(409, "$", refusal.message)
    return problems.refusal(400, refusal.field or "$", refusal.message)


def _rulebook(request, rulebook: Rulebook, now) -> dict:
    versions = sorted(rulebook.versions.all(), key=lambda v: -v.number)
    in_force = next(
        (
            v
            for v in sorted(versions, key=lambda v: v.effective_from, reverse=True)
            if v.status == "approved" and v.effective_from <= now
        ),
        None,
    )
    for version in versions:
        version.rulebook = rulebook
    return {
        "key": rulebook.key,
        "in_force": in_force.number if in_force else None,
        "versions": [_version(request, v) for v in versions],
    }


def _version(request, version: RulebookVersion) -> dict:
    def name(user):
        return user.get_username() if user is not None else None

    def time(value):
        return value.isoformat() if value is not None else None

    return {
        "rulebook": version.rulebook.key,
        "version": version.number,
        "status": version.status,
        "effective_from": time(version.effective_from),
        "parameters": version.parameters,
        "text": version.text,
        "proposed_by": name(version.proposed_by),
        "proposed_at": time(version.proposed_at),
        "proposal_reason": version.proposal_reason,
        "approved_by": name(version.approved_by),
        "approved_at": time(version.approved_at),
        "approval_reason": version.approval_reason,
        "withdrawn_by": name(version.withdrawn_by),
        "withdrawn_at": time(version.withdrawn_at),
        "withdrawal_reason": version.withdrawal_reason,
        "url": request.build_absolute_uri(reverse("api:rulebook", args=[version.rulebook.key])),
    }


@api_endpoint(
    "POST",
    scope=TokenScope.RULEBOOKS_WRITE,
    allowed=permissions.RULEBOOK_WRITERS,
    body=SimulationRequest,
    answers={201: SimulationAnswer, 404: Refusal, 409: Refusal},
    links={201: {"simulation": ("simulation", {"simulation_id": "$response.body#/id"})}},
    example={"crashed_from": "2026-07-01T00:00:00Z", "crashed_until": "2026-10-01T00:00:00Z"},
)
def rulebook_version_simulations(request: HttpRequest, user, key: str, number: int) -> HttpResponse:
    """Simulate the version over past cases in the background; follow it at its URL."""
    body = _read(request, SimulationRequest)
    version = (
        RulebookVersion.objects.select_related("rulebook")
        .filter(rulebook__key=key, number=number)
        .first()
    )
    if version is None:
        return problems.refusal(404, "$", f"Rulebook {key!r} has no version {number}.")
    times = {}
    for name in ("crashed_from", "crashed_until"):
        value = getattr(body, name)
        try:
            times[name] = bounds.parse_rfc3339(value) if value is not None else None
        except ValueError as problem:
            raise InvalidInput.at(name, str(problem)) from None
    selection = {
        name: value for name, value in msgspec.structs.asdict(body).items() if value is not None
    }
    cases = simulation_cases(incident=body.incident, rulebook=body.rulebook, **times)
    try:
        simulation = rulebook_services.simulation_start(
            version=version, actor=user, cases=cases, selection=selection
        )
    except DomainError as refusal:
        return _refused(refusal)
    simulation.refresh_from_db()
    return answer(_simulation(request, simulation), SimulationAnswer, status=201)


@api_endpoint(
    "GET",
    "HEAD",
    scope=TokenScope.RULEBOOKS_READ,
    allowed=permissions.RULEBOOK_READERS,
    answers={200: SimulationAnswer, 404: Refusal},
)
def simulation(request: HttpRequest, user, simulation_id: int) -> HttpResponse:
    """A simulation with its progress, and once done its summary and each case's figures."""
    found = (
        Simulation.objects.select_related("version__rulebook", "requested_by", "job")
        .filter(pk=simulation_id)
        .first()
    )
    if found is None:
        return problems.refusal(404, "$", f"There is no simulation #{simulation_id}.")
    return answer(_simulation(request, found), SimulationAnswer)


def _simulation(request, simulation: Simulation) -> dict:
    progress = job_progress(simulation.job) if simulation.job else None
    return {
        "id": simulation.pk,
        "rulebook": simulation.version.rulebook.key,
        "version": simulation.version.number,
        "requested_by": simulation.requested_by.get_username(),
        "requested_at": simulation.requested_at.isoformat(),
        "selection": simulation.selection,
        "case_count": simulation.case_count,
        "status": simulation.job.status if simulation.job else "queued",
        "done": progress.finished if progress else 0,
        "summary": simulation.summary,
        "results": [
            {
                "case": result.case_id,
                "stage_then": result.stage_then,
                "remedy_then": result.remedy_then,
                "totals_then": result.totals_then,
                "stage_draft": result.stage_draft,
                "remedy_draft": result.remedy_draft,
                "totals_draft": result.totals_draft,
                "needs_decision": result.needs_decision,
            }
            for result in simulation.results.order_by("case_id")
        ],
        "url": request.build_absolute_uri(reverse("api:simulation", args=[simulation.pk])),
    }
