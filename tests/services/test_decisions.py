"""The Marketing Manager's decisions: options, reasons, reschedule dates and invitations."""

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from settlements.errors import DomainError, InvalidTransition, NotAllowed
from settlements.models import Decision, Event
from settlements.selectors.cases import decision_invitees
from settlements.services.decisions import decision_record
from settlements.services.settlements import settlement_prepare
from settlements.workflow import CaseStatus
from tests.services.helpers import load

pytestmark = pytest.mark.django_db

NEXT_WEEK = timezone.now() + timedelta(days=7)


def test_a_decision_records_who_what_why_and_readies_the_case(
    operator, marketing_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, type="satellite", stage="middle")
    decision = decision_record(
        case=case, actor=marketing_manager, option="chip_equity", reason="  fairer to short stacks "
    )
    case.refresh_from_db()
    assert (case.status, case.decision) == (CaseStatus.READY, "chip_equity")
    assert (decision.option, decision.reason, decision.decided_by, decision.role) == (
        "chip_equity",
        "fairer to short stacks",
        marketing_manager,
        "marketing_manager",
    )
    assert decision.decided_at is not None
    assert decision.history.get().history_change_reason == "fairer to short stacks"
    event = Event.objects.get(type="decision_recorded")
    assert (event.actor, event.case, event.data["option"]) == (
        marketing_manager,
        case,
        "chip_equity",
    )


def test_early_freeroll_reschedule_invites_every_entrant_by_default(
    operator, marketing_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, type="freeroll", stage="early", entrants=20)
    decision = decision_record(
        case=case,
        actor=marketing_manager,
        option="reschedule",
        reason="players asked for it",
        reschedule_at=NEXT_WEEK,
    )
    assert decision.invite_scope == Decision.InviteScope.ENTRANTS
    assert decision.invited_players == []
    invitees = decision_invitees(decision)
    assert invitees == [f"p{i:06d}" for i in range(1, 21)]


def test_middle_freeroll_reschedule_invites_the_remaining_players_by_default(
    operator, marketing_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, type="freeroll", stage="middle", entrants=20)
    decision = decision_record(
        case=case,
        actor=marketing_manager,
        option="reschedule",
        reason="r",
        reschedule_at=NEXT_WEEK,
    )
    assert decision.invite_scope == Decision.InviteScope.REMAINING
    assert len(decision_invitees(decision)) == case.remaining


def test_a_chosen_invite_list_must_name_entrants_once_each(
    operator, marketing_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, type="freeroll", stage="middle", entrants=20)
    record = lambda invited: decision_record(  # noqa: E731
        case=case,
        actor=marketing_manager,
        option="reschedule",
        reason="r",
        reschedule_at=NEXT_WEEK,
        invited_players=invited,
    )
    with pytest.raises(DomainError, match="not entrants: stranger") as refused:
        record(["p000001", "stranger"])
    assert refused.value.field == "invited_players"
    with pytest.raises(DomainError, match="twice"):
        record(["p000001", "p000001"])
    with pytest.raises(DomainError, match="at least one"):
        record([])
    decision = record(["p000020", "p000001"])
    assert decision.invite_scope == Decision.InviteScope.CUSTOM
    assert decision_invitees(decision) == ["p000020", "p000001"]


@pytest.mark.parametrize(
    ("kwargs", "field", "message"),
    [
        ({"option": "split_evenly"}, "option", "Choose Reschedule or Split by chip equity"),
        ({"option": "chip_equity", "reason": " "}, "reason", "reason"),
        ({"option": "reschedule"}, "reschedule_at", "new date"),
        (
            {"option": "reschedule", "reschedule_at": timezone.now() - timedelta(hours=1)},
            "reschedule_at",
            "future",
        ),
        ({"option": "chip_equity", "reschedule_at": NEXT_WEEK}, "option", "Only a reschedule"),
        ({"option": "chip_equity", "invited_players": ["p000001"]}, "option", "Only a reschedule"),
    ],
)
def test_incomplete_or_wrong_decisions_are_refused(
    operator, marketing_manager, snapshot_factory, kwargs, field, message
):
    case = load(operator, snapshot_factory, type="freeroll", stage="middle")
    arguments = {"reason": "because", **kwargs}
    with pytest.raises(DomainError, match=message) as refused:
        decision_record(case=case, actor=marketing_manager, **arguments)
    assert refused.value.field == field
    assert not Decision.objects.exists()
    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_DECISION


def test_a_naive_reschedule_date_is_taken_in_the_site_time_zone(
    operator, marketing_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, type="freeroll", stage="middle")
    naive = datetime(2099, 1, 5, 18, 0)
    decision = decision_record(
        case=case, actor=marketing_manager, option="reschedule", reason="r", reschedule_at=naive
    )
    assert decision.reschedule_at == timezone.make_aware(naive)


def test_a_case_the_rules_settle_alone_takes_no_decision(
    operator, marketing_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, type="regular", stage="middle")
    with pytest.raises(InvalidTransition, match="needs no decision"):
        decision_record(case=case, actor=marketing_manager, option="chip_equity", reason="r")


def test_the_decision_may_be_revised_until_a_settlement_is_prepared(
    operator, marketing_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, type="satellite", stage="middle")
    decision_record(case=case, actor=marketing_manager, option="chip_equity", reason="a")
    decision_record(case=case, actor=marketing_manager, option="chip_proportional", reason="b")
    case.refresh_from_db()
    assert case.decision == "chip_proportional"
    assert case.decisions.order_by("-decided_at", "-id").first().reason == "b"
    assert Decision.objects.filter(case=case).count() == 2

    settlement_prepare(case=case, actor=operator)
    with pytest.raises(InvalidTransition, match="it is prepared"):
        decision_record(case=case, actor=marketing_manager, option="chip_equity", reason="c")


@pytest.mark.parametrize("who", ["operator", "tournament_manager", "auditor", "none"])
def test_only_marketing_managers_decide(users, snapshot_factory, who):
    case = load(users["operator"], snapshot_factory, type="satellite", stage="middle")
    with pytest.raises(NotAllowed, match="Marketing Managers"):
        decision_record(case=case, actor=users[who], option="chip_equity", reason="r")
