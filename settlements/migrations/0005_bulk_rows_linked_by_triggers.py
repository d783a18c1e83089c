"""The bulk rows' links to their parents, checked per statement instead of per row.

PostgreSQL checks a foreign key with one query per inserted row; for the 810,000 ledger lines
of a large settlement that doubled the time to write them. These triggers do the same job
with one query per statement (a whole COPY), and keep a parent with rows from being deleted
or renumbered. Error code 23503 (foreign_key_violation), as a foreign key would raise, so
Django reports an IntegrityError. On SQLite (development only) the links are not checked.
"""

import django.db.models.deletion
from django.db import migrations, models

# (child table, column holding the parent's id, parent table)
LINKS = (
    ("settlements_caseplayer", "case_id", "settlements_case"),
    ("settlements_settlementpayout", "settlement_id", "settlements_settlement"),
    ("settlements_settlementline", "settlement_id", "settlements_settlement"),
)
PARENTS = ("settlements_case", "settlements_settlement")

CHILD_CHECK = """
CREATE FUNCTION crashdesk_rows_have_parent() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    orphan bigint;
BEGIN
    -- TG_ARGV: the column holding the parent's id, the parent table.
    EXECUTE format(
        'SELECT r.k FROM (SELECT DISTINCT %1$I AS k FROM crashdesk_rows) AS r '
        'WHERE NOT EXISTS (SELECT 1 FROM %2$I AS p WHERE p.id = r.k) LIMIT 1',
        TG_ARGV[0], TG_ARGV[1]
    ) INTO orphan;
    IF orphan IS NOT NULL THEN
        RAISE EXCEPTION 'insert or update on table "%" violates its link to "%"',
            TG_TABLE_NAME, TG_ARGV[1]
            USING ERRCODE = 'foreign_key_violation',
                  DETAIL = format('Key (%s)=(%s) is not present in table "%s".',
                                  TG_ARGV[0], orphan, TG_ARGV[1]);
    END IF;
    RETURN NULL;
END
$$;
"""

PARENT_CHECK = """
CREATE FUNCTION crashdesk_parent_keeps_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    i integer := 0;
    referenced boolean;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN
        RETURN NEW;
    END IF;
    -- TG_ARGV: pairs of (child table, column holding this table's id).
    WHILE i < TG_NARGS LOOP
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I WHERE %I = $1)', TG_ARGV[i], TG_ARGV[i + 1])
            INTO referenced USING OLD.id;
        IF referenced THEN
            RAISE EXCEPTION 'update or delete on table "%" violates the link from "%"',
                TG_TABLE_NAME, TG_ARGV[i]
                USING ERRCODE = 'foreign_key_violation',
                      DETAIL = format('Key (id)=(%s) is still referenced from table "%s".',
                                      OLD.id, TG_ARGV[i]);
        END IF;
        i := i + 2;
    END LOOP;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$$;
"""


def _statements() -> list[str]:
    statements = [CHILD_CHECK, PARENT_CHECK]
    for child, column, parent in LINKS:
        # A trigger with transition tables serves one event, hence one for each.
        for event in ("INSERT", "UPDATE"):
            statements.append(
                f"CREATE TRIGGER {child}_parent_{event.lower()} AFTER {event} ON {child} "
                "REFERENCING NEW TABLE AS crashdesk_rows FOR EACH STATEMENT "
                f"EXECUTE FUNCTION crashdesk_rows_have_parent('{column}', '{parent}')"
            )
    for parent in PARENTS:
        arguments = ", ".join(
            f"'{child}', '{column}'" for child, column, linked in LINKS if linked == parent
        )
        statements.append(
            f"CREATE TRIGGER {parent}_keeps_rows BEFORE DELETE OR UPDATE OF id ON {parent} "
            f"FOR EACH ROW EXECUTE FUNCTION crashdesk_parent_keeps_rows({arguments})"
        )
    return statements


def create_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in _statements():
            # No parameters: the % signs belong to plpgsql, not to the driver.
            schema_editor.execute(statement, params=None)


def drop_triggers(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for child, _, _ in LINKS:
            for event in ("insert", "update"):
                schema_editor.execute(f"DROP TRIGGER {child}_parent_{event} ON {child}")
        for parent in PARENTS:
            schema_editor.execute(f"DROP TRIGGER {parent}_keeps_rows ON {parent}")
        schema_editor.execute("DROP FUNCTION crashdesk_rows_have_parent()")
        schema_editor.execute("DROP FUNCTION crashdesk_parent_keeps_rows()")


def _link(related_name: str, to: str):
    return models.ForeignKey(
        db_constraint=False,
        db_index=False,
        on_delete=django.db.models.deletion.PROTECT,
        related_name=related_name,
        to=to,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("settlements", "0004_apitoken_prefix"),
    ]

    operations = [
        migrations.AlterField(
            model_name="caseplayer", name="case", field=_link("entries", "settlements.case")
        ),
        migrations.AlterField(
            model_name="settlementline",
            name="settlement",
            field=_link("lines", "settlements.settlement"),
        ),
        migrations.AlterField(
            model_name="settlementpayout",
            name="settlement",
            field=_link("payouts", "settlements.settlement"),
        ),
        migrations.RunPython(create_triggers, drop_triggers),
    ]
