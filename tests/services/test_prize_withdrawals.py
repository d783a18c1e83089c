"""A prize given in error taken back is a debit: one Tournament Manager proposes it, another
approves it, and only then does its line reach the cashier's feed."""

import pytest
from django.db import IntegrityError, ProgrammingError, connection, transaction

from settlements.errors import DomainError, InvalidTransition, NotAllowed
from settlements.models import Event, LedgerRelease, PrizeWithdrawal
from settlements.selectors.payments.lines import approved_lines
from settlements.services import individual_cases
from settlements.services.snapshots import case_withdraw
from settlements.workflow import PrizeWithdrawalStatus
from tests.services.helpers import approved, event_types, load

pytestmark = pytest.mark.django_db


@pytest.fixture
def case(operator, tournament_manager, snapshot_factory):
    return approved(operator, tournament_manager, snapshot_factory, stage="late").case


def propose(case, manager, **changes) -> PrizeWithdrawal:
    fields = {
        "player": "p000003",
        "prize": "Cash paid twice",
        "outcome": "withdraw",
        "reason": "the cashier paid it twice",
        "amount": 700,
        "unit": "cash",
        **changes,
    }
    return individual_cases.prize_withdrawal_decide(case=case, actor=manager, **fields)


def feed_keys() -> list[str]:
    return [line.key for line in approved_lines() if line.key.startswith("W")]


def test_a_proposal_reaches_the_feed_only_once_another_manager_approves_it(
    case, tournament_manager, second_manager
):
    proposal = propose(case, tournament_manager)
    assert proposal.status == PrizeWithdrawalStatus.PROPOSED
    assert feed_keys() == [] and not LedgerRelease.objects.filter(prize_withdrawal=proposal)

    done = individual_cases.prize_withdrawal_approve(
        withdrawal=proposal, actor=second_manager, reason="checked with the cashier"
    )
    assert (done.status, done.approved_by, done.review_reason) == (
        "approved",
        second_manager,
        "checked with the cashier",
    )
    assert feed_keys() == [f"W{proposal.pk}-1"]
    [line] = [line for line in approved_lines() if line.key.startswith("W")]
    assert (line.player, line.unit, line.amount) == ("p000003", "cash", -700)
    release = LedgerRelease.objects.get(prize_withdrawal=proposal)
    assert (release.released_by, release.totals) == (second_manager, {"cash": -700})
    assert event_types(case=case)[-2:] == ["prize_withdrawal_decided", "prize_withdrawal_approved"]
    approval = Event.objects.get(type=Event.Type.PRIZE_WITHDRAWAL_APPROVED)
    assert (approval.actor, approval.reason) == (second_manager, "checked with the cashier")
    versions = done.history.order_by("history_date")
    assert [(v.status, v.history_user) for v in versions] == [
        ("proposed", tournament_manager),
        ("approved", second_manager),
    ]


def test_the_proposer_never_answers_their_own_proposal(case, tournament_manager, operator):
    proposal = propose(case, tournament_manager)
    with pytest.raises(NotAllowed, match="another Tournament Manager must approve"):
        individual_cases.prize_withdrawal_approve(withdrawal=proposal, actor=tournament_manager)
    with pytest.raises(NotAllowed, match="another Tournament Manager must reject"):
        individual_cases.prize_withdrawal_reject(
            withdrawal=proposal, actor=tournament_manager, reason="x"
        )
    with pytest.raises(NotAllowed):
        individual_cases.prize_withdrawal_approve(withdrawal=proposal, actor=operator)
    proposal.refresh_from_db()
    assert proposal.status == PrizeWithdrawalStatus.PROPOSED and feed_keys() == []


def test_a_rejected_proposal_collects_nothing_and_stays_rejected(
    case, tournament_manager, second_manager
):
    proposal = propose(case, tournament_manager)
    with pytest.raises(DomainError, match="reason"):
        individual_cases.prize_withdrawal_reject(
            withdrawal=proposal, actor=second_manager, reason=" "
        )
    done = individual_cases.prize_withdrawal_reject(
        withdrawal=proposal, actor=second_manager, reason="the player was owed it"
    )
    assert (done.status, done.rejected_by, done.approved_by) == ("rejected", second_manager, None)
    assert event_types(case=case)[-1] == "prize_withdrawal_rejected"
    with pytest.raises(InvalidTransition, match="it is rejected"):
        individual_cases.prize_withdrawal_approve(withdrawal=proposal, actor=second_manager)
    assert feed_keys() == []


def test_an_approved_withdrawal_is_final(case, tournament_manager, second_manager):
    proposal = propose(case, tournament_manager)
    individual_cases.prize_withdrawal_approve(withdrawal=proposal, actor=second_manager)
    for answer in (
        individual_cases.prize_withdrawal_approve,
        individual_cases.prize_withdrawal_reject,
    ):
        with pytest.raises(InvalidTransition, match="it is approved"):
            answer(withdrawal=proposal, actor=second_manager, reason="again")
    assert feed_keys() == [f"W{proposal.pk}-1"]


def test_a_prize_left_with_the_player_is_recorded_at_once(case, tournament_manager, second_manager):
    left = propose(case, tournament_manager, outcome="leave", amount=None, unit="")
    assert left.status == PrizeWithdrawalStatus.RECORDED
    assert Event.objects.get(type="prize_withdrawal_decided").data["status"] == "recorded"
    with pytest.raises(InvalidTransition):
        individual_cases.prize_withdrawal_approve(withdrawal=left, actor=second_manager)
    assert feed_keys() == []


def test_a_proposal_waiting_goes_with_its_case(
    operator, tournament_manager, second_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, stage="late")
    proposal = propose(case, tournament_manager)
    case_withdraw(case=case, actor=operator, reason="the wrong tournament's snapshot")
    proposal.refresh_from_db()
    assert proposal.status == PrizeWithdrawalStatus.WITHDRAWN
    event = Event.objects.get(type=Event.Type.CASE_WITHDRAWN)
    assert event.data["prize_withdrawals_withdrawn"] == [proposal.pk]
    with pytest.raises(InvalidTransition):
        individual_cases.prize_withdrawal_approve(withdrawal=proposal, actor=second_manager)
    assert feed_keys() == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the database's own guards")
def test_the_database_refuses_a_self_approval_and_an_edit_once_approved(
    case, tournament_manager, second_manager
):
    proposal = propose(case, tournament_manager)
    with pytest.raises(IntegrityError), transaction.atomic():
        PrizeWithdrawal.objects.filter(pk=proposal.pk).update(
            status="approved", approved_by=tournament_manager
        )
    individual_cases.prize_withdrawal_approve(withdrawal=proposal, actor=second_manager)
    with pytest.raises(ProgrammingError, match="pgtrigger"), transaction.atomic():
        PrizeWithdrawal.objects.filter(pk=proposal.pk).update(review_reason="edited")
