"""Reads of the lists work is picked from: waiting lists by incident, incidents by state,
compensation in the order it is worked."""

import pytest
from django.utils import timezone

from settlements.selectors import queues
from settlements.selectors.dashboard import awaiting
from settlements.services import compensation
from settlements.services.compensation import CompensationEntry
from settlements.services.incidents import incident_close, incident_report
from settlements.services.settlements import settlement_prepare
from settlements.services.snapshots import case_load_snapshot

pytestmark = pytest.mark.django_db


def test_a_waiting_list_narrows_to_one_incident_whatever_it_lists(users, snapshot_factory):
    operator = users["operator"]
    incidents = [
        incident_report(actor=operator, title=title, started_at=timezone.now())
        for title in ("A", "B")
    ]
    for incident in incidents:
        snapshot = snapshot_factory(tournament_id=f"T-{incident.title}")
        case = case_load_snapshot(actor=operator, snapshot=snapshot, incident=incident)
        settlement_prepare(case=case, actor=operator)
    snapshot = snapshot_factory(tournament_id="T-READY")
    ready = case_load_snapshot(actor=operator, snapshot=snapshot, incident=incidents[0])

    first = incidents[0].pk
    prepare, submit = awaiting("to_prepare"), awaiting("to_submit")
    assert list(queues.waiting_queue(operator, prepare, incident=first)) == [ready]
    to_submit = queues.waiting_queue(operator, submit, incident=first)
    assert [settlement.case.incident_id for settlement in to_submit] == [first]
    assert queues.waiting_queue(operator, submit).count() == 2


def test_incidents_by_state(operator):
    started = timezone.now()
    still_open = incident_report(actor=operator, title="Open", started_at=started)
    closed = incident_report(actor=operator, title="Closed", started_at=started)
    incident_close(incident=closed, actor=operator, reason="nothing hit")
    assert list(queues.incident_queue("open")) == [still_open]
    assert list(queues.incident_queue("closed")) == [closed]
    assert set(queues.incident_queue("all")) == {still_open, closed}


def test_proposals_are_worked_oldest_first_the_rest_listed_newest_first(busy_desk, users):
    manager = users["tournament_manager"]
    older, newer = busy_desk["own_proposal"], busy_desk["other_proposal"]
    assert list(queues.compensation_queue("proposed")) == [older, newer]
    third = compensation.compensation_propose(
        case=older.case,
        actor=users["operator"],
        reason="r",
        entries=[CompensationEntry("p000004", 5)],
    )
    compensation.compensation_approve(compensation=newer, actor=manager, reason="fair")
    compensation.compensation_reject(compensation=third, actor=manager, reason="no")
    assert list(queues.compensation_queue(None)) == [third, newer, older]
