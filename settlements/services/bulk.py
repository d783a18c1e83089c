"""The one door to psycopg under Django, for the bulk writes Django's cursor makes slow: COPY
(``common.insert_rows``) and values sent apart from the statement (``common.insert_bound_rows``).

Only psycopg's public API and Django's documented ``connection.connection`` (the DB-API
connection) are used. A raw psycopg cursor bypasses Django's translation of driver errors,
so ``cursor()`` translates them itself: a refused row still surfaces as Django's
``IntegrityError``. tests/services/test_bulk.py holds it to that on each Django upgrade.
"""

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from django import db
from django.db import connection

# psycopg's error classes and Django's, most specific first (PEP 249 names both sets alike).
_ERRORS = tuple(
    (getattr(psycopg, name), getattr(db, name))
    for name in (
        "IntegrityError",
        "DataError",
        "ProgrammingError",
        "NotSupportedError",
        "InternalError",
        "OperationalError",
        "InterfaceError",
        "DatabaseError",
    )
)


@contextmanager
def cursor() -> Iterator[psycopg.Cursor]:
    """A psycopg cursor on the request's connection (in its transaction), whose driver errors
    are raised as Django's."""
    connection.ensure_connection()
    try:
        with psycopg.Cursor(connection.connection) as raw:
            yield raw
    except psycopg.Error as error:
        # Django checks a connection that saw an error before handing it out again.
        connection.errors_occurred = True
        for driver, django in _ERRORS:
            if isinstance(error, driver):
                raise django(*error.args) from error
        raise
