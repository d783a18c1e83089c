"""Events for the figures behind statements put back on settlements prepared before migration
0013 kept them (services.bases, ``manage.py restore_statement_bases``).

The figures are not put back here: doing so runs today's engine, while a migration must stay
frozen; it needs the comparison with the stored ledger and an administrator's decision when
they differ; and on a desk of large settlements it is a long job that a deploy should not wait
for. The system check settlements.W001 says when settlements are waiting for it.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0025_cheaper_toast_for_snapshots"),
    ]

    operations = [
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
                    ("payments_confirmed", "Payments confirmed by the cashier"),
                    ("reissue_proposed", "Re-issue of a failed line proposed"),
                    ("reissue_approved", "Re-issue approved"),
                    ("reissue_rejected", "Re-issue rejected"),
                    ("api_token_created", "API token created"),
                    ("api_token_revoked", "API token revoked"),
                    ("user_access_changed", "User's access changed"),
                    ("basis_restored", "Statement figures restored"),
                    ("basis_not_restored", "Statement figures not restored"),
                ],
                max_length=32,
            ),
        ),
    ]
