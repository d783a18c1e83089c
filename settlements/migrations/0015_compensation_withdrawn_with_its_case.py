"""Compensation still waiting when its case is withdrawn as loaded in error is withdrawn
with it (a final status)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0014_times_within_what_can_be_shown"),
    ]

    operations = [
        migrations.AlterField(
            model_name="compensation",
            name="status",
            field=models.CharField(
                choices=[
                    ("proposed", "Awaiting approval"),
                    ("approved", "Approved"),
                    ("rejected", "Rejected"),
                    ("withdrawn", "Withdrawn with its case"),
                ],
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="historicalcompensation",
            name="status",
            field=models.CharField(
                choices=[
                    ("proposed", "Awaiting approval"),
                    ("approved", "Approved"),
                    ("rejected", "Rejected"),
                    ("withdrawn", "Withdrawn with its case"),
                ],
                max_length=16,
            ),
        ),
    ]
