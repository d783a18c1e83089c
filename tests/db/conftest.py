"""Helpers for the tests of the database's guards: raw SQL as the app's role or as an intruder,
and a desk where every audited table holds rows."""

import os

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from settlements import checkpoints
from settlements.services.checkpoints import checkpoint_record
from tests.services.helpers import every_record

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the guards are PostgreSQL triggers and roles"
)


def execute(sql: str, params=None) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def behind_the_apps_back(sql: str, params=None) -> int:
    """Run ``sql`` as an intruder with full rights would: as a superuser, with every trigger
    off for the transaction (on SQLite there are none to turn off). What the app wrote before
    is checked first, as its commit would have (the checks deferred to it)."""
    connection.check_constraints()
    with transaction.atomic():
        if connection.vendor == "postgresql":
            execute("SET LOCAL session_replication_role = replica")
        return execute(sql, params)


@pytest.fixture
def app_role() -> str:
    """A plain role granted row access by `grant_app_role`, as the app's role in production."""
    role = f"{connection.settings_dict['NAME']}_app"[:63]
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE ROLE "{role}" LOGIN')
    with open(os.devnull, "w") as quiet:
        call_command("grant_app_role", role, stdout=quiet)
    return role


def refused(sql: str, params=None, *, role: str) -> str:
    """The error PostgreSQL answers ``sql`` with when ``role`` sends it; nothing is changed."""
    with pytest.raises(DatabaseError) as caught, transaction.atomic():
        execute(f'SET LOCAL ROLE "{role}"')
        execute(sql, params)
    return str(caught.value)


def refused_at_commit(sql: str, *, role: str) -> str:
    """Like ``refused``, with the checks deferred to the commit run before the savepoint ends."""
    connection.check_constraints()  # what the fixtures wrote, as their commits would have
    with pytest.raises(DatabaseError) as caught, transaction.atomic():
        execute(f'SET LOCAL ROLE "{role}"')
        execute(sql)
        execute("SET CONSTRAINTS ALL IMMEDIATE")
    execute("SET CONSTRAINTS ALL DEFERRED")
    return str(caught.value)


@pytest.fixture
def full_desk(users, snapshot_factory):
    records = every_record(users, snapshot_factory)
    # A verification that found nothing wrong leaves its signed checkpoint.
    checkpoint_record(outcome=checkpoints.verify())
    return records
