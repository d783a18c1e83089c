from django.db import migrations, models

from settlements.player_ids import tournament_key


def fill_keys(apps, schema_editor):
    """Key the tournaments already registered. Two whose ids share a key are one tournament
    registered twice: the migration stops and names them, as which one stays is a decision
    for the desk, not for a migration."""
    Tournament = apps.get_model("settlements", "Tournament")
    seen: dict[str, str] = {}
    clashes = []
    tournaments = list(Tournament.objects.only("pk", "operator_id"))
    for tournament in tournaments:
        tournament.key = tournament_key(tournament.operator_id)
        if tournament.key in seen:
            clashes.append(f"{seen[tournament.key]!r} and {tournament.operator_id!r}")
        seen.setdefault(tournament.key, tournament.operator_id)
    if clashes:
        raise RuntimeError(
            "These tournament ids name the same tournament; merge or rename one of each "
            "pair before migrating: " + "; ".join(clashes)
        )
    Tournament.objects.bulk_update(tournaments, ["key"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0040_workflow_guards"),
    ]

    operations = [
        migrations.AddField(
            model_name="tournament",
            name="key",
            field=models.TextField(editable=False, null=True, verbose_name="comparison key"),
        ),
        migrations.RunPython(fill_keys, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="tournament",
            name="key",
            field=models.TextField(editable=False, unique=True, verbose_name="comparison key"),
        ),
    ]
