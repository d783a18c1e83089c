"""The record guarded by the database: write-once tables, approved settlements, compensation
and re-issues final, and the bulk rows' links to their parents, all as django-pgtrigger
triggers (settlements.triggers). The links were hand-written triggers (migration 0005); they
are replaced by the same checks under pgtrigger's management. On SQLite nothing is installed.
"""

import importlib

import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations

# The module's name starts with a digit, so it cannot be imported with an import statement.
linked_by_triggers = importlib.import_module(
    "settlements.migrations.0005_bulk_rows_linked_by_triggers"
)


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0015_compensation_withdrawn_with_its_case"),
    ]

    operations = [
        migrations.RunPython(
            linked_by_triggers.drop_triggers, linked_by_triggers.create_triggers, elidable=True
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="case",
            trigger=pgtrigger.compiler.Trigger(
                name="keeps_rows",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN RETURN NEW; END IF; IF EXISTS (SELECT 1 FROM \"settlements_caseplayer\" WHERE \"case_id\" = OLD.id) THEN RAISE EXCEPTION 'update or delete on table \"%\" violates the link from \"settlements_caseplayer\"', TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation', DETAIL = format('Key (id)=(%s) is still referenced from table \"settlements_caseplayer\".', OLD.id); END IF; RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;",
                    hash="e3f9472475657a05f845baa3b5faca13f58849d3",
                    operation='DELETE OR UPDATE OF "id"',
                    pgid="pgtrigger_keeps_rows_4d352",
                    table="settlements_case",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="caseplayer",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="486c6c19ac300518f36ff3fe15f15d5d04d0e834",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_66719",
                    table="settlements_caseplayer",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="caseplayer",
            trigger=pgtrigger.compiler.Trigger(
                name="rows_have_parent",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    declare="DECLARE orphan bigint;",
                    func='SELECT r.k INTO orphan FROM (SELECT DISTINCT "case_id" AS k FROM new_rows) AS r WHERE NOT EXISTS ( SELECT 1 FROM "settlements_case" AS p WHERE p."id" = r.k ) LIMIT 1; IF orphan IS NOT NULL THEN RAISE EXCEPTION \'insert on table "%" violates its link to "settlements_case"\', TG_TABLE_NAME USING ERRCODE = \'foreign_key_violation\', DETAIL = format(\'Key (case_id)=(%s) is not present in table "settlements_case".\', orphan); END IF; RETURN NULL;',
                    hash="34b7c3e4ae1fc0b37a6435d24cf9c452a0e63379",
                    level="STATEMENT",
                    operation="INSERT",
                    pgid="pgtrigger_rows_have_parent_308d4",
                    referencing="REFERENCING NEW TABLE AS new_rows ",
                    table="settlements_caseplayer",
                    when="AFTER",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="compensation",
            trigger=pgtrigger.compiler.Trigger(
                name="final_when_approved",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    condition="WHEN (OLD.\"status\" = 'approved')",
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="22076a4b83ab9ffb4d6df394d974b1bce2d4269b",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_final_when_approved_b4336",
                    table="settlements_compensation",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="compensation",
            trigger=pgtrigger.compiler.Trigger(
                name="fixed_fields",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    condition='WHEN (OLD."case_id" IS DISTINCT FROM (NEW."case_id") OR OLD."currency" IS DISTINCT FROM (NEW."currency") OR OLD."reason" IS DISTINCT FROM (NEW."reason") OR OLD."proposed_by_id" IS DISTINCT FROM (NEW."proposed_by_id") OR OLD."proposed_at" IS DISTINCT FROM (NEW."proposed_at") OR OLD."totals" IS DISTINCT FROM (NEW."totals"))',
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;",
                    hash="b5f1e9d30731bf62fac684400ff4c2f68299689e",
                    operation="UPDATE",
                    pgid="pgtrigger_fixed_fields_41f35",
                    table="settlements_compensation",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="compensationitem",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="a43b7a7aa9c2acf2958f555f558cf75019717088",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_7f5cd",
                    table="settlements_compensationitem",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="event",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="c63fef18b1c6e211da670550c078135baa8a77df",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_13d3c",
                    table="settlements_event",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="historicalapitoken",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="94a93ba9a05b5748f27a321e6c5a2bd931b85d5c",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_973ad",
                    table="settlements_historicalapitoken",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="historicalcase",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="f5d8513cc8a5fc7084f92f75f73badcfe94a2f30",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_78245",
                    table="settlements_historicalcase",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="historicalcompensation",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="fd08821f61fc69c6a8db4376a480222fcd188016",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_d800f",
                    table="settlements_historicalcompensation",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="historicaldecision",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="ca0b718c005528a7fd8cfba9a7f6a14aa28ef34b",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_f9e71",
                    table="settlements_historicaldecision",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="historicalincident",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="2af8a2c5ef953b99af5e709deae3eb2ac81d5c8c",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_bd2fd",
                    table="settlements_historicalincident",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="historicalprizewithdrawal",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="650ac22befe868d0c03ebdf3fbcc60bf6ba3a0e8",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_32f29",
                    table="settlements_historicalprizewithdrawal",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="historicalreissue",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="abbbcf8f675eb6a169fa210e346def317ae0d14e",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_a5674",
                    table="settlements_historicalreissue",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="historicalsettlement",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="56d87386f6f50b2e6085bf35e08042fd4d7a4db9",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_45e6c",
                    table="settlements_historicalsettlement",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="historicaltournament",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="a3563924c023cb553f8643ae0414715fa52ca537",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_2650f",
                    table="settlements_historicaltournament",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="ledgerrelease",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="02fcd15ccac7796013090a86c5ff2f606b84213d",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_e2b8e",
                    table="settlements_ledgerrelease",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="paymentconfirmation",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="86ac3444a32d3d16979e5b2e5af6b883d0fca07a",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_d0634",
                    table="settlements_paymentconfirmation",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="reissue",
            trigger=pgtrigger.compiler.Trigger(
                name="final_when_approved",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    condition="WHEN (OLD.\"status\" = 'approved')",
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="555147877cf8f75ea04e4b5ad810ced9fca4ee1a",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_final_when_approved_a37ec",
                    table="settlements_reissue",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="reissue",
            trigger=pgtrigger.compiler.Trigger(
                name="fixed_fields",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    condition='WHEN (OLD."original_release_id" IS DISTINCT FROM (NEW."original_release_id") OR OLD."original_line_no" IS DISTINCT FROM (NEW."original_line_no") OR OLD."original_key" IS DISTINCT FROM (NEW."original_key") OR OLD."case_id" IS DISTINCT FROM (NEW."case_id") OR OLD."player" IS DISTINCT FROM (NEW."player") OR OLD."kind" IS DISTINCT FROM (NEW."kind") OR OLD."unit" IS DISTINCT FROM (NEW."unit") OR OLD."amount" IS DISTINCT FROM (NEW."amount") OR OLD."source" IS DISTINCT FROM (NEW."source") OR OLD."currency" IS DISTINCT FROM (NEW."currency") OR OLD."reason" IS DISTINCT FROM (NEW."reason") OR OLD."proposed_by_id" IS DISTINCT FROM (NEW."proposed_by_id") OR OLD."proposed_at" IS DISTINCT FROM (NEW."proposed_at"))',
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;",
                    hash="c61bc8602830f25c5e6276c4a0086d4728d065a2",
                    operation="UPDATE",
                    pgid="pgtrigger_fixed_fields_a643b",
                    table="settlements_reissue",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="settlement",
            trigger=pgtrigger.compiler.Trigger(
                name="keeps_rows",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func='IF TG_OP = \'UPDATE\' AND NEW.id = OLD.id THEN RETURN NEW; END IF; IF EXISTS (SELECT 1 FROM "settlements_settlementpayout" WHERE "settlement_id" = OLD.id) THEN RAISE EXCEPTION \'update or delete on table "%" violates the link from "settlements_settlementpayout"\', TG_TABLE_NAME USING ERRCODE = \'foreign_key_violation\', DETAIL = format(\'Key (id)=(%s) is still referenced from table "settlements_settlementpayout".\', OLD.id); END IF; IF EXISTS (SELECT 1 FROM "settlements_settlementline" WHERE "settlement_id" = OLD.id) THEN RAISE EXCEPTION \'update or delete on table "%" violates the link from "settlements_settlementline"\', TG_TABLE_NAME USING ERRCODE = \'foreign_key_violation\', DETAIL = format(\'Key (id)=(%s) is still referenced from table "settlements_settlementline".\', OLD.id); END IF; RETURN CASE WHEN TG_OP = \'DELETE\' THEN OLD ELSE NEW END;',
                    hash="795a8f3f9aaef768f993ba408a27d7395f3788be",
                    operation='DELETE OR UPDATE OF "id"',
                    pgid="pgtrigger_keeps_rows_1b91d",
                    table="settlements_settlement",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="settlement",
            trigger=pgtrigger.compiler.Trigger(
                name="final_when_approved",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    condition="WHEN (OLD.\"status\" = 'approved')",
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="3bf7a7a6718ae8e11cc2e5f8a52db8aedfd64d20",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_final_when_approved_22f2e",
                    table="settlements_settlement",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="settlement",
            trigger=pgtrigger.compiler.Trigger(
                name="fixed_fields",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    condition='WHEN (OLD."case_id" IS DISTINCT FROM (NEW."case_id") OR OLD."kind" IS DISTINCT FROM (NEW."kind") OR OLD."corrects_id" IS DISTINCT FROM (NEW."corrects_id") OR OLD."currency" IS DISTINCT FROM (NEW."currency") OR OLD."stage" IS DISTINCT FROM (NEW."stage") OR OLD."remedy" IS DISTINCT FROM (NEW."remedy") OR OLD."decision" IS DISTINCT FROM (NEW."decision") OR OLD."policy" IS DISTINCT FROM (NEW."policy") OR OLD."engine_version" IS DISTINCT FROM (NEW."engine_version") OR OLD."entrants" IS DISTINCT FROM (NEW."entrants") OR OLD."eliminated" IS DISTINCT FROM (NEW."eliminated") OR OLD."remaining" IS DISTINCT FROM (NEW."remaining") OR OLD."pool" IS DISTINCT FROM (NEW."pool") OR OLD."pool_distributed" IS DISTINCT FROM (NEW."pool_distributed") OR OLD."totals" IS DISTINCT FROM (NEW."totals") OR OLD."line_count" IS DISTINCT FROM (NEW."line_count") OR OLD."payout_count" IS DISTINCT FROM (NEW."payout_count") OR OLD."note" IS DISTINCT FROM (NEW."note") OR OLD."prepared_by_id" IS DISTINCT FROM (NEW."prepared_by_id") OR OLD."prepared_at" IS DISTINCT FROM (NEW."prepared_at"))',
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update rows from % table', TG_TABLE_NAME;",
                    hash="3db963c1ee75c31908d7778b1c1787f301649ed6",
                    operation="UPDATE",
                    pgid="pgtrigger_fixed_fields_96eb9",
                    table="settlements_settlement",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="settlementline",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="36357a49325c5dc628b9b4abc182abc8756ff7c0",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_88877",
                    table="settlements_settlementline",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="settlementline",
            trigger=pgtrigger.compiler.Trigger(
                name="rows_have_parent",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    declare="DECLARE orphan bigint;",
                    func='SELECT r.k INTO orphan FROM (SELECT DISTINCT "settlement_id" AS k FROM new_rows) AS r WHERE NOT EXISTS ( SELECT 1 FROM "settlements_settlement" AS p WHERE p."id" = r.k ) LIMIT 1; IF orphan IS NOT NULL THEN RAISE EXCEPTION \'insert on table "%" violates its link to "settlements_settlement"\', TG_TABLE_NAME USING ERRCODE = \'foreign_key_violation\', DETAIL = format(\'Key (settlement_id)=(%s) is not present in table "settlements_settlement".\', orphan); END IF; RETURN NULL;',
                    hash="6a3720b52573538a1252fc6397bd46433a00315e",
                    level="STATEMENT",
                    operation="INSERT",
                    pgid="pgtrigger_rows_have_parent_0f803",
                    referencing="REFERENCING NEW TABLE AS new_rows ",
                    table="settlements_settlementline",
                    when="AFTER",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="settlementpayout",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="ba8b090ec2ef4193b3c414ed48eaf80d864b7d66",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_2a8f5",
                    table="settlements_settlementpayout",
                    when="BEFORE",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="settlementpayout",
            trigger=pgtrigger.compiler.Trigger(
                name="rows_have_parent",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    declare="DECLARE orphan bigint;",
                    func='SELECT r.k INTO orphan FROM (SELECT DISTINCT "settlement_id" AS k FROM new_rows) AS r WHERE NOT EXISTS ( SELECT 1 FROM "settlements_settlement" AS p WHERE p."id" = r.k ) LIMIT 1; IF orphan IS NOT NULL THEN RAISE EXCEPTION \'insert on table "%" violates its link to "settlements_settlement"\', TG_TABLE_NAME USING ERRCODE = \'foreign_key_violation\', DETAIL = format(\'Key (settlement_id)=(%s) is not present in table "settlements_settlement".\', orphan); END IF; RETURN NULL;',
                    hash="7fd7509af7348ba55c1337d716fd89625ca1ecc5",
                    level="STATEMENT",
                    operation="INSERT",
                    pgid="pgtrigger_rows_have_parent_c9bc3",
                    referencing="REFERENCING NEW TABLE AS new_rows ",
                    table="settlements_settlementpayout",
                    when="AFTER",
                ),
            ),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name="snapshot",
            trigger=pgtrigger.compiler.Trigger(
                name="write_once",
                sql=pgtrigger.compiler.UpsertTriggerSql(
                    func="RAISE EXCEPTION 'pgtrigger: Cannot update or delete rows from % table', TG_TABLE_NAME;",
                    hash="bd75d4775d8914b5dbfd5d7547efa7dc9586540b",
                    operation="UPDATE OR DELETE",
                    pgid="pgtrigger_write_once_ee889",
                    table="settlements_snapshot",
                    when="BEFORE",
                ),
            ),
        ),
    ]
