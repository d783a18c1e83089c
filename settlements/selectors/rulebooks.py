"""Reads of rulebooks: the version in force at a time, the versions waiting for approval."""

from datetime import datetime

from django.db.models import Prefetch

from settlements.models import Case, Rulebook, RulebookVersion, Simulation
from settlements.money import unit_rank
from settlements.workflow import CaseStatus, RulebookVersionStatus


def version_in_force(key: str, at: datetime) -> RulebookVersion | None:
    """The approved version of rulebook ``key`` in force at ``at``, or None (unknown rulebook,
    or ``at`` before its first version)."""
    return (
        RulebookVersion.objects.select_related("rulebook")
        .filter(
            rulebook__key=key,
            status=RulebookVersionStatus.APPROVED,
            effective_from__lte=at,
        )
        .order_by("-effective_from")
        .first()
    )


def versions_in_force(at: datetime) -> list[RulebookVersion]:
    """Each rulebook's version in force at ``at``, by rulebook key (those with none left out)."""
    approved = (
        RulebookVersion.objects.select_related("rulebook")
        .filter(status=RulebookVersionStatus.APPROVED, effective_from__lte=at)
        .order_by("rulebook__key", "-effective_from")
    )
    latest: dict[str, RulebookVersion] = {}
    for version in approved:  # few: versions change with the operator's policy
        latest.setdefault(version.rulebook.key, version)
    return list(latest.values())


def latest_approved_version(rulebook: Rulebook) -> RulebookVersion | None:
    """The approved version of ``rulebook`` taking effect last, whether or not it has yet."""
    return (
        rulebook.versions.filter(status=RulebookVersionStatus.APPROVED)
        .order_by("-effective_from")
        .first()
    )


def rulebook_list():
    """Every rulebook with its versions and who proposed, approved or withdrew each."""
    versions = RulebookVersion.objects.select_related(
        "proposed_by", "approved_by", "withdrawn_by"
    ).order_by("-number")
    return Rulebook.objects.prefetch_related(Prefetch("versions", queryset=versions)).order_by(
        "key"
    )


def rulebook_named(key: str, *, with_versions: bool = False) -> Rulebook | None:
    """The rulebook ``key`` (with its versions and who acted on each, for its page), or None."""
    rulebooks = rulebook_list() if with_versions else Rulebook.objects.all()
    return rulebooks.filter(key=key).first()


def version_numbered(key: str, number: int) -> RulebookVersion | None:
    """Version ``number`` of rulebook ``key``, with who proposed, approved or withdrew it."""
    return (
        RulebookVersion.objects.select_related(
            "rulebook", "proposed_by", "approved_by", "withdrawn_by"
        )
        .filter(rulebook__key=key, number=number)
        .first()
    )


def replaced_version(version: RulebookVersion) -> RulebookVersion | None:
    """The version ``version`` replaces: the approved one taking effect last before it."""
    return (
        version.rulebook.versions.filter(
            status=RulebookVersionStatus.APPROVED, effective_from__lt=version.effective_from
        )
        .exclude(pk=version.pk)
        .order_by("-effective_from")
        .first()
    )


def simulation_cases(
    *,
    incident: int | None = None,
    crashed_from: datetime | None = None,
    crashed_until: datetime | None = None,
    rulebook: str | None = None,
):
    """The past crash cases a simulation runs over, picked by incident, crash dates (from
    inclusive, until exclusive) and the rulebook they were settled under."""
    cases = Case.objects.filter(kind=Case.Kind.CRASH, snapshot__isnull=False).exclude(
        status=CaseStatus.WITHDRAWN
    )
    if incident is not None:
        cases = cases.filter(incident_id=incident)
    if crashed_from is not None:
        cases = cases.filter(crashed_at__gte=crashed_from)
    if crashed_until is not None:
        cases = cases.filter(crashed_at__lt=crashed_until)
    if rulebook:
        cases = cases.filter(rulebook_version__rulebook__key=rulebook)
    return cases


def latest_simulation(version: RulebookVersion) -> Simulation | None:
    return (
        Simulation.objects.select_related("requested_by", "job")
        .filter(version=version)
        .order_by("-requested_at", "-id")
        .first()
    )


def simulation_numbered(simulation_id: int) -> Simulation | None:
    return (
        Simulation.objects.select_related("version__rulebook", "requested_by", "job")
        .filter(pk=simulation_id)
        .first()
    )


def simulation_results(simulation: Simulation):
    return simulation.results.select_related("case__tournament").order_by("case_id")


def simulation_differences(simulation: Simulation) -> tuple[dict[str, list[int]], str | None]:
    """Every player's difference (under the version minus then) across the simulation's
    cases, by unit in the usual order, and the cases' currency (None when they are in
    several, as their amounts cannot then be read as one currency). One query."""
    by_unit: dict[str, list[int]] = {}
    currencies = set()
    rows = simulation.results.values_list("differences", "case__tournament__currency")
    for differences, currency in rows:
        if differences:  # a case that needs a new decision has none, and says nothing
            currencies.add(currency)
        for unit, amounts in differences.items():
            by_unit.setdefault(unit, []).extend(amounts)
    ordered = {unit: by_unit[unit] for unit in sorted(by_unit, key=unit_rank) if by_unit[unit]}
    return ordered, currencies.pop() if len(currencies) == 1 else None


def simulation_currency(simulation: Simulation | None) -> str | None:
    """The one currency of the simulation's cases, for its totals to read as money; None when
    they are in several (or there is no simulation)."""
    if simulation is None:
        return None
    currencies = (
        simulation.results.order_by()
        .values_list("case__tournament__currency", flat=True)
        .distinct()[:2]
    )
    found = list(currencies)
    return found[0] if len(found) == 1 else None
