"""Rulebook versions: proposed by a Tournament Manager, approved by another, withdrawn before
they take effect. Each step is one transaction with its event."""

import re
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from settlements import markdown
from settlements.access import permissions, roles
from settlements.errors import DomainError
from settlements.models import Case, Event, Job, Rulebook, RulebookVersion, Simulation
from settlements.models.rulebooks import KEY_MAX_LENGTH
from settlements.rules import InvalidInput, parse_policy
from settlements.rules.policy import ROOT
from settlements.selectors.rulebooks import latest_approved_version
from settlements.services import jobs
from settlements.services.common import record_event, required_text, save_with_history
from settlements.workflow import RulebookVersionStatus, rulebook_version_next_status

KEY_PATTERN = re.compile(rf"[a-z0-9](?:[a-z0-9-]{{0,{KEY_MAX_LENGTH - 1}}})")


def check_key(key) -> str:
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise DomainError(
            f"A rulebook key is 1 to {KEY_MAX_LENGTH} lower-case letters, digits and hyphens, "
            "starting with a letter or digit.",
            field="key",
        )
    return key


def checked_parameters(parameters) -> dict:
    """Every policy parameter, defaults filled in; DomainError naming the first bad one as
    ``parameters.<key>``."""
    if not isinstance(parameters, dict):
        raise DomainError("Give the parameters as an object of policy keys.", field="parameters")
    try:
        policy = parse_policy(parameters)
    except InvalidInput as invalid:
        problem = invalid.problems[0]
        key = problem.path.removeprefix(ROOT).lstrip(".")
        raise DomainError(
            f"{key or 'parameters'}: {problem.message}",
            field=f"parameters.{key}" if key else "parameters",
        ) from None
    return policy.parameters


def _check_effective_from(value, rulebook: Rulebook | None, now: datetime) -> datetime:
    if not isinstance(value, datetime) or timezone.is_naive(value):
        raise DomainError("Give a date and time with its time zone.", field="effective_from")
    if value <= now:
        raise DomainError(
            "The effective-from time must be in the future: a change never reaches back over "
            "tournaments already running.",
            field="effective_from",
        )
    latest = latest_approved_version(rulebook) if rulebook else None
    if latest is not None and value <= latest.effective_from:
        raise DomainError(
            f"The effective-from time must be after that of {latest} "
            f"({latest.effective_from.isoformat()}).",
            field="effective_from",
        )
    return value


@transaction.atomic
def rulebook_version_propose(
    *, key: str, parameters, text: str, effective_from: datetime, actor, reason: str
) -> RulebookVersion:
    """A new version of the rulebook ``key`` (made with it when the key is new), waiting for
    another Tournament Manager's approval."""
    permissions.enforce(permissions.rulebook_propose(user=actor))
    key = check_key(key)
    parameters = checked_parameters(parameters)
    text = markdown.check_text(text)
    reason = required_text(reason, "reason")
    now = timezone.now()
    rulebook = Rulebook.objects.select_for_update().filter(key=key).first()
    effective_from = _check_effective_from(effective_from, rulebook, now)
    if rulebook is None:
        rulebook = Rulebook(key=key)
        save_with_history(rulebook, actor=actor, reason=reason)
    last = rulebook.versions.order_by("-number").values_list("number", flat=True).first()
    version = RulebookVersion(
        rulebook=rulebook,
        number=(last or 0) + 1,
        status=RulebookVersionStatus.PROPOSED,
        parameters=parameters,
        text=text,
        effective_from=effective_from,
        proposed_by=actor,
        proposed_at=now,
        proposal_reason=reason,
    )
    save_with_history(version, actor=actor, reason=reason)
    record_event(
        Event.Type.RULEBOOK_VERSION_PROPOSED,
        actor=actor,
        subject=version,
        reason=reason,
        data=_event_data(version),
    )
    return version


@transaction.atomic
def rulebook_version_approve(*, version: RulebookVersion, actor, reason: str) -> RulebookVersion:
    version = _locked(version)
    permissions.enforce(permissions.rulebook_version_approve(version=version, user=actor))
    # What the desk pays from its effective time on changes with it, as with a settlement.
    permissions.enforce(permissions.step_up(user=actor, action="approve rulebook versions"))
    reason = required_text(reason, "reason")
    now = timezone.now()
    if version.effective_from <= now:
        raise DomainError(
            f"{version} was to take effect on {version.effective_from.isoformat()}, which has "
            "passed; propose a new version with a later time.",
            field="effective_from",
        )
    latest = latest_approved_version(version.rulebook)
    if latest is not None and version.effective_from <= latest.effective_from:
        raise DomainError(
            f"{version} would take effect before {latest}, approved since; propose it again "
            "with a later time.",
            field="effective_from",
        )
    version.status = rulebook_version_next_status(version.status, "approve", label=str(version))
    version.approved_by, version.approved_at, version.approval_reason = actor, now, reason
    save_with_history(version, actor=actor, reason=reason)
    record_event(
        Event.Type.RULEBOOK_VERSION_APPROVED,
        actor=actor,
        subject=version,
        reason=reason,
        data=_event_data(version),
    )
    return version


@transaction.atomic
def rulebook_version_withdraw(*, version: RulebookVersion, actor, reason: str) -> RulebookVersion:
    version = _locked(version)
    permissions.enforce(
        permissions.rulebook_version_withdraw(version=version, user=actor, now=timezone.now())
    )
    reason = required_text(reason, "reason")
    version.status = rulebook_version_next_status(version.status, "withdraw", label=str(version))
    version.withdrawn_by, version.withdrawn_at = actor, timezone.now()
    version.withdrawal_reason = reason
    save_with_history(version, actor=actor, reason=reason)
    record_event(
        Event.Type.RULEBOOK_VERSION_WITHDRAWN,
        actor=actor,
        subject=version,
        reason=reason,
        data=_event_data(version),
    )
    return version


def _locked(version: RulebookVersion) -> RulebookVersion:
    return (
        RulebookVersion.objects.select_for_update(of=("self",))
        .select_related("rulebook")
        .get(pk=version.pk)
    )


def _event_data(version: RulebookVersion) -> dict:
    return {
        "rulebook": version.rulebook.key,
        "version": version.number,
        "effective_from": version.effective_from.isoformat(),
        "parameters": version.parameters,
    }


def simulation_start(*, version, actor, cases, selection: dict) -> Simulation:
    """Simulate ``version`` over ``cases`` (crash cases with a snapshot) in the background;
    ``selection`` says how they were picked, recorded with the simulation."""
    roles.require_role(
        actor, *jobs.STARTERS[Job.Kind.SIMULATE], action="simulate rulebook versions"
    )
    cases = list(cases.filter(kind=Case.Kind.CRASH, snapshot__isnull=False).order_by("pk"))
    if not cases:
        raise DomainError("No past case matches: pick other cases to simulate.", field="cases")
    with transaction.atomic():
        simulation = Simulation(
            version=version, requested_by=actor, selection=selection, case_count=len(cases)
        )
        simulation._history_user, simulation._change_reason = actor, "Simulation asked for"
        simulation.save()
        job = jobs.job_start(
            kind=Job.Kind.SIMULATE,
            actor=actor,
            target=f"simulation:{simulation.pk}",
            items=[jobs.NewItem(key=str(case.pk), label=f"Case #{case.pk}") for case in cases],
            params={"simulation": simulation.pk},
        )
        Simulation.objects.filter(pk=simulation.pk).update(job=job)
        simulation.job = job
    return simulation
