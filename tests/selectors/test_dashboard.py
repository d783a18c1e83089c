"""The dashboard's reads: what waits for each role, in a flat number of queries."""

import pytest

from settlements.selectors import dashboard

pytestmark = pytest.mark.django_db


def test_what_waits_for_each_role(users, busy_desk):
    marketing = dashboard.waiting_for(users["marketing_manager"])
    assert list(marketing["decisions"]) == [busy_desk["waiting_decision"]]
    assert marketing.total == 1

    operator = dashboard.waiting_for(users["operator"])
    assert list(operator["to_prepare"]) == [busy_desk["ready"]]
    assert list(operator["to_submit"]) == [busy_desk["to_submit"]]
    assert "approvals" not in operator

    manager = dashboard.waiting_for(users["tournament_manager"])
    assert list(manager["approvals"]) == [busy_desk["to_approve"]]
    assert list(manager["compensations"]) == [busy_desk["other_proposal"]]
    assert list(manager["individual_cases"]) == [busy_desk["individual"]]

    second = dashboard.waiting_for(users["second_manager"])
    assert set(second["compensations"]) == {busy_desk["own_proposal"], busy_desk["other_proposal"]}

    assert dashboard.waiting_for(users["auditor"]).total == 0
    assert dashboard.waiting_for(users["none"]).total == 0


def test_queues_keep_query_counts_flat(users, busy_desk, django_assert_num_queries):
    queue = dashboard.waiting_for(users["second_manager"])
    with django_assert_num_queries(2):
        for name in ("approvals", "compensations"):
            rows = dashboard.waiting_rows(dashboard.awaiting(name), queue[name])
            assert rows and all(row["operator_id"] and row["tournament_name"] for row in rows)
