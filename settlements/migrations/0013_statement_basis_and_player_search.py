"""Statements for players: what the engine built a settlement's amounts from (its basis),
each payout's weight and places by chips, and an index that finds a player's cases across
incidents by exact id or prefix.

The index orders ids by code point (COLLATE "C"), the order the rules use, so that a prefix
search is a range scan whatever the database's own collation. PostgreSQL only: SQLite (a
developer's fallback) has no such collation name and few enough rows to scan.
"""

from django.db import migrations, models

INDEX = "case_player_by_id"


def create_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f'CREATE INDEX {INDEX} ON settlements_caseplayer ((player COLLATE "C"), case_id)'
        )


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX {INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0012_cashier_role"),
    ]

    operations = [
        migrations.AddField(
            model_name="historicalsettlement",
            name="basis",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="settlement",
            name="basis",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="settlementpayout",
            name="place_first",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="settlementpayout",
            name="place_last",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="settlementpayout",
            name="weight",
            field=models.TextField(blank=True),
        ),
        migrations.RunPython(create_index, drop_index),
    ]
