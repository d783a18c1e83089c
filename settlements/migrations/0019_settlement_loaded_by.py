"""Separation of duties on the data: a settlement keeps who loaded its case's snapshot, and the
database refuses an approver who loaded it or submitted it.

Existing settlements get their case's loader, except those their loader approved under the
old rules: they keep an empty loader, so that the record stays as it was and the new check
holds (the case still names who loaded it).
"""

import django.db.models.deletion
import pgtrigger.compiler
import pgtrigger.migrations
from django.conf import settings
from django.db import migrations, models
from django.db.models import F, OuterRef, Subquery


def record_loaders(apps, schema_editor):
    Settlement = apps.get_model("settlements", "Settlement")
    Case = apps.get_model("settlements", "Case")
    if schema_editor.connection.vendor == "postgresql":
        # Approved settlements are final (migration 0016); this fills in a fact they always had.
        schema_editor.execute(
            "SELECT set_config('pgtrigger.ignore', %s, true)",
            ["{pgtrigger_final_when_approved_22f2e}"],
        )
    loader = Case.objects.filter(pk=OuterRef("case_id")).values("created_by_id")[:1]
    Settlement.objects.update(loaded_by_id=Subquery(loader))
    Settlement.objects.filter(approved_by=F("loaded_by")).update(loaded_by=None)


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0018_user_access_events"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        pgtrigger.migrations.RemoveTrigger(
            model_name="settlement",
            name="fixed_fields",
        ),
        migrations.AddField(
            model_name="historicalsettlement",
            name="loaded_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
                verbose_name="snapshot loaded by",
            ),
        ),
        migrations.AddField(
            model_name="settlement",
            name="loaded_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
                verbose_name="snapshot loaded by",
            ),
        ),
        migrations.RunPython(record_loaders, migrations.RunPython.noop, elidable=True),
        pgtrigger.migrations.AddTrigger(
            model_name="settlement",
            trigger=pgtrigger.compiler.Trigger(
                name="fixed_fields",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    condition='WHEN (OLD."case_id" IS DISTINCT FROM (NEW."case_id") OR OLD."kind" IS DISTINCT FROM (NEW."kind") OR OLD."corrects_id" IS DISTINCT FROM (NEW."corrects_id") OR OLD."currency" IS DISTINCT FROM (NEW."currency") OR OLD."stage" IS DISTINCT FROM (NEW."stage") OR OLD."remedy" IS DISTINCT FROM (NEW."remedy") OR OLD."decision" IS DISTINCT FROM (NEW."decision") OR OLD."policy" IS DISTINCT FROM (NEW."policy") OR OLD."engine_version" IS DISTINCT FROM (NEW."engine_version") OR OLD."entrants" IS DISTINCT FROM (NEW."entrants") OR OLD."eliminated" IS DISTINCT FROM (NEW."eliminated") OR OLD."remaining" IS DISTINCT FROM (NEW."remaining") OR OLD."pool" IS DISTINCT FROM (NEW."pool") OR OLD."pool_distributed" IS DISTINCT FROM (NEW."pool_distributed") OR OLD."totals" IS DISTINCT FROM (NEW."totals") OR OLD."line_count" IS DISTINCT FROM (NEW."line_count") OR OLD."payout_count" IS DISTINCT FROM (NEW."payout_count") OR OLD."ledger_digest" IS DISTINCT FROM (NEW."ledger_digest") OR OLD."note" IS DISTINCT FROM (NEW."note") OR OLD."loaded_by_id" IS DISTINCT FROM (NEW."loaded_by_id") OR OLD."prepared_by_id" IS DISTINCT FROM (NEW."prepared_by_id") OR OLD."prepared_at" IS DISTINCT FROM (NEW."prepared_at"))',
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;",
                    hash="2d6b054f6e063da0c7b5feb861bda744d4b60c00",
                    operation="UPDATE",
                    pgid="pgtrigger_fixed_fields_96eb9",
                    table="settlements_settlement",
                    when="BEFORE",
                ),
            ),
        ),
        migrations.AddConstraint(
            model_name="settlement",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("approved_by__isnull", True),
                    models.Q(("approved_by", models.F("loaded_by")), _negated=True),
                    _connector="OR",
                ),
                name="approver_is_not_loader",
            ),
        ),
        migrations.AddConstraint(
            model_name="settlement",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("approved_by__isnull", True),
                    ("submitted_by__isnull", True),
                    models.Q(("approved_by", models.F("submitted_by")), _negated=True),
                    _connector="OR",
                ),
                name="approver_is_not_submitter",
            ),
        ),
    ]
