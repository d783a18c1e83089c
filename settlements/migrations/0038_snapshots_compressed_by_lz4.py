"""Snapshots, and the files a bulk upload keeps until it has loaded them, compressed with LZ4
instead of PostgreSQL's default pglz.

A 300,000-entrant snapshot is 11 to 15 MB of JSON: pglz took 0.19 to 0.23 s of the upload to
compress it, LZ4 0.05 s, for about the same size on disk (2.6 against 2.8 MB), and reads back
faster too (docs/benchmarks.md). Values already stored keep their compression; PostgreSQL
reads both. A server built without LZ4 (it is optional) keeps pglz, and SQLite compresses
nothing.
"""

from django.db import migrations

COLUMNS = (("settlements_snapshot", "text"), ("settlements_jobitem", "payload"))


def _compression(apps, schema_editor, method: str) -> None:
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT %s = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'",
            [method],
        )
        row = cursor.fetchone()
    if not (row and row[0]):
        return
    for table, column in COLUMNS:
        schema_editor.execute(
            f'ALTER TABLE "{table}" ALTER COLUMN "{column}" SET COMPRESSION {method}'
        )


def lz4(apps, schema_editor):
    _compression(apps, schema_editor, "lz4")


def pglz(apps, schema_editor):
    _compression(apps, schema_editor, "pglz")


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0037_settlements_by_case_and_status"),
    ]

    operations = [migrations.RunPython(lz4, pglz)]
