"""Compensation the house pays named players: proposed, then approved or rejected by another
Tournament Manager.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from settlements import audit_log, site_policy
from settlements.access import permissions
from settlements.errors import DomainError
from settlements.models import (
    Case,
    Compensation,
    CompensationItem,
    Event,
    IcmValue,
    Unit,
)
from settlements.selectors.icm import case_icm_valuation
from settlements.services.common import (
    BULK_BATCH,
    check_amount,
    check_player_id,
    lock_case,
    lock_case_of,
    players_of,
    record_event,
    required_text,
    save_with_history,
)
from settlements.services.payments import release_lines
from settlements.workflow import CompensationStatus, compensation_next_status


@dataclass(frozen=True)
class CompensationEntry:
    player: str
    amount: int
    unit: str = Unit.CASH


@transaction.atomic
def compensation_propose(
    *,
    case: Case,
    actor,
    reason: str,
    entries: Sequence[CompensationEntry],
    from_icm: bool = False,
) -> Compensation:
    """Propose that the house pays named players for an injustice; a Tournament Manager
    other than the proposer decides. ``from_icm``: proposed from the settlement's ICM second
    opinion, whose figures for the players named are recorded with the proposal."""
    case = lock_case(case)
    has_settlement = case.is_crash and case.settlements.exists()
    permissions.enforce(
        permissions.compensation_propose(case=case, user=actor, has_settlement=has_settlement)
    )
    reason = required_text(reason, "reason")
    players = _checked_players(case, entries)
    totals: dict[str, int] = defaultdict(int)
    for entry in entries:
        totals[entry.unit] += entry.amount
    icm_figures = _icm_figures(case, players) if from_icm else {}
    compensation = Compensation(
        case=case,
        status=CompensationStatus.PROPOSED,
        currency=case.tournament.currency,
        reason=reason,
        proposed_by=actor,
        totals=dict(totals),
        icm_figures=icm_figures,
        items_digest=audit_log.items_digest(
            (line_no, entry.player, entry.unit, entry.amount)
            for line_no, entry in enumerate(entries, start=1)
        ),
    )
    save_with_history(compensation, actor=actor, reason=reason)
    CompensationItem.objects.bulk_create(
        [
            CompensationItem(
                compensation=compensation,
                line_no=line_no,
                player=entry.player,
                unit=entry.unit,
                amount=entry.amount,
            )
            for line_no, entry in enumerate(entries, start=1)
        ],
        batch_size=BULK_BATCH,
    )
    record_event(
        Event.Type.COMPENSATION_PROPOSED,
        actor=actor,
        case=case,
        subject=compensation,
        reason=reason,
        data={
            "players": len(players),
            "totals": compensation.totals,
            **({"from_icm": icm_figures["valuation"]} if icm_figures else {}),
        },
    )
    return compensation


def _checked_players(case: Case, entries: Sequence[CompensationEntry]) -> set[str]:
    """The players named, once every entry is checked: a player of the case, a unit the house
    pays compensation in, a positive amount, each player and unit once."""
    if not entries:
        raise DomainError("Name at least one player and amount.", field="entries")
    allowed_units = {Unit.CASH, Unit.TDOLLARS, Unit.FPP}
    seen: set[tuple[str, str]] = set()
    for number, entry in enumerate(entries, start=1):
        where = f"Line {number}"
        check_player_id(entry.player, where, field="entries")
        if entry.unit not in allowed_units:
            raise DomainError(f"{where}: pay compensation in cash, T$ or FPP.", field="entries")
        check_amount(entry.amount, "entries", positive=True, what=f"{where}: the amount")
        if (entry.player, entry.unit) in seen:
            raise DomainError(
                f"{where}: {entry.player} is listed twice in {entry.unit}.", field="entries"
            )
        seen.add((entry.player, entry.unit))
    players = {entry.player for entry in entries}
    outsiders = players - players_of(case, players)
    if outsiders:
        raise DomainError(
            f"Not a player of {case}: {', '.join(sorted(outsiders)[:5])}.", field="entries"
        )
    return players


def _icm_figures(case: Case, players: set[str]) -> dict:
    """What the ICM second opinion of the case's current settlement says of ``players``."""
    valuation = case_icm_valuation(case)
    if valuation is None:
        raise DomainError(
            f"{case} has no ICM comparison to propose from; propose compensation without it."
        )
    flag = site_policy.icm_flag()
    rows = IcmValue.objects.filter(valuation=valuation, player__in=players)
    return {
        "valuation": valuation.pk,
        "method": valuation.method,
        "flag": {"percent": flag.percent, "min_amount": flag.min_amount},
        "players": {
            row.player: {
                "policy": row.policy_amount,
                "icm": row.amount,
                "difference": row.difference,
            }
            for row in rows
        },
    }


@transaction.atomic
def compensation_approve(*, compensation: Compensation, actor, reason: str = "") -> Compensation:
    return _compensation_review(compensation, actor, "approve", reason)


@transaction.atomic
def compensation_reject(*, compensation: Compensation, actor, reason: str) -> Compensation:
    return _compensation_review(compensation, actor, "reject", required_text(reason, "reason"))


def _compensation_review(compensation: Compensation, actor, action: str, reason: str):
    # The case before its compensation, as case_withdraw locks them: locked the other way
    # round, an approval and a withdrawal of the case deadlocked.
    case = lock_case_of(compensation)
    compensation = (
        Compensation.objects.select_for_update(of=("self",))
        .select_related("case__tournament", "case__incident")
        .get(pk=compensation.pk)
    )
    compensation.case = case
    refusal = (
        permissions.compensation_approve if action == "approve" else permissions.compensation_reject
    )(compensation=compensation, user=actor)
    permissions.enforce(refusal)
    if action == "approve":
        permissions.enforce(permissions.step_up(user=actor, action="approve compensation"))
    new_status = compensation_next_status(compensation.status, action, label=str(compensation))
    compensation.status = new_status
    if action == "approve":
        compensation.approved_by = actor
    else:
        compensation.rejected_by = actor
    compensation.reviewed_at = timezone.now()
    compensation.review_reason = reason.strip()
    save_with_history(compensation, actor=actor, reason=reason.strip() or action.capitalize() + "d")
    if action == "approve":
        release_lines(
            actor=actor,
            case=compensation.case,
            currency=compensation.currency,
            line_count=compensation.items.count(),
            totals=compensation.totals,
            compensation=compensation,
        )
    record_event(
        Event.Type.COMPENSATION_APPROVED
        if action == "approve"
        else Event.Type.COMPENSATION_REJECTED,
        actor=actor,
        case=compensation.case,
        subject=compensation,
        reason=compensation.review_reason,
        data={"totals": compensation.totals},
    )
    return compensation
