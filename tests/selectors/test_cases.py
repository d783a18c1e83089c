"""Reads of incidents and cases: counts, filters, one case with its parts."""

import pytest

from settlements.selectors import cases
from tests.services.helpers import submitted

pytestmark = pytest.mark.django_db


def test_counts_and_incident_annotations(busy_desk):
    counts = cases.case_status_counts()
    assert counts["awaiting_decision"] == 1
    assert counts["ready"] == 1
    assert counts["prepared"] == 1
    assert counts["awaiting_approval"] == 1
    assert counts["approved"] == 1
    assert counts["open"] == 1
    assert counts["rejected"] == 0
    incidents = list(cases.incident_list(open_only=True))
    assert len(incidents) == 5
    assert {i.case_count for i in incidents} == {1}
    done = busy_desk["done"].case.incident
    assert next(i for i in incidents if i == done).cases_in_progress == 0


def test_case_list_filters_and_keeps_one_query(busy_desk, django_assert_num_queries):
    assert list(cases.case_list(search="prep")) == [busy_desk["to_submit"].case]
    assert list(cases.case_list(status=["ready", "prepared"], kind="crash")) == [
        busy_desk["to_submit"].case,
        busy_desk["ready"],
    ]
    with django_assert_num_queries(1):
        for case in cases.case_list():
            assert case.tournament.operator_id
            assert case.incident is None or case.incident.title


def test_case_detail_reads_its_parts(operator, snapshot_factory, django_assert_num_queries):
    settlement = submitted(operator, snapshot_factory)
    # The case with its tournament and snapshot, then its settlements; a case with no decision
    # skips that query.
    with django_assert_num_queries(2):
        case = cases.case_detail(settlement.case_id)
        assert case.tournament.operator_id and case.snapshot.sha256
        assert [s.prepared_by.username for s in case.settlement_list] == ["operator"]
        assert case.decision_list == []
        # What the case page and the withdrawal's confirmation show of a settlement is read
        # with it: none of these fields costs a query of its own.
        shown = [
            (str(row), row.get_status_display(), row.is_adjustment, row.remedy, row.currency)
            + (row.prepared_at, row.payout_count, row.pool_distributed, row.reviewed_at)
            + (row.review_reason, row.rejected_by_id)
            for row in case.settlement_list
        ]
    assert shown == [
        (str(settlement), settlement.get_status_display(), False, settlement.remedy)
        + (settlement.currency, settlement.prepared_at, settlement.payout_count)
        + (settlement.pool_distributed, settlement.reviewed_at, settlement.review_reason, None)
    ]
    assert cases.case_current_settlement(case) == settlement
