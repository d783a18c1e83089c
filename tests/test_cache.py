"""The database cache's set() (crashdesk/cache.py): one statement on PostgreSQL, read back as
Django's own set() writes, with the table still culled when it passes its size."""

import pytest
from django.core.cache import cache, caches
from django.db import connection

from crashdesk import cache as backend

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def rows() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM crashdesk_cache")
        return cursor.fetchone()[0]


def test_what_is_set_reads_back_and_a_second_set_replaces_it():
    cache.set("review:rows", (("Buy-in back",), "<tr>first</tr>"), 60)
    cache.set("review:rows", (("Buy-in back",), "<tr>second</tr>"), 60)
    assert cache.get("review:rows") == (("Buy-in back",), "<tr>second</tr>")
    assert rows() == 1


def test_timeouts_mean_what_they_mean_in_django():
    cache.set("forever", 1, None)
    cache.set("gone", 2, 0)
    cache.set("an-hour", 3, 3600)
    assert cache.get_many(["forever", "gone", "an-hour"]) == {"forever": 1, "an-hour": 3}


def test_add_and_touch_keep_djangos_meaning():
    cache.set("taken", "first", 60)
    assert not cache.add("taken", "second", 60)
    assert cache.get("taken") == "first"
    assert cache.touch("taken", None)


def test_set_is_one_statement_on_postgresql(django_assert_num_queries):
    if connection.vendor != "postgresql":
        pytest.skip("SQLite keeps Django's set()")
    caches["default"].cull_check_every = 50
    caches["default"]._writes = 1
    with django_assert_num_queries(1):
        cache.set("one", 1, 60)


def test_the_table_is_culled_once_it_passes_its_size():
    if connection.vendor != "postgresql":
        pytest.skip("SQLite keeps Django's set()")
    options = {"MAX_ENTRIES": 10, "CULL_CHECK_EVERY": backend.CULL_CHECK_EVERY}
    small = backend.DatabaseCache("crashdesk_cache", {"OPTIONS": options})
    for number in range(3 * backend.CULL_CHECK_EVERY):
        small.set(f"entry-{number}", number, 60)
    assert rows() < 3 * backend.CULL_CHECK_EVERY  # culled on the way
    before = rows()
    small._writes = backend.CULL_CHECK_EVERY - 1
    small.set("checked-write", 0, 60)
    # Django's cull: a third of the entries (CULL_FREQUENCY 3) go, then the write lands.
    assert rows() == before - before // 3 + 1
