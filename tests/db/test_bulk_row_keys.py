"""Migration 0039, which keys entrants, payouts and ledger lines by their parent: on a seeded
PostgreSQL desk it goes back (the ids return, no row lost) and forward again with the record
still verifying; on SQLite going back is refused with a clear message and changes nothing."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from tests.db.conftest import postgresql_only
from tests.db.test_restore import database_url, run

pytestmark = pytest.mark.slow  # child processes, each with a database migrated from nothing

ROOT = Path(settings.BASE_DIR)
TABLES = {
    "settlements_caseplayer": ["case_id", "player"],
    "settlements_settlementpayout": ["settlement_id", "position"],
    "settlements_settlementline": ["settlement_id", "line_no"],
}
BEFORE_KEYS = "0038_snapshots_compressed_by_lz4"


def _manage(*args: str, url: str) -> str:
    return run([sys.executable, "manage.py", *args], DATABASE_URL=url, DEBUG="true")


def _shape(url: str) -> dict[str, tuple[int, list[str], bool]]:
    """Each table's rows, primary key columns, and whether it has an ``id`` column."""
    shape = {}
    with psycopg.connect(url) as db:
        for table in TABLES:
            (rows,) = db.execute(f'SELECT count(*) FROM "{table}"').fetchone()
            key = [
                name
                for (name,) in db.execute(
                    "SELECT a.attname FROM pg_index i JOIN pg_attribute a"
                    " ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
                    " WHERE i.indrelid = %s::regclass AND i.indisprimary"
                    " ORDER BY array_position(i.indkey::int[], a.attnum::int)",
                    [table],
                )
            ]
            has_id = db.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_name = %s"
                " AND column_name = 'id'",
                [table],
            ).fetchone()
            shape[table] = (rows, key, has_id is not None)
    return shape


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_the_keys_go_back_and_forth_on_a_seeded_desk():
    name = f"{connection.settings_dict['NAME']}_keys_{uuid.uuid4().hex[:8]}"
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{name}"')
    url = database_url(name)
    try:
        _manage("migrate", "-v0", url=url)
        _manage("seed_demo", url=url)
        keyed = _shape(url)
        assert {table: key for table, (_, key, _) in keyed.items()} == TABLES
        assert all(rows > 0 and not has_id for rows, _, has_id in keyed.values())

        _manage("migrate", "settlements", BEFORE_KEYS, "-v0", url=url)
        back = _shape(url)
        for table, (rows, key, has_id) in back.items():
            assert (rows, key, has_id) == (keyed[table][0], ["id"], True), table

        _manage("migrate", "-v0", url=url)
        assert _shape(url) == keyed
        # Going back past the rulebooks' migration (0043) drops their tables: the records of
        # the demo's rulebooks are gone (0044 makes a version again for the policy of each
        # case, the EU case's among them, but not the one sealed), and the seal says so rather
        # than verify.
        lost = subprocess.run(
            [sys.executable, "manage.py", "verify_audit"],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": url, "DEBUG": "true"},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert lost.returncode == 1
        assert "refers to rulebookversion" in lost.stderr
        assert "which is gone" in lost.stderr or "no longer match" in lost.stderr
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_on_sqlite_going_back_is_refused_and_changes_nothing(tmp_path):
    url = f"sqlite:///{tmp_path / 'desk.sqlite3'}"
    _manage("migrate", "-v0", url=url)
    back = subprocess.run(
        [sys.executable, "manage.py", "migrate", "settlements", BEFORE_KEYS],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": url, "DEBUG": "true"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert back.returncode != 0
    assert "cannot be taken back: delete the database file" in back.stderr
    applied = _manage("showmigrations", "settlements", url=url)
    assert "[X] 0039_entrants_payouts_lines_keyed_by_parent" in applied
