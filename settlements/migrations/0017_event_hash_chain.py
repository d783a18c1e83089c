"""The event log becomes a hash chain (settlements.audit_log): each event gets its number, the
previous event's hash, its own hash and what it seals of its subject; settlements and
compensation keep the digest of their lines. Existing rows are chained in id order and their
digests computed from their rows, with the write-once triggers skipped for this one pass (the
migration runs as the tables' owner, the one role allowed to skip them).
"""

import hashlib

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models
from django.utils import timezone

from settlements.audit_log import GENESIS, canonical, items_digest, ledger_digest

# The guards the backfill passes (their ids as migration 0016 installed them).
SKIPPED = (
    "pgtrigger_write_once_13d3c",  # settlements_event
    "pgtrigger_final_when_approved_22f2e",  # settlements_settlement
    "pgtrigger_final_when_approved_b4336",  # settlements_compensation
)


def chain_existing(apps, schema_editor):
    Event = apps.get_model("settlements", "Event")
    if not Event.objects.exists():
        return
    Settlement = apps.get_model("settlements", "Settlement")
    SettlementLine = apps.get_model("settlements", "SettlementLine")
    Compensation = apps.get_model("settlements", "Compensation")
    CompensationItem = apps.get_model("settlements", "CompensationItem")
    Case = apps.get_model("settlements", "Case")
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            "SELECT set_config('pgtrigger.ignore', %s, true)", ["{" + ",".join(SKIPPED) + "}"]
        )
    facts = {}
    for settlement in Settlement.objects.order_by("pk"):
        lines = SettlementLine.objects.filter(settlement=settlement).order_by("line_no")
        settlement.ledger_digest = ledger_digest(
            lines.values_list("line_no", "player", "kind", "unit", "amount", "source", "reversal")
        )
        settlement.save(update_fields=["ledger_digest"])
        facts["settlement", settlement.pk] = {
            "totals": settlement.totals,
            "line_count": settlement.line_count,
            "payout_count": settlement.payout_count,
            "pool": settlement.pool,
            "pool_distributed": settlement.pool_distributed,
            "ledger": settlement.ledger_digest,
        }
    for compensation in Compensation.objects.order_by("pk"):
        items = CompensationItem.objects.filter(compensation=compensation).order_by("line_no")
        compensation.items_digest = items_digest(
            items.values_list("line_no", "player", "unit", "amount")
        )
        compensation.save(update_fields=["items_digest"])
        facts["compensation", compensation.pk] = {
            "totals": compensation.totals,
            "items": compensation.items_digest,
        }
    for pk, sha256 in Case.objects.filter(snapshot__isnull=False).values_list(
        "pk", "snapshot__sha256"
    ):
        facts["case", pk] = {"snapshot": sha256}
    previous = GENESIS
    for seq, event in enumerate(Event.objects.order_by("pk").iterator(), start=1):
        event.subject_facts = facts.get((event.subject_type, event.subject_id), {})
        event.seq, event.prev_hash = seq, previous
        event.hash = previous = hashlib.sha256(canonical(event)).hexdigest()
        event.save(update_fields=["subject_facts", "seq", "prev_hash", "hash"])


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0016_record_guarded_by_pgtrigger"),
    ]

    operations = [
        pgtrigger.migrations.RemoveTrigger(
            model_name="compensation",
            name="fixed_fields",
        ),
        pgtrigger.migrations.RemoveTrigger(
            model_name="settlement",
            name="fixed_fields",
        ),
        migrations.AddField(
            model_name="compensation",
            name="items_digest",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name="event",
            name="hash",
            field=models.CharField(max_length=64, null=True, verbose_name="SHA-256"),
        ),
        migrations.AddField(
            model_name="event",
            name="prev_hash",
            field=models.CharField(max_length=64, null=True, verbose_name="previous event's hash"),
        ),
        migrations.AddField(
            model_name="event",
            name="seq",
            field=models.PositiveBigIntegerField(
                null=True, unique=True, verbose_name="number in the chain"
            ),
        ),
        migrations.AddField(
            model_name="event",
            name="subject_facts",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.AddField(
            model_name="historicalcompensation",
            name="items_digest",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name="historicalsettlement",
            name="ledger_digest",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AddField(
            model_name="settlement",
            name="ledger_digest",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AlterField(
            model_name="event",
            name="at",
            field=models.DateTimeField(default=timezone.now),
        ),
        migrations.RunPython(chain_existing, migrations.RunPython.noop, elidable=True),
        migrations.AlterField(
            model_name="event",
            name="seq",
            field=models.PositiveBigIntegerField(unique=True, verbose_name="number in the chain"),
        ),
        migrations.AlterField(
            model_name="event",
            name="prev_hash",
            field=models.CharField(max_length=64, verbose_name="previous event's hash"),
        ),
        migrations.AlterField(
            model_name="event",
            name="hash",
            field=models.CharField(max_length=64, verbose_name="SHA-256"),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="compensation",
            trigger=pgtrigger.compiler.Trigger(
                name="fixed_fields",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    condition='WHEN (OLD."case_id" IS DISTINCT FROM (NEW."case_id") OR OLD."currency" IS DISTINCT FROM (NEW."currency") OR OLD."reason" IS DISTINCT FROM (NEW."reason") OR OLD."proposed_by_id" IS DISTINCT FROM (NEW."proposed_by_id") OR OLD."proposed_at" IS DISTINCT FROM (NEW."proposed_at") OR OLD."totals" IS DISTINCT FROM (NEW."totals") OR OLD."items_digest" IS DISTINCT FROM (NEW."items_digest"))',
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;",
                    hash="1c0fce9b97b1e9affffa87075d6c04b5719bc290",
                    operation="UPDATE",
                    pgid="pgtrigger_fixed_fields_41f35",
                    table="settlements_compensation",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="settlement",
            trigger=pgtrigger.compiler.Trigger(
                name="fixed_fields",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    condition='WHEN (OLD."case_id" IS DISTINCT FROM (NEW."case_id") OR OLD."kind" IS DISTINCT FROM (NEW."kind") OR OLD."corrects_id" IS DISTINCT FROM (NEW."corrects_id") OR OLD."currency" IS DISTINCT FROM (NEW."currency") OR OLD."stage" IS DISTINCT FROM (NEW."stage") OR OLD."remedy" IS DISTINCT FROM (NEW."remedy") OR OLD."decision" IS DISTINCT FROM (NEW."decision") OR OLD."policy" IS DISTINCT FROM (NEW."policy") OR OLD."engine_version" IS DISTINCT FROM (NEW."engine_version") OR OLD."entrants" IS DISTINCT FROM (NEW."entrants") OR OLD."eliminated" IS DISTINCT FROM (NEW."eliminated") OR OLD."remaining" IS DISTINCT FROM (NEW."remaining") OR OLD."pool" IS DISTINCT FROM (NEW."pool") OR OLD."pool_distributed" IS DISTINCT FROM (NEW."pool_distributed") OR OLD."totals" IS DISTINCT FROM (NEW."totals") OR OLD."line_count" IS DISTINCT FROM (NEW."line_count") OR OLD."payout_count" IS DISTINCT FROM (NEW."payout_count") OR OLD."ledger_digest" IS DISTINCT FROM (NEW."ledger_digest") OR OLD."note" IS DISTINCT FROM (NEW."note") OR OLD."prepared_by_id" IS DISTINCT FROM (NEW."prepared_by_id") OR OLD."prepared_at" IS DISTINCT FROM (NEW."prepared_at"))',
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;",
                    hash="49aa9f58d622bdee6c2931f7720e0c7470de1c71",
                    operation="UPDATE",
                    pgid="pgtrigger_fixed_fields_96eb9",
                    table="settlements_settlement",
                    when="BEFORE",
                ),
            ),
        ),
    ]
