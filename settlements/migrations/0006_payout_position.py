"""Payouts numbered in the engine's order, so that a review page is a range of positions.

Existing payouts are numbered in the order they were written, which is the engine's order
(settlement_prepare writes them as the engine lists them).
"""

from django.db import migrations, models

NUMBER_EXISTING = """
UPDATE settlements_settlementpayout SET position = numbered.position
FROM (
    SELECT id, row_number() OVER (PARTITION BY settlement_id ORDER BY id) - 1 AS position
    FROM settlements_settlementpayout
) AS numbered
WHERE settlements_settlementpayout.id = numbered.id
"""


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0005_bulk_rows_linked_by_triggers"),
    ]

    operations = [
        migrations.AddField(
            model_name="settlementpayout",
            name="position",
            field=models.PositiveIntegerField(default=0),
            preserve_default=False,
        ),
        # UPDATE ... FROM works on PostgreSQL and on SQLite (3.33 and later).
        migrations.RunSQL(NUMBER_EXISTING, migrations.RunSQL.noop),
        migrations.AlterModelOptions(
            name="settlementpayout",
            options={"ordering": ["settlement", "position"]},
        ),
        migrations.AddConstraint(
            model_name="settlementpayout",
            constraint=models.UniqueConstraint(
                fields=("settlement", "position"), name="payout_position_unique"
            ),
        ),
    ]
