"""Simulations of a rulebook version: each chosen case's stored snapshot settled again under
the version, beside what its own version pays, without touching the case. One step a case
(run by the job of kind ``simulate``, services.jobs), then a summary once all are in."""

from collections import defaultdict

from django.db import transaction
from django.utils import timezone

from settlements.errors import DomainError
from settlements.models import Case, Simulation, SimulationResult
from settlements.rules import InvalidInput, assess, parse_policy, parse_snapshot, settle


def simulate_case(*, simulation: Simulation, case: Case) -> SimulationResult:
    """The case then (its own version) and under the simulated version; the case's recorded
    decision is kept where the version still offers it, else the case needs a new one."""
    if case.snapshot_id is None:
        raise DomainError(f"{case} has no snapshot to settle again.")
    parsed = parse_snapshot(case.snapshot.text)
    draft = parse_policy(simulation.version.parameters)
    try:
        then = settle(parsed, decision=case.decision or None, policy=parse_policy(case.policy))
        options = assess(parsed, draft).decision_options
        needs_decision = bool(options) and case.decision not in options
        under = (
            settle(parsed, decision=(case.decision or None) if options else None, policy=draft)
            if not needs_decision
            else None
        )
    except InvalidInput as invalid:
        raise DomainError(
            "The rules cannot settle it: " + "; ".join(str(p) for p in invalid.problems)
        ) from None
    totals_then = _by_player(then)
    totals_draft = _by_player(under) if under is not None else {}
    differences: dict[str, list[int]] = {}
    if under is not None:
        for unit in sorted(set(totals_then) | set(totals_draft)):
            was, now = totals_then.get(unit, {}), totals_draft.get(unit, {})
            differences[unit] = [
                now.get(player, 0) - was.get(player, 0) for player in sorted(set(was) | set(now))
            ]
    return SimulationResult.objects.create(
        simulation=simulation,
        case=case,
        stage_then=then.stage,
        remedy_then=then.remedy or "",
        totals_then={unit: sum(p.values()) for unit, p in totals_then.items()},
        stage_draft=under.stage if under is not None else assess(parsed, draft).stage,
        remedy_draft=(under.remedy or "") if under is not None else "",
        totals_draft={unit: sum(p.values()) for unit, p in totals_draft.items()},
        needs_decision=needs_decision,
        differences=differences,
    )


def _by_player(result) -> dict[str, dict[str, int]]:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for line in result.lines:
        totals[line.unit][line.player] += line.amount
    return {unit: dict(players) for unit, players in totals.items()}


def simulation_step(*, simulation_id: int, case_id: int) -> tuple[str, Case]:
    """One item of a simulation's job: the case settled again, and the item's outcome."""
    simulation = Simulation.objects.select_related("version").get(pk=simulation_id)
    case = Case.objects.select_related("snapshot").get(pk=case_id)
    if simulate_case(simulation=simulation, case=case).needs_decision:
        return "Needs a new decision: the version no longer offers the one recorded.", case
    return "Settled again under the version.", case


@transaction.atomic
def simulation_summarise(*, simulation_id: int) -> Simulation:
    """Players better off, worse off and unchanged, the largest gain and loss for one player
    and the totals then and under the draft, by unit; the cases that need a new decision."""
    simulation = Simulation.objects.select_for_update().get(pk=simulation_id)
    summary: dict = {"cases": 0, "needs_decision": [], "units": {}}
    units: dict = defaultdict(
        lambda: {
            "better": 0,
            "worse": 0,
            "unchanged": 0,
            "largest_gain": 0,
            "largest_loss": 0,
            "then": 0,
            "draft": 0,
        }
    )
    for result in simulation.results.order_by("case_id").iterator():
        summary["cases"] += 1
        if result.needs_decision:
            summary["needs_decision"].append(result.case_id)
            continue
        for unit, amount in result.totals_then.items():
            units[unit]["then"] += amount
        for unit, amount in result.totals_draft.items():
            units[unit]["draft"] += amount
        for unit, differences in result.differences.items():
            figures = units[unit]
            for difference in differences:
                key = "better" if difference > 0 else "worse" if difference < 0 else "unchanged"
                figures[key] += 1
                figures["largest_gain"] = max(figures["largest_gain"], difference)
                figures["largest_loss"] = min(figures["largest_loss"], difference)
    summary["units"] = dict(units)
    simulation.summary, simulation.finished_at = summary, timezone.now()
    simulation._history_user = simulation.requested_by
    simulation._change_reason = "Every case simulated"
    simulation.save(update_fields=["summary", "finished_at"])
    return simulation
