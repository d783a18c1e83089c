"""Real concurrent transactions on PostgreSQL: racing requests have exactly one effect
(harness: tests/races.py)."""

from collections import Counter

from settlements import services
from settlements.errors import DomainError
from settlements.models import (
    Case,
    CasePlayer,
    Compensation,
    Event,
    Incident,
    Settlement,
    Snapshot,
    Tournament,
)
from settlements.services import CompensationEntry
from tests.races import RACES, race
from tests.services.helpers import load, submitted

pytestmark = RACES

THREADS = 8


def tally(outcomes) -> Counter:
    return Counter("ok" if not isinstance(o, Exception) else type(o).__name__ for o in outcomes)


def test_concurrent_approvals_have_one_effect(users, snapshot_factory):
    settlement = submitted(users["operator"], snapshot_factory)
    managers = [users["tournament_manager"], users["second_manager"]] * (THREADS // 2)
    outcomes = race(
        *[
            lambda m=m: services.settlement_approve(settlement=settlement, actor=m, reason="ok")
            for m in managers
        ]
    )
    assert tally(outcomes) == {"ok": 1, "InvalidTransition": THREADS - 1}
    assert all("it is approved" in str(o) for o in outcomes if isinstance(o, Exception))
    settlement.refresh_from_db()
    assert settlement.status == "approved"
    assert Event.objects.filter(type="settlement_approved").count() == 1
    assert settlement.history.filter(status="approved").count() == 1
    assert settlement.case.history.filter(status="approved").count() == 1


def test_approve_and_reject_at_once_have_one_effect(users, snapshot_factory):
    settlement = submitted(users["operator"], snapshot_factory)
    outcomes = race(
        lambda: services.settlement_approve(
            settlement=settlement, actor=users["tournament_manager"]
        ),
        lambda: services.settlement_reject(
            settlement=settlement, actor=users["second_manager"], reason="no"
        ),
    )
    assert tally(outcomes) == {"ok": 1, "InvalidTransition": 1}
    settlement.refresh_from_db()
    settlement.case.refresh_from_db()
    assert settlement.status == settlement.case.status
    assert (
        Event.objects.filter(type__in=["settlement_approved", "settlement_rejected"]).count() == 1
    )


def test_a_double_submit_has_one_effect(users, snapshot_factory):
    operator = users["operator"]
    settlement = services.settlement_prepare(case=load(operator, snapshot_factory), actor=operator)
    outcomes = race(
        *[lambda: services.settlement_submit(settlement=settlement, actor=operator)] * THREADS
    )
    assert tally(outcomes) == {"ok": 1, "InvalidTransition": THREADS - 1}
    assert Event.objects.filter(type="settlement_submitted").count() == 1
    assert settlement.history.filter(status="awaiting_approval").count() == 1


def test_concurrent_preparations_make_one_settlement(users, snapshot_factory):
    operator = users["operator"]
    case = load(operator, snapshot_factory)
    outcomes = race(*[lambda: services.settlement_prepare(case=case, actor=operator)] * THREADS)
    assert tally(outcomes) == {"ok": 1, "InvalidTransition": THREADS - 1}
    assert Settlement.objects.filter(case=case).count() == 1


def test_concurrent_loads_of_one_tournament_make_one_case(users, snapshot_factory):
    data = snapshot_factory(tournament_id="RACE-1", entrants=200)
    operator = users["operator"]
    outcomes = race(*[lambda: services.case_load_snapshot(actor=operator, snapshot=data)] * THREADS)
    assert tally(outcomes) == {"ok": 1, "Duplicate": THREADS - 1}
    assert all("already has a crash case" in str(o) for o in outcomes if isinstance(o, DomainError))
    assert Tournament.objects.filter(operator_id="RACE-1").count() == 1
    assert Case.objects.count() == Snapshot.objects.count() == Incident.objects.count() == 1
    assert CasePlayer.objects.count() == 200
    assert Event.objects.filter(type="snapshot_loaded").count() == 1
    assert Event.objects.filter(type="tournament_created").count() == 1


def test_concurrent_compensation_decisions_have_one_effect(users, snapshot_factory):
    operator = users["operator"]
    settlement = submitted(operator, snapshot_factory)
    compensation = services.compensation_propose(
        case=settlement.case, actor=operator, reason="r", entries=[CompensationEntry("p000001", 9)]
    )
    outcomes = race(
        *[
            lambda m=m: services.compensation_approve(compensation=compensation, actor=m)
            for m in [users["tournament_manager"], users["second_manager"]] * (THREADS // 2)
        ]
    )
    assert tally(outcomes) == {"ok": 1, "InvalidTransition": THREADS - 1}
    assert Compensation.objects.get().history.filter(status="approved").count() == 1
