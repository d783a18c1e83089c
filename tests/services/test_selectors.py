"""Reads for the pages: queues per role, payouts, totals, chart, events and history."""

from datetime import timedelta

import pytest
from django.utils import timezone

from settlements import selectors, services
from settlements.models import Event
from settlements.services import CompensationEntry
from tests.services.helpers import approved, load, submitted

pytestmark = pytest.mark.django_db


@pytest.fixture
def busy_desk(users, snapshot_factory):
    """One case waiting at each step, made by the usual people."""
    operator, manager = users["operator"], users["tournament_manager"]
    waiting_decision = load(operator, snapshot_factory, type="freeroll", stage="middle")
    ready = load(operator, snapshot_factory, tournament_id="READY")
    to_submit = services.settlement_prepare(
        case=load(operator, snapshot_factory, tournament_id="PREP"), actor=operator
    )
    to_approve = submitted(operator, snapshot_factory, tournament_id="SUB")
    done = approved(operator, manager, snapshot_factory, tournament_id="DONE")
    own_proposal = services.compensation_propose(
        case=done.case, actor=manager, reason="r", entries=[CompensationEntry("p000001", 5)]
    )
    other_proposal = services.compensation_propose(
        case=done.case, actor=operator, reason="r", entries=[CompensationEntry("p000002", 5)]
    )
    individual = services.individual_case_open(
        tournament=done.case.tournament, actor=manager, players=["p000003"], description="d"
    )
    return {
        "waiting_decision": waiting_decision,
        "ready": ready,
        "to_submit": to_submit,
        "to_approve": to_approve,
        "done": done,
        "own_proposal": own_proposal,
        "other_proposal": other_proposal,
        "individual": individual,
    }


def test_what_waits_for_each_role(users, busy_desk):
    marketing = selectors.waiting_for(users["marketing_manager"])
    assert list(marketing.decisions) == [busy_desk["waiting_decision"]]
    assert marketing.total == 1

    operator = selectors.waiting_for(users["operator"])
    assert list(operator.to_prepare) == [busy_desk["ready"]]
    assert list(operator.to_submit) == [busy_desk["to_submit"]]
    assert not operator.approvals.exists()

    manager = selectors.waiting_for(users["tournament_manager"])
    assert list(manager.approvals) == [busy_desk["to_approve"]]
    assert list(manager.compensations) == [busy_desk["other_proposal"]]
    assert list(manager.individual_cases) == [busy_desk["individual"]]

    second = selectors.waiting_for(users["second_manager"])
    assert set(second.compensations) == {busy_desk["own_proposal"], busy_desk["other_proposal"]}

    assert selectors.waiting_for(users["auditor"]).total == 0
    assert selectors.waiting_for(users["none"]).total == 0


def test_counts_and_incident_annotations(busy_desk):
    counts = selectors.case_status_counts()
    assert counts["awaiting_decision"] == 1
    assert counts["ready"] == 1
    assert counts["prepared"] == 1
    assert counts["awaiting_approval"] == 1
    assert counts["approved"] == 1
    assert counts["open"] == 1
    assert counts["rejected"] == 0
    incidents = list(selectors.incident_list(open_only=True))
    assert len(incidents) == 5
    assert {i.case_count for i in incidents} == {1}
    done = busy_desk["done"].case.incident
    assert next(i for i in incidents if i == done).cases_in_progress == 0


def test_case_list_filters_and_keeps_one_query(busy_desk, django_assert_num_queries):
    assert list(selectors.case_list(search="prep")) == [busy_desk["to_submit"].case]
    assert list(selectors.case_list(status=["ready", "prepared"], kind="crash")) == [
        busy_desk["to_submit"].case,
        busy_desk["ready"],
    ]
    with django_assert_num_queries(1):
        for case in selectors.case_list():
            assert case.tournament.operator_id
            assert case.incident is None or case.incident.title


def test_queues_keep_query_counts_flat(users, busy_desk, django_assert_num_queries):
    queue = selectors.waiting_for(users["second_manager"])
    with django_assert_num_queries(2):
        for settlement in queue.approvals:
            assert settlement.case.tournament.operator_id and settlement.prepared_by.username
        for compensation in queue.compensations:
            assert compensation.case.tournament.name and compensation.proposed_by.username
            assert compensation.item_count == 1


def test_payouts_search_and_totals(operator, snapshot_factory):
    case = load(operator, snapshot_factory, stage="early", entrants=40)
    settlement = services.settlement_prepare(case=case, actor=operator)
    payouts = selectors.settlement_payouts(settlement)
    assert [p.player for p in payouts] == sorted(p.player for p in payouts)
    assert [p.player for p in selectors.settlement_payouts(settlement, search="0001")] == [
        "p000001",
        "p000010",
        "p000011",
        "p000012",
        "p000013",
        "p000014",
        "p000015",
        "p000016",
        "p000017",
        "p000018",
        "p000019",
    ]
    totals = selectors.settlement_totals(settlement)
    lines = list(settlement.lines.all())
    by_source_cash = {
        source: sum(ln.amount for ln in lines if ln.source == source)
        for source in ("pool", "house")
    }
    assert totals.by_unit == {"cash": sum(ln.amount for ln in lines)}
    assert totals.by_source == {s: {"cash": v} for s, v in by_source_cash.items()}
    assert totals.rows == [("cash", "pool", by_source_cash["pool"]),
                           ("cash", "house", by_source_cash["house"])]  # fmt: skip
    assert by_source_cash["pool"] == settlement.pool_distributed


def test_the_payout_curve_is_thinned_in_the_database(operator, snapshot_factory):
    case = load(operator, snapshot_factory, stage="pre", entrants=100)
    settlement = services.settlement_prepare(case=case, actor=operator)
    curve = selectors.settlement_payout_curve(settlement, points=10)
    assert [p["rank"] for p in curve] == [1, 11, 21, 31, 41, 51, 61, 71, 81, 91, 100]
    chips = [p["chips"] for p in curve]
    assert chips == sorted(chips, reverse=True)
    full = selectors.settlement_payout_curve(settlement, points=500)
    assert len(full) == 100


def test_events_filter_and_timeline(users, busy_desk):
    operator, manager = users["operator"], users["tournament_manager"]
    done = busy_desk["done"]
    timeline = list(selectors.incident_timeline(done.case.incident))
    assert [e.type for e in timeline] == [
        "incident_reported",
        "snapshot_loaded",
        "settlement_prepared",
        "settlement_submitted",
        "settlement_approved",
        "compensation_proposed",
        "compensation_proposed",
    ]
    assert {e.type for e in selectors.event_list(actor=manager)} == {
        "settlement_approved",
        "compensation_proposed",
        "individual_case_opened",
    }
    assert selectors.event_list(case=done.case, type="settlement_approved").count() == 1
    for_tournament = [e.type for e in selectors.event_list(tournament=done.case.tournament)]
    assert for_tournament[-1] == "tournament_created"
    assert for_tournament[0] == "individual_case_opened"
    assert "incident_reported" not in for_tournament
    later = timezone.now() + timedelta(minutes=1)
    assert not selectors.event_list(since=later).exists()
    assert selectors.event_list(until=later).count() == Event.objects.count()
    assert selectors.event_list(actor=operator).filter(type="settlement_approved").count() == 0


def test_history_across_models_with_filters(users, busy_desk):
    manager = users["tournament_manager"]
    done = busy_desk["done"]
    everything = list(selectors.history_entries())
    assert {e["model"] for e in everything} == {
        "incident",
        "tournament",
        "case",
        "settlement",
        "compensation",
    }
    dates = [e["history_date"] for e in everything]
    assert dates == sorted(dates, reverse=True)

    by_manager = list(selectors.history_entries(user=manager))
    assert {(e["model"], e["history_change_reason"]) for e in by_manager} >= {
        ("settlement", "checked"),
        ("compensation", "r"),
    }
    for_case = list(selectors.history_entries(case=done.case))
    assert {e["model"] for e in for_case} == {"case", "settlement", "compensation"}
    assert all(e["id"] == done.case.pk for e in for_case if e["model"] == "case")
    for_incident = {e["model"] for e in selectors.history_entries(incident=done.case.incident)}
    assert for_incident == {"incident", "case", "settlement", "compensation"}
    for_tournament = {
        e["model"] for e in selectors.history_entries(tournament=done.case.tournament)
    }
    assert "tournament" in for_tournament and "incident" not in for_tournament
    only = list(selectors.history_entries(model="settlement", case=done.case))
    assert [e["history_type"] for e in only] == ["~", "~", "+"]


def test_history_changes_show_what_moved(operator, tournament_manager, snapshot_factory):
    settlement = approved(operator, tournament_manager, snapshot_factory)
    newest = settlement.history.order_by("-history_id").first()
    record = selectors.history_record("settlement", newest.history_id)
    changes = {c.field: (c.old, c.new) for c in selectors.history_changes(record)}
    assert changes["status"] == ("awaiting_approval", "approved")
    assert changes["approved_by"] == (None, tournament_manager.pk)
    first = settlement.history.order_by("history_id").first()
    created = {c.field for c in selectors.history_changes(first)}
    assert {"status", "remedy", "pool"} <= created


def test_case_detail_prefetches_its_parts(operator, snapshot_factory, django_assert_num_queries):
    settlement = submitted(operator, snapshot_factory)
    with django_assert_num_queries(3):
        case = selectors.case_detail(settlement.case_id)
        assert case.tournament.operator_id and case.snapshot.sha256
        assert [s.prepared_by.username for s in case.settlements.all()] == ["operator"]
        assert list(case.decisions.all()) == []
    assert selectors.case_current_settlement(case) == settlement
