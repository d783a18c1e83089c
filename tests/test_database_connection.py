"""The database connection every request reuses: with Django's CONN_HEALTH_CHECKS, a
connection the server has dropped since (a restart, a terminated backend) is replaced before
the next request uses it; with psycopg's prepare_threshold (an option), the queries it runs
again and again are prepared on the server."""

import select

import psycopg
import pytest
from django.db import close_old_connections, connection
from django.db.utils import ConnectionHandler

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="a PostgreSQL server's own backends"
)


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _terminate(pid: int) -> None:
    """End backend `pid` from another connection, as a server restart ends every backend."""
    params = connection.get_connection_params()
    with psycopg.connect(**params, autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    # The backend sends its farewell and closes the socket; wait until it has arrived.
    poll = select.poll()
    poll.register(connection.connection.pgconn.socket, select.POLLIN)
    assert poll.poll(30_000), "the terminated backend never closed its connection"


@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_ended_is_replaced_before_the_next_request_uses_it():
    old = _backend_pid()
    _terminate(old)

    close_old_connections()  # what the start of every request does
    # Without the check this query would fail: its connection is gone.
    new = _backend_pid()

    assert new != old


@pytest.mark.django_db(transaction=True)
def test_a_healthy_connection_is_kept():
    old = _backend_pid()

    close_old_connections()

    assert _backend_pid() == old


@pytest.mark.django_db
def test_with_prepared_statements_a_query_run_again_and_again_is_prepared_on_the_server():
    """DATABASE_PREPARED_STATEMENTS=true gives Django's backend psycopg's own options
    (settings): parameters bound on the server, and a query prepared once it has run
    prepare_threshold times on a connection, later runs reusing the plan."""
    options = {"server_side_binding": True, "prepare_threshold": 2}
    handler = ConnectionHandler({"default": {**connection.settings_dict, "OPTIONS": options}})
    prepared = handler["default"]
    try:
        for user_id in range(6):
            with prepared.cursor() as cursor:
                cursor.execute('SELECT id FROM "auth_user" WHERE id = %s', [user_id])
        with prepared.cursor() as cursor:
            cursor.execute(
                "SELECT generic_plans + custom_plans FROM pg_prepared_statements"
                " WHERE statement LIKE %s",
                ['%FROM "auth_user" WHERE id = $1%'],
            )
            [(plans,)] = cursor.fetchall()
    finally:
        prepared.close()
    assert plans >= 3


@pytest.mark.django_db
def test_every_connection_bounds_its_lock_waits_and_idle_transactions():
    """The web and the workers share these settings: a process stuck in a transaction (a
    frozen worker) holds its locks for at most the idle bound, and no statement waits longer
    than the lock bound behind it."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW lock_timeout")
        lock = cursor.fetchone()[0]
        cursor.execute("SHOW idle_in_transaction_session_timeout")
        idle = cursor.fetchone()[0]
    assert lock == "10s"
    assert idle == "1min"
