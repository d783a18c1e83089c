"""Compensation, prize withdrawals, individual cases, incidents, tournaments and API tokens."""

import pytest
from django.utils import timezone

from settlements.access import roles
from settlements.errors import DomainError, Duplicate, InvalidTransition, NotAllowed
from settlements.models import ApiToken, CompensationItem, Event, Tournament
from settlements.services import compensation as compensation_services
from settlements.services import incidents, individual_cases
from settlements.services import settlements as settlement_services
from settlements.services.compensation import CompensationEntry
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create, api_token_revoke
from settlements.workflow import CaseStatus, CompensationStatus
from tests.conftest import make_user
from tests.services.helpers import approved, event_types, load, row_counts

pytestmark = pytest.mark.django_db


@pytest.fixture
def prepared_case(operator, snapshot_factory):
    case = load(operator, snapshot_factory)
    settlement_services.settlement_prepare(case=case, actor=operator)
    return case


# --- Compensation ------------------------------------------------------------------------------


def test_compensation_is_proposed_then_approved_by_a_manager(
    operator, tournament_manager, prepared_case
):
    compensation = compensation_services.compensation_propose(
        case=prepared_case,
        actor=operator,
        reason="disconnected by our server before the crash",
        entries=[
            CompensationEntry("p000003", 1500),
            CompensationEntry("p000004", 200, unit="fpp"),
            CompensationEntry("p000003", 300, unit="tdollars"),
        ],
    )
    assert compensation.status == CompensationStatus.PROPOSED
    assert compensation.totals == {"cash": 1500, "fpp": 200, "tdollars": 300}
    assert compensation.currency == "USD"
    items = list(
        CompensationItem.objects.filter(compensation=compensation).values_list(
            "line_no", "player", "unit", "amount"
        )
    )
    assert items == [
        (1, "p000003", "cash", 1500),
        (2, "p000004", "fpp", 200),
        (3, "p000003", "tdollars", 300),
    ]
    compensation = compensation_services.compensation_approve(
        compensation=compensation, actor=tournament_manager, reason="agreed"
    )
    assert (compensation.status, compensation.approved_by, compensation.review_reason) == (
        "approved",
        tournament_manager,
        "agreed",
    )
    assert [v.history_user for v in compensation.history.order_by("history_id")] == [
        operator,
        tournament_manager,
    ]
    assert event_types(type__startswith="compensation") == [
        "compensation_proposed",
        "compensation_approved",
    ]
    with pytest.raises(InvalidTransition, match="it is approved"):
        compensation_services.compensation_approve(
            compensation=compensation, actor=tournament_manager
        )


def test_a_manager_never_approves_their_own_proposal(
    tournament_manager, second_manager, prepared_case
):
    compensation = compensation_services.compensation_propose(
        case=prepared_case,
        actor=tournament_manager,
        reason="r",
        entries=[CompensationEntry("p000001", 100)],
    )
    with pytest.raises(NotAllowed, match="another Tournament Manager"):
        compensation_services.compensation_approve(
            compensation=compensation, actor=tournament_manager
        )
    with pytest.raises(NotAllowed):
        compensation_services.compensation_reject(
            compensation=compensation, actor=tournament_manager, reason="x"
        )
    rejected = compensation_services.compensation_reject(
        compensation=compensation, actor=second_manager, reason="already refunded"
    )
    assert (rejected.status, rejected.rejected_by) == ("rejected", second_manager)


def test_rejecting_compensation_needs_a_reason(operator, tournament_manager, prepared_case):
    compensation = compensation_services.compensation_propose(
        case=prepared_case, actor=operator, reason="r", entries=[CompensationEntry("p000001", 1)]
    )
    with pytest.raises(DomainError, match="reason"):
        compensation_services.compensation_reject(
            compensation=compensation, actor=tournament_manager, reason=""
        )


def test_compensation_waits_for_the_settlement_to_be_computed(operator, snapshot_factory):
    case = load(operator, snapshot_factory)
    with pytest.raises(InvalidTransition, match="once its settlement has been prepared"):
        compensation_services.compensation_propose(
            case=case, actor=operator, reason="r", entries=[CompensationEntry("p000001", 1)]
        )


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([], "at least one"),
        ([CompensationEntry("stranger", 100)], "Not a player"),
        ([CompensationEntry("p000001", 0)], "positive"),
        ([CompensationEntry("p000001", -5)], "positive"),
        ([CompensationEntry("p000001", 1.5)], "whole number"),
        ([CompensationEntry("p000001", True)], "whole number"),
        ([CompensationEntry("p000001", 10, unit="tickets")], "cash, T\\$ or FPP"),
        ([CompensationEntry("", 10)], "player id"),
        ([CompensationEntry("p000001", 1), CompensationEntry("p000001", 2)], "twice"),
    ],
)
def test_malformed_compensation_is_refused(operator, prepared_case, entries, message):
    before = row_counts()
    with pytest.raises(DomainError, match=message):
        compensation_services.compensation_propose(
            case=prepared_case, actor=operator, reason="r", entries=entries
        )
    assert row_counts() == before


@pytest.mark.parametrize("who", ["marketing_manager", "auditor", "none"])
def test_who_may_propose_compensation(users, prepared_case, who):
    with pytest.raises(NotAllowed):
        compensation_services.compensation_propose(
            case=prepared_case,
            actor=users[who],
            reason="r",
            entries=[CompensationEntry("p000001", 1)],
        )


# --- Prize withdrawals -------------------------------------------------------------------------


def test_a_manager_decides_on_a_prize_given_in_error(
    operator, tournament_manager, snapshot_factory
):
    settlement = approved(operator, tournament_manager, snapshot_factory)
    withdrawal = individual_cases.prize_withdrawal_decide(
        case=settlement.case,
        actor=tournament_manager,
        player="p000002",
        prize="Cash paid instead of a seat ticket",
        amount=5000,
        unit="cash",
        outcome="withdraw",
        reason="wrong prize type",
    )
    assert (withdrawal.outcome, withdrawal.decided_by, withdrawal.amount) == (
        "withdraw",
        tournament_manager,
        5000,
    )
    assert withdrawal.history.get().history_change_reason == "wrong prize type"
    event = Event.objects.get(type="prize_withdrawal_decided")
    assert event.data["outcome"] == "withdraw"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"outcome": "keep"}, "withdraw the prize or to leave"),
        ({"reason": ""}, "reason"),
        ({"prize": " "}, "prize"),
        ({"unit": "cash"}, "amount"),
        ({"amount": 5, "unit": "gold"}, "unit"),
        ({"amount": -5, "unit": "cash"}, "zero or more"),
    ],
)
def test_prize_withdrawal_refusals(operator, tournament_manager, snapshot_factory, kwargs, message):
    case = load(operator, snapshot_factory)
    arguments = {
        "player": "p000001",
        "prize": "a seat",
        "outcome": "leave",
        "reason": "r",
        **kwargs,
    }
    with pytest.raises(DomainError, match=message):
        individual_cases.prize_withdrawal_decide(case=case, actor=tournament_manager, **arguments)


def test_only_managers_decide_on_prizes(operator, snapshot_factory):
    case = load(operator, snapshot_factory)
    with pytest.raises(NotAllowed):
        individual_cases.prize_withdrawal_decide(
            case=case, actor=operator, player="p1", prize="x", outcome="leave", reason="r"
        )


# --- Individual cases --------------------------------------------------------------------------


def test_an_individual_case_is_opened_compensated_and_resolved(
    operator, tournament_manager, second_manager
):
    tournament = incidents.tournament_create(
        actor=operator, operator_id="T-IND", type="regular", currency="EUR"
    )
    case = individual_cases.individual_case_open(
        tournament=tournament,
        actor=tournament_manager,
        players=["alice", "bob"],
        description="both lost connection at the final table",
    )
    assert (case.kind, case.status, case.players, case.incident) == (
        "individual",
        "open",
        ["alice", "bob"],
        None,
    )
    compensation = compensation_services.compensation_propose(
        case=case,
        actor=tournament_manager,
        reason="their stacks were blinded away",
        entries=[CompensationEntry("alice", 700)],
    )
    assert compensation.currency == "EUR"
    with pytest.raises(DomainError, match="Not a player"):
        compensation_services.compensation_propose(
            case=case, actor=operator, reason="r", entries=[CompensationEntry("carol", 1)]
        )
    compensation_services.compensation_approve(compensation=compensation, actor=second_manager)
    case = individual_cases.individual_case_resolve(
        case=case, actor=tournament_manager, outcome="compensated alice; bob was not affected"
    )
    assert (case.status, case.resolved_by) == (CaseStatus.RESOLVED, tournament_manager)
    assert case.resolved_at is not None
    with pytest.raises(InvalidTransition, match="it is resolved"):
        individual_cases.individual_case_resolve(case=case, actor=second_manager, outcome="again")
    with pytest.raises(InvalidTransition, match="resolved"):
        compensation_services.compensation_propose(
            case=case, actor=operator, reason="r", entries=[CompensationEntry("bob", 1)]
        )
    assert event_types(case=case)[0] == "individual_case_opened"
    assert event_types(case=case)[-1] == "individual_case_resolved"


def test_individual_case_refusals(operator, tournament_manager, snapshot_factory):
    tournament = incidents.tournament_create(
        actor=operator, operator_id="T-2", type="regular", currency="USD"
    )
    with pytest.raises(NotAllowed):
        individual_cases.individual_case_open(
            tournament=tournament, actor=operator, players=["a"], description="d"
        )
    with pytest.raises(DomainError, match="Name the player"):
        individual_cases.individual_case_open(
            tournament=tournament, actor=tournament_manager, players=[], description="d"
        )
    with pytest.raises(DomainError, match="twice"):
        individual_cases.individual_case_open(
            tournament=tournament, actor=tournament_manager, players=["a", "a"], description="d"
        )
    with pytest.raises(DomainError, match="description"):
        individual_cases.individual_case_open(
            tournament=tournament, actor=tournament_manager, players=["a"], description=""
        )
    case = individual_cases.individual_case_open(
        tournament=tournament, actor=tournament_manager, players=["a"], description="d"
    )
    with pytest.raises(InvalidTransition, match="individual case"):
        settlement_services.settlement_prepare(case=case, actor=operator)
    with pytest.raises(DomainError, match="outcome"):
        individual_cases.individual_case_resolve(case=case, actor=tournament_manager, outcome=" ")
    crash = load(operator, snapshot_factory)
    with pytest.raises(InvalidTransition, match="crash case"):
        individual_cases.individual_case_resolve(case=crash, actor=tournament_manager, outcome="x")


# --- Incidents and tournaments -----------------------------------------------------------------


def test_an_incident_closes_only_when_its_cases_are_finished(
    operator, tournament_manager, snapshot_factory
):
    incident = incidents.incident_report(
        actor=operator, title="Power cut", started_at=timezone.now(), description="rack 2"
    )
    assert incident.history.get().history_user == operator
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory(), incident=incident)
    with pytest.raises(InvalidTransition, match=f"#{case.pk}"):
        incidents.incident_close(incident=incident, actor=operator)
    settlement = settlement_services.settlement_submit(
        settlement=settlement_services.settlement_prepare(case=case, actor=operator), actor=operator
    )
    settlement_services.settlement_approve(settlement=settlement, actor=tournament_manager)
    incident = incidents.incident_close(incident=incident, actor=tournament_manager, reason="done")
    assert (incident.is_open, incident.closed_by) == (False, tournament_manager)
    with pytest.raises(InvalidTransition, match="already closed"):
        incidents.incident_close(incident=incident, actor=operator)


def test_reporting_an_incident_needs_a_title_and_an_operator(operator, marketing_manager):
    with pytest.raises(DomainError, match="title"):
        incidents.incident_report(actor=operator, title=" ", started_at=timezone.now())
    with pytest.raises(NotAllowed):
        incidents.incident_report(actor=marketing_manager, title="x", started_at=timezone.now())


def test_registering_a_tournament(operator):
    tournament = incidents.tournament_create(
        actor=operator,
        operator_id=" SAT-1 ",
        type="satellite",
        currency="GBP",
        buy_in=1000,
        fee=100,
        seat_value=5000,
    )
    assert (tournament.operator_id, tournament.seat_value) == ("SAT-1", 5000)
    assert tournament.history.get().history_change_reason == "Tournament registered"
    with pytest.raises(Duplicate):
        incidents.tournament_create(
            actor=operator, operator_id="SAT-1", type="satellite", currency="GBP"
        )
    for bad in ({"currency": "usd"}, {"type": "turbo"}, {"buy_in": -1}, {"payouts": [100, 0]}):
        arguments = {"operator_id": "X", "type": "regular", "currency": "USD", **bad}
        with pytest.raises(DomainError):
            incidents.tournament_create(actor=operator, **arguments)
    assert Tournament.objects.count() == 1


# --- API tokens --------------------------------------------------------------------------------


def test_api_tokens_are_stored_hashed_and_revoked_once(django_user_model):
    server = make_user(django_user_model, "game-server", roles.OPERATOR)
    token, raw = api_token_create(user=server, name="eu-1")
    assert token.token_hash == ApiToken.hash(raw) != raw
    assert not ApiToken.objects.filter(token_hash=raw).exists()
    assert token.is_active
    token = api_token_revoke(token=token)
    assert not token.is_active
    with pytest.raises(InvalidTransition):
        api_token_revoke(token=token)
    assert event_types() == ["api_token_created", "api_token_revoked"]


def test_a_user_cannot_issue_tokens_for_someone_else(operator, tournament_manager):
    with pytest.raises(NotAllowed):
        api_token_create(user=operator, name="x", actor=tournament_manager)
    token, _ = api_token_create(user=operator, name="mine", actor=operator)
    assert token.history.get().history_user == operator


def test_an_individual_case_registers_its_tournament_in_the_same_transaction(
    operator, tournament_manager
):
    new = individual_cases.NewTournament(
        operator_id="T-NEVER", type="satellite", currency="USD", buy_in=1000, fee=100
    )
    before = row_counts()
    with pytest.raises(DomainError, match="description"):
        individual_cases.individual_case_open(
            tournament=new, actor=tournament_manager, players=["a"], description=" "
        )
    with pytest.raises(NotAllowed):
        individual_cases.individual_case_open(
            tournament=new, actor=operator, players=["a"], description="d"
        )
    assert row_counts() == before
    case = individual_cases.individual_case_open(
        tournament=new, actor=tournament_manager, players=["a"], description="d"
    )
    tournament = Tournament.objects.get(operator_id="T-NEVER")
    assert case.tournament == tournament and (tournament.buy_in, tournament.fee) == (1000, 100)
    assert event_types()[-2:] == ["tournament_created", "individual_case_opened"]
    with pytest.raises(Duplicate):
        individual_cases.individual_case_open(
            tournament=new, actor=tournament_manager, players=["b"], description="d"
        )
