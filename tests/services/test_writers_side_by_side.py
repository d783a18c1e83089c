"""Writers on different incidents do not wait on each other, on PostgreSQL.

There is no desk-wide write lock: an approval holds the ledger feed's order from its release to
its commit (services.payments.hold_feed_order), and every writer holds the event chain only
from its events to its commit (audit_log.hold_chain). Each test keeps one writer's transaction
open at a chosen step and checks that a writer on another incident commits meanwhile.
"""

import threading

import pytest
from django.utils import timezone

from settlements import audit_log
from settlements.access import roles
from settlements.models import Job, Settlement
from settlements.services import jobs
from settlements.services import payments as payment_services
from settlements.services import settlements as settlement_services
from settlements.services.incidents import incident_report
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import make_user
from tests.races import RACES, TIMEOUT, start_thread

pytestmark = RACES


@pytest.fixture
def desk(django_user_model, snapshot_factory):
    operator = make_user(django_user_model, "op", roles.OPERATOR)
    manager = make_user(django_user_model, "tm", roles.TOURNAMENT_MANAGER)
    cases = []
    for name in ("North", "South"):
        incident = incident_report(
            actor=operator, title=f"{name} outage", started_at=timezone.now()
        )
        cases.append(
            case_load_snapshot(
                actor=operator,
                incident=incident,
                snapshot=snapshot_factory(tournament_id=f"T-{name}", stage="early", entrants=30),
            )
        )
    return operator, manager, cases


def _held_open(monkeypatch, module, name: str, *, before: bool):
    """Patch ``module.name`` so that its first call waits for ``release`` (before or after the
    real call, inside the caller's transaction); ``reached`` is set when it is waiting."""
    real = getattr(module, name)
    reached, release = threading.Event(), threading.Event()
    calls = []

    def held(*args, **kwargs):
        calls.append(1)
        if before and len(calls) == 1:
            reached.set()
            assert release.wait(TIMEOUT)
        result = real(*args, **kwargs)
        if not before and len(calls) == 1:
            reached.set()
            assert release.wait(TIMEOUT)
        return result

    monkeypatch.setattr(module, name, held)
    return reached, release


def _side_by_side(first, second, reached, release) -> None:
    """``first`` runs until it is held open; ``second`` must commit meanwhile."""
    errors = []

    def run_first():
        try:
            first()
        except Exception as error:  # reported below, on the test's thread
            errors.append(error)

    thread = start_thread(run_first)
    try:
        assert reached.wait(TIMEOUT), "the first writer never reached its held step"
        finished = threading.Event()
        other = start_thread(lambda: (second(), finished.set()))
        assert finished.wait(10), "the second writer waited on the first"
        other.join(TIMEOUT)
    finally:
        release.set()
        thread.join(TIMEOUT)
    assert not errors, errors


def test_an_approval_holding_the_feed_does_not_stop_a_prepare_elsewhere(desk, monkeypatch):
    operator, manager, (north, south) = desk
    submitted = settlement_services.settlement_submit(
        settlement=settlement_services.settlement_prepare(case=north, actor=operator),
        actor=operator,
    )
    reached, release = _held_open(monkeypatch, payment_services, "hold_feed_order", before=False)

    _side_by_side(
        lambda: settlement_services.settlement_approve(settlement=submitted, actor=manager),
        lambda: settlement_services.settlement_prepare(case=south, actor=operator),
        reached,
        release,
    )

    assert Settlement.objects.get(pk=submitted.pk).status == "approved"
    assert Settlement.objects.filter(case=south).count() == 1
    assert audit_log.verify().ok


def test_two_prepares_on_different_incidents_commit_side_by_side(desk, monkeypatch):
    """The first is held with its settlement written, before its events: the second writes
    its own settlement and events and commits; then the first chains after it."""
    operator, _, (north, south) = desk
    reached, release = _held_open(monkeypatch, audit_log, "hold_chain", before=True)

    _side_by_side(
        lambda: settlement_services.settlement_prepare(case=north, actor=operator),
        lambda: settlement_services.settlement_prepare(case=south, actor=operator),
        reached,
        release,
    )

    assert Settlement.objects.filter(case__in=[north, south]).count() == 2
    assert audit_log.verify().ok


def _prepare_job(operator, case) -> Job:
    """A bulk prepare of the case's incident, run where it is started (as a worker runs it)."""
    return jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target=f"incident:{case.incident_id}",
        items=[jobs.NewItem(key=str(case.pk), label=str(case))],
        incident=case.incident,
    )


def test_two_jobs_on_different_incidents_commit_side_by_side(desk, monkeypatch):
    """Two workers' jobs: the first is held inside its item, its settlement written and its
    events not yet; the second job prepares, chains its events and finishes meanwhile."""
    operator, _, (north, south) = desk
    reached, release = _held_open(monkeypatch, audit_log, "hold_chain", before=True)

    _side_by_side(
        lambda: _prepare_job(operator, north),
        lambda: _prepare_job(operator, south),
        reached,
        release,
    )

    finished = Job.objects.filter(kind=Job.Kind.PREPARE, status=Job.Status.DONE)
    assert set(finished.values_list("incident", flat=True)) == {
        north.incident_id,
        south.incident_id,
    }
    assert Settlement.objects.filter(case__in=[north, south]).count() == 2
    assert audit_log.verify().ok
