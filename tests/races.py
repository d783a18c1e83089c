"""Racing real transactions on PostgreSQL, for every test that needs requests to overlap.

Each worker is a thread with its own database connection (Django opens one per thread), held
at a barrier until all are ready so their transactions really overlap, and closed when the
worker ends so the test database can be dropped afterwards. Tests that use this must commit
for real (``transaction=True``): row locks and unique indexes only show their worth between
separate transactions, and SQLite serialises writers, hence ``RACES``.
"""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

RACES = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="concurrency is tested on PostgreSQL"
    ),
]

TIMEOUT = 60
# The crowd of the big races: far more threads than cores, so the requests really contend.
WORKERS = 50


def run_together(
    count: int,
    act: Callable[[int, object], object],
    prepare: Callable[[int], object] = lambda index: None,
) -> list:
    """``act(i, prepare(i))`` in ``count`` threads released at once; each result, or the
    exception it raised. ``prepare`` runs before the barrier, for what a request would load
    on its own before the contested step (its user, its copy of the row)."""
    barrier = threading.Barrier(count, timeout=TIMEOUT)

    def worker(index):
        try:
            prepared = prepare(index)
            barrier.wait()
            return act(index, prepared)
        except Exception as error:  # the refusals are what the tests look at
            return error
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(worker, range(count), timeout=TIMEOUT * 2))


def race(*calls: Callable[[], object]) -> list:
    """Each call at the same moment in its own thread; each result or exception, in order."""
    return run_together(len(calls), lambda index, _: calls[index]())


def start_thread(target: Callable[[], object]) -> threading.Thread:
    """``target`` started in a thread of its own that closes its connections when done."""

    def run():
        try:
            target()
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread
