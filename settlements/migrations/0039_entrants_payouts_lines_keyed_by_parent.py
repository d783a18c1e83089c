"""Entrants, payouts and ledger lines keyed by their parent and their place in it, instead of a
surrogate id: (case, player), (settlement, position), (settlement, line number).

Each key was already unique and indexed; the surrogate id was a second index and a sequence on
every row of the three tables the largest crash writes by the hundred thousand, for no look-up
the app makes (docs/benchmarks.md, "Why each index on the bulk tables stays"). Django's
migrations do not move a primary key onto several columns: on SQLite removing ``id`` rebuilds
each table from the new state, key included; on PostgreSQL it drops the column and its key, and
the key is added here, built over the rows already there. Reversed on PostgreSQL, the ids come
back numbered afresh (nothing refers to them). SQLite cannot be taken back past this migration:
Django would rebuild each table with both keys at once; a developer's SQLite database is made
again with ``migrate`` and ``seed_demo`` instead.
"""

from django.db import migrations, models
from django.db.migrations.exceptions import IrreversibleError

KEYS = {
    "settlements_caseplayer": ("case_id", "player"),
    "settlements_settlementpayout": ("settlement_id", "position"),
    "settlements_settlementline": ("settlement_id", "line_no"),
}


def add_keys(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table, columns in KEYS.items():
        names = ", ".join(f'"{column}"' for column in columns)
        schema_editor.execute(f'ALTER TABLE "{table}" ADD PRIMARY KEY ({names})')


def drop_keys(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        raise IrreversibleError(
            "On SQLite the entrants', payouts' and ledger lines' keys cannot be taken back: "
            "delete the database file, then run migrate and seed_demo again."
        )
    for table in KEYS:
        schema_editor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{table}_pkey"')


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0038_snapshots_compressed_by_lz4"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="caseplayer",
            name="case_player_unique",
        ),
        migrations.RemoveConstraint(
            model_name="settlementline",
            name="line_no_unique",
        ),
        migrations.RemoveConstraint(
            model_name="settlementpayout",
            name="payout_position_unique",
        ),
        migrations.AddField(
            model_name="caseplayer",
            name="pk",
            field=models.CompositePrimaryKey(
                "case", "player", blank=True, editable=False, primary_key=True, serialize=False
            ),
        ),
        migrations.AddField(
            model_name="settlementline",
            name="pk",
            field=models.CompositePrimaryKey(
                "settlement",
                "line_no",
                blank=True,
                editable=False,
                primary_key=True,
                serialize=False,
            ),
        ),
        migrations.AddField(
            model_name="settlementpayout",
            name="pk",
            field=models.CompositePrimaryKey(
                "settlement",
                "position",
                blank=True,
                editable=False,
                primary_key=True,
                serialize=False,
            ),
        ),
        migrations.RemoveField(
            model_name="caseplayer",
            name="id",
        ),
        migrations.RemoveField(
            model_name="settlementline",
            name="id",
        ),
        migrations.RemoveField(
            model_name="settlementpayout",
            name="id",
        ),
        migrations.RunPython(add_keys, drop_keys, elidable=False),
    ]
