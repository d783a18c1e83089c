"""Withdrawing a crash case loaded in error: who may, from which states, what it does to the
case's settlements, what it leaves on record, and loading the tournament again afterwards."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from settlements.errors import DomainError, Duplicate, InvalidTransition, NotAllowed
from settlements.models import Case, Event, Settlement, Snapshot
from settlements.selectors import cases
from settlements.selectors.dashboard import waiting_for
from settlements.services import compensation
from settlements.services import settlements as settlement_services
from settlements.services.compensation import CompensationEntry
from settlements.services.decisions import decision_record
from settlements.services.incidents import incident_close
from settlements.services.individual_cases import individual_case_open, prize_withdrawal_decide
from settlements.services.snapshots import case_load_snapshot, case_withdraw
from settlements.workflow import (
    CASE_FINAL,
    CaseStatus,
    CompensationStatus,
    SettlementStatus,
    case_allows,
    case_next_status,
    settlement_allows,
    settlement_next_status,
)
from tests.services.helpers import approved, event_types, load, row_counts, submitted

pytestmark = pytest.mark.django_db

REASON = "Snapshot of the wrong table: T-1 was exported from the satellite server"


# --- The state machines ----------------------------------------------------------------------


def test_a_crash_case_is_withdrawn_from_any_state_before_approval():
    withdrawable = {
        CaseStatus.AWAITING_DECISION,
        CaseStatus.READY,
        CaseStatus.PREPARED,
        CaseStatus.AWAITING_APPROVAL,
        CaseStatus.REJECTED,
    }
    for status in CaseStatus.values:
        if status in withdrawable:
            assert case_next_status(status, "withdraw", label="Case #1") == CaseStatus.WITHDRAWN
        else:
            assert not case_allows(status, "withdraw")
            with pytest.raises(InvalidTransition):
                case_next_status(status, "withdraw", label="Case #1")
    assert CaseStatus.WITHDRAWN in CASE_FINAL
    for action in ("decide", "prepare", "submit", "approve", "reject", "resolve"):
        assert not case_allows(CaseStatus.WITHDRAWN, action)


def test_only_an_unapproved_settlement_is_withdrawn():
    for status in (SettlementStatus.PREPARED, SettlementStatus.AWAITING_APPROVAL):
        assert settlement_next_status(status, "withdraw", label="S") == SettlementStatus.WITHDRAWN
    for status in (
        SettlementStatus.APPROVED,
        SettlementStatus.REJECTED,
        SettlementStatus.WITHDRAWN,
    ):
        assert not settlement_allows(status, "withdraw")
    for action in ("submit", "approve", "reject"):
        assert not settlement_allows(SettlementStatus.WITHDRAWN, action)


# --- Withdrawing -----------------------------------------------------------------------------


def test_an_operator_withdraws_a_ready_case_and_it_is_audited(operator, snapshot_factory):
    case = load(operator, snapshot_factory, tournament_id="T-1")
    withdrawn = case_withdraw(case=case, actor=operator, reason=f"  {REASON}  ")

    case.refresh_from_db()
    assert case.status == withdrawn.status == CaseStatus.WITHDRAWN
    assert case.withdrawn_by == operator
    assert timezone.now() - case.withdrawn_at < timedelta(minutes=1)
    assert case.withdrawal_reason == REASON
    # The snapshot and the entrants stay.
    assert Snapshot.objects.filter(pk=case.snapshot_id).exists()
    assert case.entries.count() == case.entrants

    version = case.history.latest()
    assert (version.status, version.history_user, version.history_change_reason) == (
        CaseStatus.WITHDRAWN,
        operator,
        REASON,
    )
    event = Event.objects.get(type=Event.Type.CASE_WITHDRAWN)
    assert (event.actor, event.case, event.incident, event.tournament) == (
        operator,
        case,
        case.incident,
        case.tournament,
    )
    assert (event.subject_type, event.subject_id, event.reason) == ("case", case.pk, REASON)
    assert event.data == {
        "status": CaseStatus.READY,
        "settlements_withdrawn": [],
        "compensation_withdrawn": [],
        "prize_withdrawals_withdrawn": [],
        "sha256": case.snapshot.sha256,
    }
    assert event_types(case=case)[-1] == Event.Type.CASE_WITHDRAWN


def test_a_manager_withdraws_a_case_waiting_for_approval_with_its_settlement(
    operator, tournament_manager, second_manager, snapshot_factory
):
    settlement = submitted(operator, snapshot_factory, tournament_id="T-2")
    case_withdraw(case=settlement.case, actor=tournament_manager, reason=REASON)

    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.WITHDRAWN
    # Withdrawn, not rejected: nobody reviewed it, so no reviewer is named.
    assert settlement.rejected_by is None and settlement.approved_by is None
    version = settlement.history.latest()
    assert version.history_user == tournament_manager
    assert version.history_change_reason == f"Withdrawn with case #{settlement.case_id}: {REASON}"
    event = Event.objects.get(type=Event.Type.CASE_WITHDRAWN)
    assert event.data["status"] == CaseStatus.AWAITING_APPROVAL
    assert event.data["settlements_withdrawn"] == [settlement.pk]

    # It can no longer be approved, rejected or submitted by anyone.
    with pytest.raises(InvalidTransition, match="withdrawn"):
        settlement_services.settlement_approve(settlement=settlement, actor=second_manager)
    with pytest.raises(InvalidTransition, match="withdrawn"):
        settlement_services.settlement_reject(
            settlement=settlement, actor=second_manager, reason="no"
        )
    with pytest.raises(InvalidTransition, match="withdrawn"):
        settlement_services.settlement_submit(settlement=settlement, actor=operator)


def test_a_prepared_settlement_is_withdrawn_and_a_rejected_one_stays_rejected(
    operator, tournament_manager, snapshot_factory
):
    first = submitted(operator, snapshot_factory, tournament_id="T-3")
    settlement_services.settlement_reject(
        settlement=first, actor=tournament_manager, reason="wrong note"
    )
    second = settlement_services.settlement_prepare(case=first.case, actor=operator)

    case_withdraw(case=first.case, actor=operator, reason=REASON)

    first.refresh_from_db()
    second.refresh_from_db()
    assert first.status == SettlementStatus.REJECTED
    assert second.status == SettlementStatus.WITHDRAWN
    event = Event.objects.get(type=Event.Type.CASE_WITHDRAWN)
    assert event.data == {
        "status": CaseStatus.PREPARED,
        "settlements_withdrawn": [second.pk],
        "compensation_withdrawn": [],
        "prize_withdrawals_withdrawn": [],
        "sha256": first.case.snapshot.sha256,
    }


def test_a_case_waiting_for_a_decision_is_withdrawn(operator, marketing_manager, snapshot_factory):
    case = load(operator, snapshot_factory, type="satellite", stage="middle")
    assert case.status == CaseStatus.AWAITING_DECISION
    case_withdraw(case=case, actor=operator, reason=REASON)
    with pytest.raises(InvalidTransition):
        decision_record(case=case, actor=marketing_manager, option="chip_equity", reason="fair")


# --- Refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["marketing_manager", "auditor", "none"])
def test_only_operators_and_tournament_managers_withdraw(users, snapshot_factory, who):
    case = load(users["operator"], snapshot_factory)
    before = row_counts()
    with pytest.raises(NotAllowed):
        case_withdraw(case=case, actor=users[who], reason=REASON)
    assert row_counts() == before


def test_an_approved_case_is_corrected_by_an_adjustment_not_withdrawn(
    operator, tournament_manager, snapshot_factory
):
    settlement = approved(operator, tournament_manager, snapshot_factory)
    before = row_counts()
    with pytest.raises(InvalidTransition, match="approved settlement.*adjustment"):
        case_withdraw(case=settlement.case, actor=operator, reason=REASON)
    assert row_counts() == before
    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.APPROVED


@pytest.mark.parametrize("reason", ["", "   \n"])
def test_a_reason_is_required(operator, snapshot_factory, reason):
    case = load(operator, snapshot_factory)
    before = row_counts()
    with pytest.raises(DomainError) as refused:
        case_withdraw(case=case, actor=operator, reason=reason)
    assert refused.value.field == "reason"
    assert row_counts() == before


def test_a_case_is_withdrawn_once(operator, tournament_manager, snapshot_factory):
    case = load(operator, snapshot_factory)
    case_withdraw(case=case, actor=operator, reason=REASON)
    with pytest.raises(InvalidTransition, match="it is withdrawn"):
        case_withdraw(case=case, actor=tournament_manager, reason="again")
    assert Event.objects.filter(type=Event.Type.CASE_WITHDRAWN).count() == 1


def test_an_individual_case_is_resolved_not_withdrawn(
    operator, tournament_manager, snapshot_factory
):
    crash = load(operator, snapshot_factory)
    individual = individual_case_open(
        tournament=crash.tournament,
        actor=tournament_manager,
        players=["p000001"],
        description="disconnected alone",
    )
    with pytest.raises(InvalidTransition, match="individual case"):
        case_withdraw(case=individual, actor=tournament_manager, reason=REASON)


def propose(case, operator, player="p000001"):
    return compensation.compensation_propose(
        case=case, actor=operator, reason="lag", entries=[CompensationEntry(player, 500)]
    )


def test_compensation_waiting_for_an_answer_is_withdrawn_with_the_case(
    operator, tournament_manager, snapshot_factory
):
    settlement = submitted(operator, snapshot_factory)
    waiting = propose(settlement.case, operator)
    other = propose(settlement.case, operator, "p000002")
    rejected = compensation.compensation_reject(
        compensation=other, actor=tournament_manager, reason="not ours"
    )
    case_withdraw(case=settlement.case, actor=operator, reason=REASON)
    waiting.refresh_from_db()
    rejected.refresh_from_db()
    assert waiting.status == CompensationStatus.WITHDRAWN
    assert rejected.status == CompensationStatus.REJECTED  # answered: left as it was
    assert waiting.history.first().history_change_reason == (
        f"Withdrawn with case #{settlement.case_id}: {REASON}"
    )
    event = Event.objects.get(type=Event.Type.CASE_WITHDRAWN)
    assert event.data["compensation_withdrawn"] == [waiting.pk]
    # Withdrawn, it can no longer be approved, so nothing of the case is ever paid.
    with pytest.raises(InvalidTransition):
        compensation.compensation_approve(compensation=waiting, actor=tournament_manager)


def test_approved_compensation_keeps_its_case_with_the_reason(
    operator, tournament_manager, snapshot_factory
):
    settlement = submitted(operator, snapshot_factory)
    owed = compensation.compensation_approve(
        compensation=propose(settlement.case, operator), actor=tournament_manager
    )
    waiting = propose(settlement.case, operator, "p000002")
    before = row_counts()
    with pytest.raises(InvalidTransition) as refused:
        case_withdraw(case=settlement.case, actor=operator, reason=REASON)
    assert str(refused.value).startswith(f"Compensation #{owed.pk} of Case #{settlement.case_id}")
    assert "has been approved and is to be paid" in str(refused.value)
    assert row_counts() == before
    waiting.refresh_from_db()
    assert waiting.status == CompensationStatus.PROPOSED


def test_a_withdrawn_case_takes_no_compensation_or_prize_decision(
    operator, tournament_manager, snapshot_factory
):
    settlement = submitted(operator, snapshot_factory)
    case = case_withdraw(case=settlement.case, actor=operator, reason=REASON)
    with pytest.raises(InvalidTransition, match="withdrawn"):
        compensation.compensation_propose(
            case=case, actor=operator, reason="lag", entries=[CompensationEntry("p000001", 5)]
        )
    with pytest.raises(InvalidTransition, match="withdrawn"):
        prize_withdrawal_decide(
            case=case,
            actor=tournament_manager,
            player="p000001",
            prize="first prize",
            outcome="withdraw",
            reason="paid twice",
        )


# --- Loading the tournament again ------------------------------------------------------------


def test_the_tournament_is_loaded_again_after_a_withdrawal(operator, snapshot_factory):
    wrong = load(operator, snapshot_factory, tournament_id="T-9", stage="middle")
    with pytest.raises(Duplicate, match="withdraw it first") as duplicate:
        load(operator, snapshot_factory, tournament_id="T-9", stage="late")
    assert duplicate.value.existing == wrong

    case_withdraw(case=wrong, actor=operator, reason=REASON)
    right = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_factory(tournament_id="T-9", stage="late"),
        incident=wrong.incident,
    )
    assert right.pk != wrong.pk
    assert right.tournament_id == wrong.tournament_id
    assert right.stage == "late" and right.status == CaseStatus.READY
    assert cases.crash_case_in_force(wrong.tournament) == right

    # Still one case in force: a third snapshot points at the new case.
    with pytest.raises(Duplicate) as duplicate:
        load(operator, snapshot_factory, tournament_id="T-9")
    assert duplicate.value.existing == right
    assert Case.objects.filter(tournament=wrong.tournament).count() == 2


def test_the_database_allows_one_crash_case_in_force_per_tournament(operator, snapshot_factory):
    case = load(operator, snapshot_factory)
    case_withdraw(case=case, actor=operator, reason=REASON)
    second = load(operator, snapshot_factory)

    def another(status):
        return Case.objects.create(
            kind="crash",
            incident=case.incident,
            tournament=case.tournament,
            snapshot=Snapshot.objects.create(
                text="{}", sha256="0" * 64, size_bytes=2, received_by=operator
            ),
            status=status,
            withdrawn_by=operator if status == CaseStatus.WITHDRAWN else None,
            withdrawn_at=timezone.now() if status == CaseStatus.WITHDRAWN else None,
            withdrawal_reason=REASON if status == CaseStatus.WITHDRAWN else "",
            created_by=operator,
        )

    with pytest.raises(IntegrityError), transaction.atomic():
        another(CaseStatus.READY)
    another(CaseStatus.WITHDRAWN)  # any number of withdrawn ones
    assert cases.crash_case_in_force(case.tournament) == second


@pytest.mark.parametrize(
    "fields",
    [
        {"withdrawn_by": None},
        {"withdrawn_at": None},
        {"withdrawal_reason": ""},
    ],
)
def test_the_database_refuses_a_withdrawal_without_who_when_and_why(
    operator, snapshot_factory, fields
):
    case = load(operator, snapshot_factory)
    with pytest.raises(IntegrityError), transaction.atomic():
        Case.objects.filter(pk=case.pk).update(
            status=CaseStatus.WITHDRAWN,
            **{
                "withdrawn_by": operator,
                "withdrawn_at": timezone.now(),
                "withdrawal_reason": REASON,
                **fields,
            },
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        Case.objects.filter(pk=case.pk).update(withdrawal_reason=REASON)


# --- What the lists make of it ---------------------------------------------------------------


def test_a_withdrawn_case_is_not_open_work(
    operator, tournament_manager, marketing_manager, snapshot_factory
):
    settlement = submitted(operator, snapshot_factory, tournament_id="T-A")
    deciding = load(operator, snapshot_factory, type="freeroll", stage="middle")
    ready = load(operator, snapshot_factory, tournament_id="T-C", stage="late")
    prepared = settlement_services.settlement_prepare(
        case=load(operator, snapshot_factory, tournament_id="T-D"), actor=operator
    )
    queues = {
        "decisions": marketing_manager,
        "to_prepare": operator,
        "to_submit": operator,
        "approvals": tournament_manager,
    }

    def queued() -> dict[str, int]:
        return {name: waiting_for(user)[name].count() for name, user in queues.items()}

    assert queued() == dict.fromkeys(queues, 1)
    for case in (settlement.case, deciding, ready, prepared.case):
        case_withdraw(case=case, actor=operator, reason=REASON)
    assert queued() == dict.fromkeys(queues, 0)
    incident = cases.incident_list().get(pk=ready.incident_id)
    assert incident.cases_in_progress == 0
    assert cases.case_status_counts()[CaseStatus.WITHDRAWN] == 4


def test_an_incident_whose_cases_are_withdrawn_can_be_closed(operator, snapshot_factory):
    case = load(operator, snapshot_factory)
    with pytest.raises(InvalidTransition):
        incident_close(incident=case.incident, actor=operator)
    case_withdraw(case=case, actor=operator, reason=REASON)
    incident = incident_close(incident=case.incident, actor=operator)
    assert not incident.is_open
    assert Settlement.objects.count() == 0
