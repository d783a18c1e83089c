"""The database connection every request reuses (crashdesk/postgresql): a dropped connection is
replaced before a request uses it, without a round trip to find out; the signed-in user's query
is prepared on the server once per connection."""

import select
from unittest import mock

import psycopg
import pytest
from django.db import close_old_connections, connection, connections
from django.urls import reverse

from tests.views.conftest import signed_in

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL's own backend and statements"
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
def test_a_healthy_connection_is_kept_and_checked_without_a_query():
    old = _backend_pid()

    close_old_connections()
    # Django's own check sends SELECT 1 through is_usable(): a round trip every request.
    with mock.patch.object(type(connections["default"]), "is_usable", side_effect=AssertionError):
        new = _backend_pid()

    assert new == old


def _prepared_user_queries() -> list[tuple[int, int]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE %s",
            ['%FROM "auth_user" WHERE%'],
        )
        return cursor.fetchall()


@pytest.mark.django_db
def test_the_signed_in_users_query_is_prepared_once_and_reused(operator):
    client = signed_in(operator)
    for _ in range(3):
        assert client.get(reverse("policy")).status_code == 200

    [(generic, custom)] = _prepared_user_queries()
    assert generic + custom >= 3


@pytest.mark.django_db
def test_without_prepared_statements_the_users_query_runs_unprepared(operator):
    connection.ensure_connection()
    client = signed_in(operator)
    # What DATABASE_PREPARED_STATEMENTS=false leaves the connection with (psycopg's "never").
    raw = connection.connection
    before, raw.prepare_threshold = raw.prepare_threshold, None
    try:
        assert client.get(reverse("policy")).status_code == 200
    finally:
        raw.prepare_threshold = before

    assert _prepared_user_queries() == []
