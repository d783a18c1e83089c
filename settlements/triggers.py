"""The database's own guard over the record, as django-pgtrigger triggers (PostgreSQL only).

The services never rewrite what they wrote once, and the screens offer no way to; these
triggers make PostgreSQL refuse it too, whoever connects and whatever SQL they send, so that the
record does not depend on every writer behaving. Models list them in ``Meta.triggers`` and the
migrations install them; on SQLite (quick start only) pgtrigger installs nothing.

- ``write_once()``: rows written once (snapshots, entrants, payouts, ledger lines, compensation
  items, events, ledger releases, payment confirmations, every history version) refuse UPDATE
  and DELETE.
- ``final_when_approved()`` and ``fixed_fields()``: an approved settlement, compensation or
  re-issue refuses every change, and what the engine or the proposer wrote never changes.
- ``RowsHaveParent`` and ``KeepsRows``: the bulk rows' links to their case or settlement, checked
  once per statement instead of once per row (a foreign key's cost on a 300,000-row COPY);
  ``RowsRecordedInBatch`` likewise for a batch of payment confirmations.

TRUNCATE fires no row trigger; the app's database role is not granted it (``grant_app_role``).
"""

import pgtrigger
from simple_history.manager import HistoricalQuerySet, HistoryManager
from simple_history.models import HistoricalRecords

# pgtrigger lets a session skip a trigger by setting the pgtrigger.ignore variable, which any
# role may set. Only the owner of the tables (who could drop the triggers anyway) may use it:
# ``harden_ignore`` rewrites pgtrigger's function after every migration (see apps.py).
IGNORE_FUNCTION = '"public"._pgtrigger_should_ignore'
HARDENED_IGNORE = f"""
CREATE OR REPLACE FUNCTION {IGNORE_FUNCTION}(trigger_name NAME) RETURNS BOOLEAN AS $$
DECLARE
    ignored TEXT[];
BEGIN
    BEGIN
        SELECT INTO ignored CURRENT_SETTING('pgtrigger.ignore');
    EXCEPTION WHEN OTHERS THEN
    END;
    IF ignored IS NULL OR NOT (trigger_name = ANY(ignored)) THEN
        RETURN FALSE;
    END IF;
    RETURN pg_has_role(
        current_user,
        (SELECT proowner FROM pg_proc WHERE oid = '{IGNORE_FUNCTION}(name)'::regprocedure),
        'MEMBER'
    );
END;
$$ LANGUAGE plpgsql
"""


def harden_ignore(connection) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT to_regprocedure(%s)", [f"{IGNORE_FUNCTION}(name)"])
            if cursor.fetchone()[0] is not None:
                cursor.execute(HARDENED_IGNORE, None)


def may_lift_triggers(connection) -> bool:
    """Whether this connection's role may skip a trigger through pgtrigger.ignore: the tables'
    owner (see HARDENED_IGNORE). On SQLite there are no triggers to skip."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_has_role(current_user, proowner, 'MEMBER') FROM pg_proc"
            " WHERE oid = to_regprocedure(%s)",
            [f"{IGNORE_FUNCTION}(name)"],
        )
        row = cursor.fetchone()
    return bool(row and row[0])


def write_once() -> pgtrigger.Protect:
    return pgtrigger.Protect(name="write_once", operation=pgtrigger.Update | pgtrigger.Delete)


def final_when_approved() -> pgtrigger.Protect:
    """No workflow move starts from "approved" (settlements.workflow): a correction is a new
    linked record, never an edit."""
    return pgtrigger.Protect(
        name="final_when_approved",
        operation=pgtrigger.Update | pgtrigger.Delete,
        condition=pgtrigger.Q(old__status="approved"),
    )


def fixed_fields(*fields: str) -> pgtrigger.ReadOnly:
    return pgtrigger.ReadOnly(name="fixed_fields", fields=list(fields))


class RowsHaveParent(pgtrigger.Trigger):
    """After an INSERT (a whole COPY included), one query checks every new row's parent.

    Error 23503 (foreign_key_violation), as a foreign key would raise, so Django reports an
    IntegrityError. Updates need no check: the rows are write-once.
    """

    when = pgtrigger.After
    operation = pgtrigger.Insert
    level = pgtrigger.Statement
    referencing = pgtrigger.Referencing(new="new_rows")
    declare = [("orphan", "bigint")]

    def __init__(self, *, link: str, **kwargs):
        self.link = link
        super().__init__(name="rows_have_parent", **kwargs)

    def get_func(self, model):
        field = model._meta.get_field(self.link)
        parent = field.related_model._meta
        column, table = field.column, parent.db_table
        return self.format_sql(f"""
            SELECT r.k INTO orphan FROM (SELECT DISTINCT "{column}" AS k FROM new_rows) AS r
            WHERE NOT EXISTS (
                SELECT 1 FROM "{table}" AS p WHERE p."{parent.pk.column}" = r.k
            ) LIMIT 1;
            IF orphan IS NOT NULL THEN
                RAISE EXCEPTION 'insert on table "%" violates its link to "{table}"', TG_TABLE_NAME
                    USING ERRCODE = 'foreign_key_violation',
                          DETAIL = format('Key ({column})=(%s) is not present in table "{table}".',
                                          orphan);
            END IF;
            RETURN NULL;
        """)


class RowsRecordedInBatch(pgtrigger.Trigger):
    """After an INSERT, one query per link instead of a foreign-key check per row (three per
    payment confirmation, which made up most of PostgreSQL's time for a batch of a thousand):
    every new row's ``parent`` exists, and its ``batch`` (a business event) exists with the
    row's ``recorder`` as its actor.

    Nothing guards the other side: the parent and the event are write-once, never deleted or
    renumbered; the recorder is the event's actor, whose own foreign key keeps the user.
    Error 23503 (foreign_key_violation), as a foreign key would raise.
    """

    when = pgtrigger.After
    operation = pgtrigger.Insert
    level = pgtrigger.Statement
    referencing = pgtrigger.Referencing(new="new_rows")
    declare = [("problem", "text")]

    def __init__(self, *, parent: str, batch: str, recorder: str, **kwargs):
        self.parent, self.batch, self.recorder = parent, batch, recorder
        super().__init__(name="rows_recorded_in_batch", **kwargs)

    def get_func(self, model):
        parent = model._meta.get_field(self.parent)
        batch = model._meta.get_field(self.batch)
        recorder = model._meta.get_field(self.recorder).column
        parent_table, batch_table = (
            parent.related_model._meta.db_table,
            batch.related_model._meta.db_table,
        )
        actor = batch.related_model._meta.get_field("actor").column
        return self.format_sql(f"""
            SELECT format('Key ({parent.column})=(%s) is not present in table "{parent_table}".',
                          r.k)
            INTO problem
            FROM (SELECT DISTINCT "{parent.column}" AS k FROM new_rows) AS r
            WHERE NOT EXISTS (SELECT 1 FROM "{parent_table}" AS p WHERE p."id" = r.k) LIMIT 1;
            IF problem IS NULL THEN
                SELECT format(
                    'Key ({batch.column}, {recorder})=(%s, %s) is not present in table '
                    || '"{batch_table}" as (id, {actor}).', r.e, r.u
                )
                INTO problem
                FROM (SELECT DISTINCT "{batch.column}" AS e, "{recorder}" AS u FROM new_rows) AS r
                WHERE NOT EXISTS (
                    SELECT 1 FROM "{batch_table}" AS b WHERE b."id" = r.e AND b."{actor}" = r.u
                ) LIMIT 1;
            END IF;
            IF problem IS NOT NULL THEN
                RAISE EXCEPTION 'insert on table "%" violates its links', TG_TABLE_NAME
                    USING ERRCODE = 'foreign_key_violation', DETAIL = problem;
            END IF;
            RETURN NULL;
        """)


class KeepsRows(pgtrigger.Trigger):
    """A parent that has bulk rows is neither deleted nor renumbered (what the foreign key's
    own check did), row by row: parents are deleted rarely and one at a time."""

    when = pgtrigger.Before
    operation = pgtrigger.Delete | pgtrigger.UpdateOf("id")

    def __init__(self, *, children: tuple[tuple[str, str], ...], **kwargs):
        self.children = children  # (child table, column holding this table's id)
        super().__init__(name="keeps_rows", **kwargs)

    def get_func(self, model):
        checks = "".join(
            f"""
            IF EXISTS (SELECT 1 FROM "{table}" WHERE "{column}" = OLD.id) THEN
                RAISE EXCEPTION 'update or delete on table "%" violates the link from "{table}"',
                    TG_TABLE_NAME
                    USING ERRCODE = 'foreign_key_violation',
                          DETAIL = format('Key (id)=(%s) is still referenced from table "{table}".',
                                          OLD.id);
            END IF;"""
            for table, column in self.children
        )
        return self.format_sql(f"""
            IF TG_OP = 'UPDATE' AND NEW.id = OLD.id THEN
                RETURN NEW;
            END IF;
            {checks}
            RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
        """)


class VersionManager(HistoryManager.from_queryset(HistoricalQuerySet)):
    """simple-history's manager of versions, its queryset methods included, as one class.

    simple-history's descriptor asks ``from_queryset`` for the manager class on every access,
    and it reads that manager for every version it writes: Django then builds a new class
    (0.4 to 1.4 ms, inspecting every queryset method), twice per item of a bulk job. Asked for the
    class it already is, this one answers itself.
    """

    @classmethod
    def from_queryset(cls, queryset_class, class_name=None):
        if queryset_class is HistoricalQuerySet and class_name is None:
            return cls
        return super().from_queryset(queryset_class, class_name)


class WriteOnceHistory(HistoricalRecords):
    """simple-history's versions, write-once like the other records: a version is the trace of
    a change, so editing or deleting it would erase the trace."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("history_manager", VersionManager)
        super().__init__(*args, **kwargs)

    def get_meta_options(self, model):
        return {**super().get_meta_options(model), "triggers": [write_once()]}
