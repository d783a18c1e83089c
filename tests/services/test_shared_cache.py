"""Decision previews and payout charts live in the database cache: computed once, then read by
every gunicorn worker and replica instead of computed again in each process."""

import pytest
from django.core.cache import cache
from django.db import connection

from settlements import selectors, services
from tests.services.helpers import load

pytestmark = pytest.mark.django_db


def cached_rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM crashdesk_cache")
        return cursor.fetchone()[0]


def test_previews_are_stored_in_the_database_and_read_back(operator, snapshot_factory, monkeypatch):
    cache.clear()
    case = load(operator, snapshot_factory, type="satellite", stage="middle", entrants=40)
    first = selectors.decision_previews(case)
    assert len(first) == 2 and cached_rows() == 2

    def recompute(*args, **kwargs):
        raise AssertionError("the preview was computed again")

    monkeypatch.setattr("settlements.selectors.previews._preview", recompute)
    assert selectors.decision_previews(case) == first


def test_a_chart_is_computed_once(operator, snapshot_factory, monkeypatch):
    cache.clear()
    case = load(operator, snapshot_factory, stage="middle", entrants=40)
    settlement = selectors.settlement_detail(
        services.settlement_prepare(case=case, actor=operator).pk
    )
    points = selectors.settlement_chart_points(settlement)
    assert points and cached_rows() == 1

    monkeypatch.setattr("settlements.selectors.previews._chart_points", lambda settlement: [])
    assert selectors.settlement_chart_points(settlement) == points
