"""The one lock order (services/__init__.py), raced on PostgreSQL.

Each test holds a first transaction just after it has taken its locks until a second one has
had the chance to take its own: the interleaving that deadlocked while the services locked in
opposite orders (PostgreSQL then aborts one of the two as a deadlock). Under the one order the
second queues behind the first instead, and both end as the rules say.
"""

import threading
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from settlements import audit_log
from settlements.access import permissions, roles
from settlements.errors import InvalidTransition
from settlements.models import Case, Compensation, Incident
from settlements.services import settlements as settlement_services
from settlements.services import snapshots
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.incidents import incident_close, incident_report
from settlements.workflow import CaseStatus, CompensationStatus
from tests.conftest import make_user
from tests.races import RACES, TIMEOUT, start_thread

pytestmark = [*RACES, pytest.mark.slow]

# How long the first transaction waits, holding its locks, for the second to take its own.
# Under the one order the second queues behind the first and never does: the wait runs out.
HOLD = 3


class Interleaving:
    """The first call of a wrapped step signals ``first_holds`` and waits for ``second_holds``
    (at most HOLD seconds); the second transaction's wrapped step sets ``second_holds``."""

    def __init__(self) -> None:
        self.first_holds = threading.Event()
        self.second_holds = threading.Event()
        self._paused = threading.Event()

    def pause_first(self, step):
        def wrapped(*args, **kwargs):
            result = step(*args, **kwargs)
            if not self._paused.is_set():
                self._paused.set()
                self.first_holds.set()
                self.second_holds.wait(HOLD)
            return result

        return wrapped

    def mark_second(self, step):
        def wrapped(*args, **kwargs):
            result = step(*args, **kwargs)
            self.second_holds.set()
            return result

        return wrapped

    def run(self, first, second) -> tuple[object, object]:
        """``first`` in a thread; once it holds its locks, ``second`` in another. Each one's
        result or exception."""
        outcomes: dict[str, object] = {}

        def attempt(name, call):
            def run():
                try:
                    outcomes[name] = call()
                except Exception as error:  # what the test looks at
                    outcomes[name] = error

            return run

        one = start_thread(attempt("first", first))
        assert self.first_holds.wait(TIMEOUT)
        two = start_thread(attempt("second", second))
        for thread in (one, two):
            thread.join(TIMEOUT)
            assert not thread.is_alive()
        return outcomes["first"], outcomes["second"]


def _no_deadlock(*outcomes) -> None:
    deadlocks = [o for o in outcomes if isinstance(o, OperationalError)]
    assert not deadlocks, deadlocks


@pytest.fixture
def people(django_user_model):
    return (
        make_user(django_user_model, "op", roles.OPERATOR),
        make_user(django_user_model, "tm1", roles.TOURNAMENT_MANAGER),
        make_user(django_user_model, "tm2", roles.TOURNAMENT_MANAGER),
    )


def _incident(operator) -> Incident:
    return incident_report(
        actor=operator, title="Lock order", started_at=timezone.now() - timedelta(hours=1)
    )


def test_a_compensation_approved_while_its_case_is_withdrawn(people, snapshot_factory, monkeypatch):
    """The approval locked its compensation and then shared the case (to release its lines);
    the withdrawal locks the case and then the case's compensation."""
    operator, _, manager = people
    case = snapshots.case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(stage="late"), incident=_incident(operator)
    )
    settlement_services.settlement_prepare(case=case, actor=operator)
    proposal = compensation_propose(
        case=case, actor=operator, reason="lag", entries=[CompensationEntry("p000001", 500)]
    )
    steps = Interleaving()
    monkeypatch.setattr(
        permissions, "compensation_approve", steps.pause_first(permissions.compensation_approve)
    )
    monkeypatch.setattr(
        "settlements.services.snapshots.lock_case",
        steps.mark_second(snapshots.lock_case),
    )

    approval, withdrawal = steps.run(
        lambda: compensation_approve(compensation=proposal, actor=manager),
        lambda: snapshots.case_withdraw(case=case, actor=operator, reason="the wrong table"),
    )

    _no_deadlock(approval, withdrawal)
    assert Compensation.objects.get(pk=proposal.pk).status == CompensationStatus.APPROVED
    # Approved first, the compensation is owed: the case stays.
    assert isinstance(withdrawal, InvalidTransition)
    assert Case.objects.get(pk=case.pk).status != CaseStatus.WITHDRAWN


def test_a_compensation_proposed_while_its_incident_closes(people, snapshot_factory, monkeypatch):
    """The proposal's event points at the incident, a link checked at its commit under the
    event chain's lock; closing the incident locks it for update, then queues for that lock."""
    operator, first_manager, second_manager = people
    incident = _incident(operator)
    case = snapshots.case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(stage="late"), incident=incident
    )
    settlement = settlement_services.settlement_submit(
        settlement=settlement_services.settlement_prepare(case=case, actor=operator), actor=operator
    )
    settlement_services.settlement_approve(settlement=settlement, actor=first_manager)
    steps = Interleaving()
    monkeypatch.setattr(audit_log, "hold_chain", steps.pause_first(audit_log.hold_chain))
    monkeypatch.setattr(
        permissions, "incident_close", steps.mark_second(permissions.incident_close)
    )

    proposal, closing = steps.run(
        lambda: compensation_propose(
            case=case, actor=operator, reason="lag", entries=[CompensationEntry("p000002", 70)]
        ),
        lambda: incident_close(incident=incident, actor=second_manager),
    )

    _no_deadlock(proposal, closing)
    assert isinstance(proposal, Compensation) and isinstance(closing, Incident)
    assert Compensation.objects.filter(case=case).count() == 1
    assert not Incident.objects.get(pk=incident.pk).is_open
