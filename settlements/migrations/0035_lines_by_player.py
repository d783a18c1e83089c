"""The ledger lines' index by (settlement, player) becomes one by (player, settlement): the
players page sums a player's lines across every settlement, which scanned every line of the
desk (54 ms on 273,552 lines for a player in 4,000 cases), and the look-ups of some players'
lines within a settlement are served as well by the new order. Keeping both would add about a
second to the COPY of an 810,000-line settlement."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0034_kinds_of_event_and_job_merged"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="settlementline",
            index=models.Index(fields=["player", "settlement"], name="line_by_player_idx"),
        ),
        migrations.RemoveIndex(model_name="settlementline", name="line_player_idx"),
    ]
