"""Times the admin may edit are checked against what can be stored and shown
(settlements.bounds), as the services check theirs."""

from django.db import migrations, models

import settlements.models


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0013_statement_basis_and_player_search"),
    ]

    operations = [
        migrations.AlterField(
            model_name="historicalincident",
            name="started_at",
            field=models.DateTimeField(validators=[settlements.models.validate_storable_time]),
        ),
        migrations.AlterField(
            model_name="historicaltournament",
            name="scheduled_start",
            field=models.DateTimeField(
                blank=True, null=True, validators=[settlements.models.validate_storable_time]
            ),
        ),
        migrations.AlterField(
            model_name="incident",
            name="started_at",
            field=models.DateTimeField(validators=[settlements.models.validate_storable_time]),
        ),
        migrations.AlterField(
            model_name="tournament",
            name="scheduled_start",
            field=models.DateTimeField(
                blank=True, null=True, validators=[settlements.models.validate_storable_time]
            ),
        ),
    ]
