"""The audit trail's reads: business events, an incident's timeline, history across models."""

from datetime import timedelta

import pytest
from django.utils import timezone

from settlements.models import Event
from settlements.selectors import audit
from tests.services.helpers import approved

pytestmark = pytest.mark.django_db


def test_events_filter_and_timeline(users, busy_desk):
    operator, manager = users["operator"], users["tournament_manager"]
    done = busy_desk["done"]
    timeline = list(audit.incident_timeline(done.case.incident))
    assert [e.type for e in timeline] == [
        "incident_reported",
        "snapshot_loaded",
        "settlement_prepared",
        "settlement_submitted",
        "settlement_approved",
        "compensation_proposed",
        "compensation_proposed",
    ]
    assert {e.type for e in audit.event_list(actor=manager)} == {
        "settlement_approved",
        "compensation_proposed",
        "individual_case_opened",
    }
    assert audit.event_list(case=done.case, type="settlement_approved").count() == 1
    for_tournament = [e.type for e in audit.event_list(tournament=done.case.tournament)]
    assert for_tournament[-1] == "tournament_created"
    assert for_tournament[0] == "individual_case_opened"
    assert "incident_reported" not in for_tournament
    later = timezone.now() + timedelta(minutes=1)
    assert not audit.event_list(since=later).exists()
    assert audit.event_list(until=later).count() == Event.objects.count()
    assert audit.event_list(actor=operator).filter(type="settlement_approved").count() == 0


def test_history_across_models_with_filters(users, busy_desk):
    manager = users["tournament_manager"]
    done = busy_desk["done"]
    everything = list(audit.history_entries())
    assert {e["model"] for e in everything} == {
        "incident",
        "tournament",
        "case",
        "settlement",
        "compensation",
    }
    dates = [e["history_date"] for e in everything]
    assert dates == sorted(dates, reverse=True)

    by_manager = list(audit.history_entries(user=manager))
    assert {(e["model"], e["history_change_reason"]) for e in by_manager} >= {
        ("settlement", "checked"),
        ("compensation", "r"),
    }
    for_case = list(audit.history_entries(case=done.case))
    assert {e["model"] for e in for_case} == {"case", "settlement", "compensation"}
    assert all(e["id"] == done.case.pk for e in for_case if e["model"] == "case")
    for_incident = {e["model"] for e in audit.history_entries(incident=done.case.incident)}
    assert for_incident == {"incident", "case", "settlement", "compensation"}
    for_tournament = {e["model"] for e in audit.history_entries(tournament=done.case.tournament)}
    assert "tournament" in for_tournament and "incident" not in for_tournament
    only = list(audit.history_entries(model="settlement", case=done.case))
    assert [e["history_type"] for e in only] == ["~", "~", "+"]


def test_history_changes_show_what_moved(operator, tournament_manager, snapshot_factory):
    settlement = approved(operator, tournament_manager, snapshot_factory)
    newest = settlement.history.order_by("-history_id").first()
    record = audit.history_record("settlement", newest.history_id)
    changes = {c.field: (c.old, c.new) for c in audit.history_changes(record)}
    assert changes["status"] == ("awaiting_approval", "approved")
    assert changes["approved_by"] == (None, tournament_manager.pk)
    first = settlement.history.order_by("history_id").first()
    created = {c.field for c in audit.history_changes(first)}
    assert {"status", "remedy", "pool"} <= created
