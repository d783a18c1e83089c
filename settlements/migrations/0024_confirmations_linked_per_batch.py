import django.db.models.deletion
import pgtrigger.compiler
import pgtrigger.migrations
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    """A payment confirmation's links (its release, its batch's event, its recorder) checked
    once per batch by a statement-level trigger instead of three foreign-key checks per row,
    which made up most of PostgreSQL's time for a batch of a thousand confirmations."""

    dependencies = [
        ("settlements", "0023_job_run_token"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="paymentconfirmation",
            name="event",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="confirmations",
                to="settlements.event",
            ),
        ),
        migrations.AlterField(
            model_name="paymentconfirmation",
            name="recorded_by",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="paymentconfirmation",
            name="release",
            field=models.ForeignKey(
                db_constraint=False,
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="confirmations",
                to="settlements.ledgerrelease",
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="paymentconfirmation",
            trigger=pgtrigger.compiler.Trigger(
                name="rows_recorded_in_batch",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    declare="DECLARE problem text;",
                    func='SELECT format(\'Key (release_id)=(%s) is not present in table "settlements_ledgerrelease".\', r.k) INTO problem FROM (SELECT DISTINCT "release_id" AS k FROM new_rows) AS r WHERE NOT EXISTS (SELECT 1 FROM "settlements_ledgerrelease" AS p WHERE p."id" = r.k) LIMIT 1; IF problem IS NULL THEN SELECT format( \'Key (event_id, recorded_by_id)=(%s, %s) is not present in table \' || \'"settlements_event" as (id, actor_id).\', r.e, r.u ) INTO problem FROM (SELECT DISTINCT "event_id" AS e, "recorded_by_id" AS u FROM new_rows) AS r WHERE NOT EXISTS ( SELECT 1 FROM "settlements_event" AS b WHERE b."id" = r.e AND b."actor_id" = r.u ) LIMIT 1; END IF; IF problem IS NOT NULL THEN RAISE EXCEPTION \'insert on table "%" violates its links\', TG_TABLE_NAME USING ERRCODE = \'foreign_key_violation\', DETAIL = problem; END IF; RETURN NULL;',
                    hash="bb72a2971eb880ac50ccf8688841cf2e7be3510f",
                    level="STATEMENT",
                    operation="INSERT",
                    pgid="pgtrigger_rows_recorded_in_batch_65b08",
                    referencing="REFERENCING NEW TABLE AS new_rows ",
                    table="settlements_paymentconfirmation",
                    when="AFTER",
                ),
            ),
        ),
    ]
