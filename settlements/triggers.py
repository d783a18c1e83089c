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


def _sql_list(values) -> str:
    return ", ".join("'" + value.replace("'", "''") + "'" for value in sorted(values))


class FollowsWorkflow(pgtrigger.Trigger):
    """A record with an approval is written only in a state it starts in, moves only as the
    workflow moves it (``flow``, a ``settlements.workflow.Flow``: derived from the moves the
    services make, not restated here), and is approved only by someone other than its
    ``preparer``. Error 23514 (check_violation), so Django reports an IntegrityError.

    A new approvable record joins by declaring its ``Flow`` in settlements.workflow and listing
    ``FollowsWorkflow(flow=..., preparer=...)`` in its ``Meta.triggers`` (with ``approved_by``).
    """

    when = pgtrigger.Before
    operation = pgtrigger.Insert | pgtrigger.Update

    def __init__(self, *, flow, preparer: str, approver: str = "approved_by", **kwargs):
        self.flow, self.preparer, self.approver = flow, preparer, approver
        super().__init__(name="follows_workflow", **kwargs)

    def get_func(self, model):
        preparer = model._meta.get_field(self.preparer).column
        approver = model._meta.get_field(self.approver).column
        moves = " OR ".join(
            f"(OLD.status = '{source}' AND NEW.status = '{target}')"
            for source, target in sorted(self.flow.moves)
        )
        return self.format_sql(f"""
            IF TG_OP = 'INSERT' AND NEW.status NOT IN ({_sql_list(self.flow.first)}) THEN
                RAISE EXCEPTION 'a new row of "%" starts as %, not %', TG_TABLE_NAME,
                    '{"/".join(sorted(self.flow.first))}', NEW.status
                    USING ERRCODE = 'check_violation';
            END IF;
            IF TG_OP = 'UPDATE' AND NEW.status IS DISTINCT FROM OLD.status AND NOT ({moves}) THEN
                RAISE EXCEPTION 'no move of "%" leads from % to %', TG_TABLE_NAME, OLD.status,
                    NEW.status USING ERRCODE = 'check_violation';
            END IF;
            IF NEW.status = 'approved' AND (
                NEW."{approver}" IS NULL OR NEW."{approver}" = NEW."{preparer}"
            ) THEN
                RAISE EXCEPTION 'a row of "%" is approved by someone other than its preparer',
                    TG_TABLE_NAME USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        """)


# Whether the event row ``e`` was written by the transaction in progress: its row's transaction
# (xmin, widened to a full transaction id in the current epoch) is still in progress, which for
# a row we can see only our own can be.
_WRITTEN_BY_THIS_TRANSACTION = """pg_xact_status((
                          ((pg_current_xact_id()::text::bigint >> 32) << 32)
                          | e.xmin::text::bigint
                      )::text::xid8) = 'in progress'"""


class ReleasedOnApproval(pgtrigger.Trigger):
    """A ledger release hands over the lines of an approved record only, and only in the
    transaction that writes the record's approval event: at commit (deferred, as the service
    writes the release before the event that seals it), the record is approved and an event
    ``<record>_approved`` about it was written by this transaction (its row's transaction is
    still in progress, which only our own can be for a row we see). One release a record is
    the one-to-one links' unique keys. Error 23514 (check_violation).

    ``links``: (the release's link to the record, the type of the event approving it). A new
    approvable record with lines joins by a link of its own here.
    """

    when = pgtrigger.After
    operation = pgtrigger.Insert
    timing = pgtrigger.Deferred
    declare = [("problem", "text")]

    def __init__(self, *, links: tuple[tuple[str, str], ...], event_table: str, **kw):
        self.links, self.event_table = links, event_table
        super().__init__(name="released_on_approval", **kw)

    def get_func(self, model):
        fields = [(model._meta.get_field(link), event_type) for link, event_type in self.links]
        linked = [
            (
                field.column,
                field.related_model._meta.db_table,
                field.related_model._meta.model_name,
                event_type,
            )
            for field, event_type in fields
        ]
        checks = "".join(
            f"""
            IF NEW."{column}" IS NOT NULL THEN
                IF NOT EXISTS (
                    SELECT 1 FROM "{table}" WHERE id = NEW."{column}" AND status = 'approved'
                ) THEN
                    problem := '{subject} ' || NEW."{column}" || ' is not approved';
                ELSIF NOT EXISTS (
                    SELECT 1 FROM "{self.event_table}" AS e
                    WHERE e.subject_type = '{subject}' AND e.subject_id = NEW."{column}"
                      AND e.type = '{event_type}'
                      AND {_WRITTEN_BY_THIS_TRANSACTION}
                ) THEN
                    problem := '{subject} ' || NEW."{column}"
                        || ' has no approval event written with its release';
                END IF;
            END IF;"""
            for column, table, subject, event_type in linked
        )
        return self.format_sql(f"""
            {checks}
            IF problem IS NOT NULL THEN
                RAISE EXCEPTION 'release % refused: %', NEW.id, problem
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NULL;
        """)


class ReleaseMatchesLines(pgtrigger.Trigger):
    """A ledger release's count and totals are its record's lines: at commit (deferred, as a
    job's batch writes its releases at its end), ``line_count`` is the number of the record's
    lines and ``totals`` their signed sums by unit, units summing to nothing left out (as
    ``services.payments.release_lines`` writes them), and the release's case is the record's.
    Error 23514 (check_violation).

    ``lines``: per link of the release to a record, SQL selecting that record's lines as
    (unit, signed amount) for the record ``NEW."<link>_id"``, and the record's table.
    """

    when = pgtrigger.After
    operation = pgtrigger.Insert
    timing = pgtrigger.Deferred
    declare = [("found_count", "bigint"), ("found_totals", "jsonb"), ("found_case", "bigint")]

    def __init__(self, *, lines: tuple[tuple[str, str], ...], **kwargs):
        self.lines = lines
        # Named to come after released_on_approval (PostgreSQL fires them by name): a release for a
        # record not approved is refused as such before its lines are summed.
        super().__init__(name="released_with_its_lines", **kwargs)

    def get_func(self, model):
        branches = []
        for link, select in self.lines:
            field = model._meta.get_field(link)
            table = field.related_model._meta.db_table
            branches.append(f"""
            IF NEW."{field.column}" IS NOT NULL THEN
                SELECT case_id INTO found_case FROM "{table}" WHERE id = NEW."{field.column}";
                SELECT coalesce(sum(n), 0), coalesce(
                    jsonb_object_agg(unit, total) FILTER (WHERE total <> 0), '{{}}'::jsonb
                ) INTO found_count, found_totals
                FROM (
                    SELECT unit, sum(amount) AS total, count(*) AS n
                    FROM ({select.format(record=f'NEW."{field.column}"')}) AS lines
                    GROUP BY unit
                ) AS by_unit;
            END IF;""")
        return self.format_sql(f"""
            {"".join(branches)}
            IF found_count IS DISTINCT FROM NEW.line_count::bigint THEN
                RAISE EXCEPTION 'release % refused: % lines, its record has %', NEW.id,
                    NEW.line_count, found_count USING ERRCODE = 'check_violation';
            END IF;
            IF found_totals IS DISTINCT FROM NEW.totals::jsonb THEN
                RAISE EXCEPTION 'release % refused: totals % are not its lines'' %', NEW.id,
                    NEW.totals, found_totals USING ERRCODE = 'check_violation';
            END IF;
            IF found_case IS DISTINCT FROM NEW.case_id THEN
                RAISE EXCEPTION 'release % refused: its case is not its record''s', NEW.id
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NULL;
        """)


class AccountedByEvent(pgtrigger.Trigger):
    """A row that decides who may act (a group membership, a user's flags, an API token) is
    written only in a transaction that also writes an event about it: at commit (deferred, as
    Django sends the signal that records the event after the row is written), an event of one
    of ``event_types`` whose subject is the row's ``subject`` (a column of the row; its
    ``subject_type``) was written by this transaction. The services, the admin and the
    management commands write such rows in one transaction with their event
    (services.access_changes, services.tokens); SQL sent any other way is refused.
    Error 23514 (check_violation).
    """

    when = pgtrigger.After
    timing = pgtrigger.Deferred

    def __init__(
        self,
        *,
        name: str,
        subject: str,
        subject_type: str,
        event_types: tuple[str, ...],
        event_table: str,
        **kwargs,
    ):
        self.subject, self.subject_type = subject, subject_type
        self.event_types, self.event_table = event_types, event_table
        super().__init__(name=name, **kwargs)

    def get_func(self, model):
        column = model._meta.get_field(self.subject).column
        return self.format_sql(f"""
            IF NOT EXISTS (
                SELECT 1 FROM "{self.event_table}" AS e
                WHERE e.subject_type = '{self.subject_type}'
                  AND e.subject_id = (CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END)."{column}"
                  AND e.type IN ({_sql_list(self.event_types)})
                  AND {_WRITTEN_BY_THIS_TRANSACTION}
            ) THEN
                RAISE EXCEPTION '% on "%" refused: no event in its transaction records it',
                    TG_OP, TG_TABLE_NAME USING ERRCODE = 'check_violation';
            END IF;
            RETURN NULL;
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
