"""The desk's change mark: what cached reads of business data are keyed by.

Every business change writes an event (the services); a correction made outside them (a
shell, a data migration) leaves at least a version in the incident's or tournament's history.
The mark is the latest of each, read in one query, so a cache entry keyed by it is never read
after a change.

That needs the ids to grow in commit order: a sequence hands ids out at insert time, so a
transaction that inserted id 100 and commits after another's 101 would add a change the mark
(101 already) never shows. Writers therefore take one transaction-level lock before inserting
their event or history version, and hold it until they commit.
"""

import hashlib

from django.db import connection
from simple_history.utils import get_history_model_for_model

from settlements.models import Event, Incident, Tournament

# The tables of incident and tournament versions (``Model.history`` builds a new manager class
# on every access, about 90 µs).
INCIDENT_VERSIONS = get_history_model_for_model(Incident)
TOURNAMENT_VERSIONS = get_history_model_for_model(Tournament)

# Any constant unique to this use among the site's advisory locks (there are no others).
_COMMIT_ORDER_LOCK = 7_310_001


def hold_commit_order() -> None:
    """Called inside the writer's transaction, before it inserts what moves the mark."""
    # SQLite lets one writer at a time into the database: ids already follow commit order.
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_COMMIT_ORDER_LOCK])


def mark(versions=(INCIDENT_VERSIONS, TOURNAMENT_VERSIONS)) -> str:
    """A short digest of the latest event (with its time, so a database rebuilt with the same
    ids differs) and the latest history version in each table of ``versions`` (historical
    models): by default the incidents' and tournaments', what the dashboard shows besides
    what events record; the history browser passes every table it shows."""
    event = Event._meta
    latest_versions = "".join(
        f", (SELECT history_id FROM {table._meta.db_table} ORDER BY 1 DESC LIMIT 1)"
        for table in versions
    )
    sql = (
        f"SELECT (SELECT {event.pk.column} FROM {event.db_table} ORDER BY 1 DESC LIMIT 1),"
        f" (SELECT {event.get_field('at').column} FROM {event.db_table}"
        f" ORDER BY {event.pk.column} DESC LIMIT 1){latest_versions}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql)
        row = cursor.fetchone()
    return hashlib.blake2b(repr(row).encode(), digest_size=12).hexdigest()
