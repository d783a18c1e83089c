"""services.bulk: psycopg's errors under the bulk writes come out as Django's."""

import pytest
from django.db import DataError, IntegrityError, connection, transaction

from settlements.services import bulk

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="psycopg is PostgreSQL's"),
]


def test_a_refused_row_is_djangos_integrity_error():
    with bulk.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE bulk_probe (id integer PRIMARY KEY)")
    with pytest.raises(IntegrityError), transaction.atomic(), bulk.cursor() as cursor:
        cursor.executemany("INSERT INTO bulk_probe VALUES (%s)", [(1,), (1,)])


def test_a_value_out_of_range_is_djangos_data_error():
    with pytest.raises(DataError), transaction.atomic(), bulk.cursor() as cursor:
        cursor.execute("SELECT %s::integer", ["99999999999"])


def test_the_cursor_works_in_the_requests_transaction():
    with transaction.atomic():
        with bulk.cursor() as cursor:
            cursor.execute("CREATE TEMPORARY TABLE bulk_seen (id integer)")
            cursor.execute("INSERT INTO bulk_seen VALUES (7)")
        with connection.cursor() as django_cursor:
            django_cursor.execute("SELECT id FROM bulk_seen")
            assert django_cursor.fetchall() == [(7,)]
