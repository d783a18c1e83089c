"""Decision previews live in the database cache: computed once, then read by every gunicorn
worker and replica instead of computed again in each process."""

import pytest
from django.core.cache import cache
from django.db import connection

from settlements.views import cached_previews
from tests.services.helpers import load

pytestmark = pytest.mark.django_db


def cached_rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM crashdesk_cache")
        return cursor.fetchone()[0]


def test_previews_are_stored_in_the_database_and_read_back(operator, snapshot_factory, monkeypatch):
    cache.clear()
    case = load(operator, snapshot_factory, type="satellite", stage="middle", entrants=40)
    first = cached_previews.decision_previews(case)
    assert len(first) == 2 and cached_rows() == 2

    def recompute(*args, **kwargs):
        raise AssertionError("the preview was computed again")

    monkeypatch.setattr("settlements.selectors.previews._preview", recompute)
    assert cached_previews.decision_previews(case) == first
