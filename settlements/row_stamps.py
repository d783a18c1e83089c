"""Which rows were written since a verification, read from PostgreSQL's own stamp on every
row version (``xmin``: the transaction that wrote it), so that an incremental verification
(settlements.checkpoints) looks for rows no event names among those alone.

No database role can choose the stamp: an INSERT or an UPDATE, by the app or behind its back,
gives the row version the id of the transaction writing it. A DELETE leaves no row; the older
events checked again at random, and every full verification, find what one took away.

A horizon is the oldest transaction still running when a verification began (every row it
could not see was written at or after it), kept as a 64-bit id. Transaction ids on rows are 32
bits and wrap around, so rows are compared by age, and only while fewer than ``REACH``
transactions separate the horizon from now; past that, and on a database without stamps
(SQLite), every row is read.
"""

from django.db import connection
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

# Half of the 2**31 transactions over which age() stays exact.
REACH = 2**30


def horizon() -> int | None:
    """The horizon of a verification beginning now; None where rows carry no stamp."""
    return _snapshot("pg_snapshot_xmin")


def reachable(since: int | None) -> int | None:
    """``since`` if rows written after it can still be told by their stamp, else None."""
    if since is None:
        return None
    upcoming = _snapshot("pg_snapshot_xmax")
    return since if upcoming is not None and 0 <= upcoming - since < REACH else None


def written_since(model, since: int) -> RawSQL:
    """A filter for the rows of ``model`` (queried on their own, not as a join) written at or
    after the horizon ``since``: younger than it, or as young."""
    table = connection.ops.quote_name(model._meta.db_table)
    return RawSQL(
        f"age({table}.xmin) <= age(%s::text::xid)",
        (since % 2**32,),
        output_field=BooleanField(),
    )


def _snapshot(bound: str) -> int | None:
    if not stamped():
        return None
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {bound}(pg_current_snapshot())::text::bigint")  # noqa: S608
        return cursor.fetchone()[0]


def stamped() -> bool:
    """Whether rows carry stamps here (PostgreSQL; SQLite has none)."""
    return connection.vendor == "postgresql"


def version_of(alias: str) -> str:
    """SQL naming the version of the row that ``alias`` reads: the transaction that wrote it
    and where the version lies. Every UPDATE, by any path, writes a new version in a new place,
    even a second one in the same transaction, so the pair changes with every write."""
    return f"({alias}.xmin::text || '/' || {alias}.ctid::text)"
