"""Real concurrent transactions on PostgreSQL: racing requests have exactly one effect
(harness: tests/races.py)."""

import threading
from collections import Counter

from django.utils import timezone

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
from settlements.services import settlements as settlement_services
from settlements.services import snapshots
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.incidents import incident_close, incident_report
from tests.races import RACES, TIMEOUT, race, start_thread
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
            lambda m=m: settlement_services.settlement_approve(
                settlement=settlement, actor=m, reason="ok"
            )
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
        lambda: settlement_services.settlement_approve(
            settlement=settlement, actor=users["tournament_manager"]
        ),
        lambda: settlement_services.settlement_reject(
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
    settlement = settlement_services.settlement_prepare(
        case=load(operator, snapshot_factory), actor=operator
    )
    outcomes = race(
        *[lambda: settlement_services.settlement_submit(settlement=settlement, actor=operator)]
        * THREADS
    )
    assert tally(outcomes) == {"ok": 1, "InvalidTransition": THREADS - 1}
    assert Event.objects.filter(type="settlement_submitted").count() == 1
    assert settlement.history.filter(status="awaiting_approval").count() == 1


def test_concurrent_preparations_make_one_settlement(users, snapshot_factory):
    operator = users["operator"]
    case = load(operator, snapshot_factory)
    outcomes = race(
        *[lambda: settlement_services.settlement_prepare(case=case, actor=operator)] * THREADS
    )
    assert tally(outcomes) == {"ok": 1, "InvalidTransition": THREADS - 1}
    assert Settlement.objects.filter(case=case).count() == 1


def test_concurrent_loads_of_one_tournament_make_one_case(users, snapshot_factory):
    data = snapshot_factory(tournament_id="RACE-1", entrants=200)
    operator = users["operator"]
    outcomes = race(
        *[lambda: snapshots.case_load_snapshot(actor=operator, snapshot=data)] * THREADS
    )
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
    compensation = compensation_propose(
        case=settlement.case, actor=operator, reason="r", entries=[CompensationEntry("p000001", 9)]
    )
    outcomes = race(
        *[
            lambda m=m: compensation_approve(compensation=compensation, actor=m)
            for m in [users["tournament_manager"], users["second_manager"]] * (THREADS // 2)
        ]
    )
    assert tally(outcomes) == {"ok": 1, "InvalidTransition": THREADS - 1}
    assert Compensation.objects.get().history.filter(status="approved").count() == 1


class PausedLoad:
    """A snapshot load into ``incident`` held in its thread after its rows are written and
    before its events (and so before the event chain's lock), until ``resume()``."""

    def __init__(self, monkeypatch, operator, incident, snapshot: bytes):
        self.reached, self.go = threading.Event(), threading.Event()
        self.outcome: list = []
        real = snapshots.insert_rows

        def insert_then_wait(*args, **kwargs):
            real(*args, **kwargs)
            if threading.current_thread() is self.thread:
                self.reached.set()
                self.go.wait(timeout=TIMEOUT)

        monkeypatch.setattr(snapshots, "insert_rows", insert_then_wait)

        def run():
            self.outcome.append(
                snapshots.case_load_snapshot(actor=operator, snapshot=snapshot, incident=incident)
            )

        self.thread = start_thread(run)
        assert self.reached.wait(timeout=TIMEOUT)

    def resume(self):
        self.go.set()
        self.thread.join(timeout=TIMEOUT)


def test_loads_into_one_incident_run_side_by_side(monkeypatch, users, snapshot_factory):
    operator = users["operator"]
    incident = incident_report(actor=operator, title="Rack", started_at=timezone.now())
    first = PausedLoad(monkeypatch, operator, incident, snapshot_factory(tournament_id="SIDE-1"))
    outcome: list = []
    second = start_thread(
        lambda: outcome.append(
            snapshots.case_load_snapshot(
                actor=operator, snapshot=snapshot_factory(tournament_id="SIDE-2"), incident=incident
            )
        )
    )
    second.join(timeout=TIMEOUT)
    # The second load went all the way to its commit while the first held the incident.
    finished_meanwhile = not second.is_alive() and not first.go.is_set()
    first.resume()
    assert finished_meanwhile
    assert [case.tournament.operator_id for case in (*outcome, *first.outcome)] == [
        "SIDE-2",
        "SIDE-1",
    ]
    assert Case.objects.filter(incident=incident).count() == 2


def test_an_incident_closing_during_a_load_waits_for_it_and_stays_open(
    monkeypatch, users, snapshot_factory
):
    operator = users["operator"]
    incident = incident_report(actor=operator, title="Rack", started_at=timezone.now())
    load = PausedLoad(monkeypatch, operator, incident, snapshot_factory(tournament_id="LATE-1"))
    outcome: list = []

    def close():
        try:
            incident_close(incident=incident, actor=operator, reason="all quiet")
        except DomainError as refusal:
            outcome.append(refusal)

    closing = start_thread(close)
    closing.join(timeout=1)
    waited = closing.is_alive()
    load.resume()
    closing.join(timeout=TIMEOUT)
    assert waited, "the incident was closed while a load into it was under way"
    (case,) = load.outcome
    assert [str(refusal) for refusal in outcome] == [
        f"{incident} still has cases in progress (#{case.pk}); finish them before closing it."
    ]
    incident.refresh_from_db()
    assert incident.is_open
