"""The Marketing Manager's decision on a case the rules leave open."""

from collections.abc import Sequence
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from settlements import bounds, wording
from settlements.access import permissions, roles
from settlements.errors import DomainError
from settlements.models import Case, Decision, Event
from settlements.selectors.cases import default_invite_scope
from settlements.services.common import (
    checked_time,
    entrants_among,
    lock_case,
    record_event,
    required_text,
    save_with_history,
)
from settlements.workflow import case_next_status


@transaction.atomic
def decision_record(
    *,
    case: Case,
    actor,
    option: str,
    reason: str,
    reschedule_at: datetime | None = None,
    invited_players: Sequence[str] | None = None,
) -> Decision:
    """The Marketing Manager's choice among the options the rules offer for this case.

    A reschedule needs the new date; its invitations default to every entrant (early stage)
    or the remaining players (middle stage); a list given instead must name entrants.
    """
    case = lock_case(case)
    permissions.enforce(permissions.decision_record(case=case, user=actor))
    next_status = case_next_status(case.status, "decide", label=str(case))
    if option not in case.decision_options:
        offered = " or ".join(wording.option_label(code) for code in case.decision_options)
        raise DomainError(f"Choose {offered}.", field="option")
    reason = required_text(reason, "reason")

    scope = ""
    custom: list[str] = []
    if option == "reschedule":
        if reschedule_at is not None:
            reschedule_at = checked_time(reschedule_at, "reschedule_at")
        check_reschedule_date(reschedule_at)
        if invited_players is None:
            scope = default_invite_scope(case.stage)
        else:
            scope = Decision.InviteScope.CUSTOM
            custom = check_invitees(case=case, invited=invited_players)
    elif reschedule_at is not None or invited_players is not None:
        raise DomainError("Only a reschedule takes a new date and invitations.", field="option")

    decision = Decision(
        case=case,
        role=roles.MARKETING_MANAGER,
        option=option,
        reason=reason,
        decided_by=actor,
        reschedule_at=reschedule_at,
        invite_scope=scope,
        invited_players=custom,
    )
    save_with_history(decision, actor=actor, reason=reason)
    case.decision = option
    case.status = next_status
    save_with_history(case, actor=actor, reason=f"Decision: {wording.option_label(option)}")
    record_event(
        Event.Type.DECISION_RECORDED,
        actor=actor,
        case=case,
        subject=decision,
        reason=reason,
        data={
            "option": option,
            "reschedule_at": reschedule_at.isoformat() if reschedule_at else None,
            "invite_scope": scope,
            "invited": len(custom) if custom else None,
        },
    )
    return decision


def check_reschedule_date(reschedule_at: datetime | None) -> None:
    """A reschedule's new date is given and in the future. The decision form asks too, so that
    its confirmation step never shows a date the service would refuse."""
    if reschedule_at is None:
        raise DomainError("A reschedule needs the new date.", field="reschedule_at")
    # Asked here too, not only when the decision is recorded: a decision of many cases is
    # recorded by a job, where a date past the bounds failed every case one by one.
    if problem := bounds.time_problem(reschedule_at):
        raise DomainError(f"The new date {problem}.", field="reschedule_at")
    if reschedule_at <= timezone.now():
        raise DomainError("The new date must be in the future.", field="reschedule_at")


def check_invitees(*, case: Case, invited: Sequence[str]) -> list[str]:
    """A hand-picked invitation list: entrants of the case, each once. The decision form asks
    too, so that the refusal shows at the list before the confirmation step."""
    invited = list(invited)
    if not invited:
        raise DomainError("Invite at least one player.", field="invited_players")
    if len(set(invited)) != len(invited):
        raise DomainError("A player is invited twice.", field="invited_players")
    unknown = set(invited) - entrants_among(case, invited)
    if unknown:
        names = ", ".join(sorted(map(str, unknown))[:5])
        raise DomainError(
            f"Only entrants can be invited; not entrants: {names}.", field="invited_players"
        )
    return invited
