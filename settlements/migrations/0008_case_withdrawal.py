"""Withdrawing a crash case loaded in error: who, when and why on the case, a final
"withdrawn" status for cases and their unapproved settlements, and one crash case per
tournament among those not withdrawn, so that the tournament can be loaded again."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0007_cache_table"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="case",
            name="one_crash_case_per_tournament",
        ),
        migrations.AddField(
            model_name="case",
            name="withdrawal_reason",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="case",
            name="withdrawn_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="case",
            name="withdrawn_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="historicalcase",
            name="withdrawal_reason",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="historicalcase",
            name="withdrawn_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="historicalcase",
            name="withdrawn_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="case",
            name="status",
            field=models.CharField(
                choices=[
                    ("awaiting_decision", "Awaiting decision"),
                    ("ready", "Ready to prepare"),
                    ("prepared", "Prepared"),
                    ("awaiting_approval", "Awaiting approval"),
                    ("approved", "Approved"),
                    ("rejected", "Rejected"),
                    ("open", "Open"),
                    ("resolved", "Resolved"),
                    ("withdrawn", "Withdrawn"),
                ],
                max_length=24,
            ),
        ),
        migrations.AlterField(
            model_name="event",
            name="type",
            field=models.CharField(
                choices=[
                    ("incident_reported", "Incident reported"),
                    ("incident_closed", "Incident closed"),
                    ("tournament_created", "Tournament created"),
                    ("tournament_updated", "Tournament updated from a snapshot"),
                    ("snapshot_loaded", "Snapshot loaded"),
                    ("decision_recorded", "Decision recorded"),
                    ("settlement_prepared", "Settlement prepared"),
                    ("settlement_submitted", "Settlement submitted"),
                    ("settlement_approved", "Settlement approved"),
                    ("settlement_rejected", "Settlement rejected"),
                    ("adjustment_prepared", "Adjustment prepared"),
                    ("compensation_proposed", "Compensation proposed"),
                    ("compensation_approved", "Compensation approved"),
                    ("compensation_rejected", "Compensation rejected"),
                    ("prize_withdrawal_decided", "Prize withdrawal decided"),
                    ("individual_case_opened", "Individual case opened"),
                    ("individual_case_resolved", "Individual case resolved"),
                    ("case_withdrawn", "Case withdrawn"),
                    ("api_token_created", "API token created"),
                    ("api_token_revoked", "API token revoked"),
                ],
                max_length=32,
            ),
        ),
        migrations.AlterField(
            model_name="historicalcase",
            name="status",
            field=models.CharField(
                choices=[
                    ("awaiting_decision", "Awaiting decision"),
                    ("ready", "Ready to prepare"),
                    ("prepared", "Prepared"),
                    ("awaiting_approval", "Awaiting approval"),
                    ("approved", "Approved"),
                    ("rejected", "Rejected"),
                    ("open", "Open"),
                    ("resolved", "Resolved"),
                    ("withdrawn", "Withdrawn"),
                ],
                max_length=24,
            ),
        ),
        migrations.AlterField(
            model_name="historicalsettlement",
            name="status",
            field=models.CharField(
                choices=[
                    ("prepared", "Prepared"),
                    ("awaiting_approval", "Awaiting approval"),
                    ("approved", "Approved"),
                    ("rejected", "Rejected"),
                    ("withdrawn", "Withdrawn"),
                ],
                max_length=24,
            ),
        ),
        migrations.AlterField(
            model_name="settlement",
            name="status",
            field=models.CharField(
                choices=[
                    ("prepared", "Prepared"),
                    ("awaiting_approval", "Awaiting approval"),
                    ("approved", "Approved"),
                    ("rejected", "Rejected"),
                    ("withdrawn", "Withdrawn"),
                ],
                max_length=24,
            ),
        ),
        migrations.AddConstraint(
            model_name="case",
            constraint=models.UniqueConstraint(
                condition=models.Q(
                    ("kind", "crash"), models.Q(("status", "withdrawn"), _negated=True)
                ),
                fields=("tournament",),
                name="one_live_crash_case_per_tournament",
            ),
        ),
        migrations.AddConstraint(
            model_name="case",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("status", "withdrawn"),
                        ("withdrawn_at__isnull", False),
                        ("withdrawn_by__isnull", False),
                        models.Q(("withdrawal_reason", ""), _negated=True),
                    ),
                    models.Q(
                        models.Q(("status", "withdrawn"), _negated=True),
                        ("withdrawal_reason", ""),
                        ("withdrawn_at__isnull", True),
                        ("withdrawn_by__isnull", True),
                    ),
                    _connector="OR",
                ),
                name="withdrawn_case_says_who_when_why",
            ),
        ),
    ]
