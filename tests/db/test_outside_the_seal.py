"""What issue 41 found outside the seal, tried both ways an intruder could: as the app's own
database role with every trigger on, and as the tables' owner with the triggers off; each
named by `verify_audit`, with and without the exported head, or refused by PostgreSQL.

- a ledger release whose totals, count or case are not its record's lines;
- a case's state moved with no event (an approved case back to `ready`), a tournament's fixed
  fields (`operator_id`, `currency`, `buy_in`), a history version slipped in after the last
  event, and the sweep that seals such versions;
- a statement's figures, an ICM run's seed, a job's outcome.
"""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from settlements.models import Event, IcmValuation, Job, LedgerRelease
from settlements.services import jobs
from settlements.services.history_sweep import history_sweep
from tests.db.conftest import (
    behind_the_apps_back,
    execute,
    postgresql_only,
    refused,
    refused_at_commit,
)
from tests.services.helpers import approved, load

pytestmark = [pytest.mark.django_db, postgresql_only]

OWNER = "owner, triggers off"
APP = "app role, triggers on"


@pytest.fixture(params=[False, True], ids=["without --head", "with --head"])
def head(request, tmp_path):
    """Verifies the desk as it is and exports its head; then a verification, with the exported
    head or without, whose failure ``named`` reads."""
    exported = tmp_path / "head.json"

    def named() -> str:
        with pytest.raises(CommandError) as caught:
            call_command(
                "verify_audit",
                **({"head": str(exported)} if request.param else {}),
                stdout=StringIO(),
            )
        return str(caught.value)

    named.export = lambda: call_command(
        "verify_audit", export_head=str(exported), stdout=StringIO()
    )
    return named


def tamper(sql: str, *, by: str, app_role: str) -> None:
    """``sql`` run as the owner with every trigger off, or as the app's role (which must be let
    through: what the database refuses is tried in the tests of refusals)."""
    if by == OWNER:
        assert behind_the_apps_back(sql) >= 1
        triggers_on()
    else:
        connection.check_constraints()
        execute(f'SET ROLE "{app_role}"')
        try:
            assert execute(sql) >= 1
        finally:
            execute("RESET ROLE")


def triggers_on() -> None:
    """Back to the triggers after ``behind_the_apps_back``: its SET LOCAL outlives the savepoint
    for the rest of the test's transaction."""
    execute("SET LOCAL session_replication_role = origin")


@pytest.fixture
def settled(users, snapshot_factory):
    # Late with 20 entrants: valued exactly by ICM when prepared.
    return approved(
        users["operator"], users["tournament_manager"], snapshot_factory, stage="late", entrants=20
    )


# --- Releases: totals equal to their lines ---------------------------------------------------


def _release_again(settlement, **changes) -> str:
    """SQL writing the settlement's release again (its first one removed behind the app's
    back), with ``changes``: in this test's transaction its approval event counts as written
    with it, so only the lines' check is left to refuse it."""
    release = LedgerRelease.objects.get(settlement=settlement)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT to_jsonb(r)::text FROM settlements_ledgerrelease AS r WHERE id = %s",
            [release.pk],
        )
        row = cursor.fetchone()[0]
    execute("SET CONSTRAINTS ALL IMMEDIATE")
    behind_the_apps_back(
        f"DELETE FROM settlements_paymenttally WHERE release_id = {release.pk};"
        f" DELETE FROM settlements_ledgerrelease WHERE id = {release.pk}"
    )
    triggers_on()
    execute("SET CONSTRAINTS ALL DEFERRED")
    values = ", ".join(f"'{name}', {value}" for name, value in changes.items())
    return (
        "INSERT INTO settlements_ledgerrelease SELECT (jsonb_populate_record("
        f"NULL::settlements_ledgerrelease, '{row}'::jsonb || jsonb_build_object({values}))).*"
    )


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"totals": "'{\"cash\": 1}'::jsonb"}, "are not its lines"),
        ({"totals": "'{}'::jsonb"}, "are not its lines"),
        (
            {"line_count": "line_count + 1", "last_position": "last_position + 1"},
            "lines, its record has",
        ),
    ],
    ids=["totals changed", "totals emptied", "a line more"],
)
def test_a_release_is_accepted_only_with_totals_equal_to_its_lines(
    app_role, settled, changes, words
):
    release = LedgerRelease.objects.get(settlement=settled)
    columns = {
        "line_count": release.line_count + 1,
        "last_position": release.last_position + 1,
    }
    changes = {k: columns.get(k, v) for k, v in changes.items()}
    assert words in refused_at_commit(_release_again(settled, **changes), role=app_role)


def test_the_same_release_written_again_is_accepted(app_role, settled):
    """The check refuses what differs, not a release as the service writes it."""
    sql = _release_again(settled)
    execute(f'SET ROLE "{app_role}"')
    try:
        execute(sql)
        execute("SET CONSTRAINTS ALL IMMEDIATE")
    finally:
        execute("RESET ROLE")


# --- Rows that are not their history, versions no event accounts for -------------------------


@pytest.mark.parametrize("by", [OWNER, APP])
@pytest.mark.parametrize(
    ("sql", "table", "words"),
    [
        (
            "UPDATE settlements_case SET status = 'ready' WHERE id = {case}",
            "settlements_case",
            "status",
        ),
        (
            "UPDATE settlements_tournament SET operator_id = operator_id || 'X' "
            "WHERE id = {tournament}",
            "settlements_tournament",
            "operator_id",
        ),
        (
            "UPDATE settlements_tournament SET currency = CASE currency WHEN 'USD' THEN 'EUR'"
            " ELSE 'USD' END WHERE id = {tournament}",
            "settlements_tournament",
            "currency",
        ),
        (
            "UPDATE settlements_tournament SET buy_in = coalesce(buy_in, 0) + 100 "
            "WHERE id = {tournament}",
            "settlements_tournament",
            "buy_in",
        ),
    ],
    ids=["an approved case back to ready", "operator_id", "currency", "buy_in"],
)
def test_a_row_changed_without_its_version_is_named(app_role, settled, head, sql, table, words, by):
    case = settled.case
    head.export()
    tamper(sql.format(case=case.pk, tournament=case.tournament_id), by=by, app_role=app_role)
    message = head()
    pk = case.pk if table == "settlements_case" else case.tournament_id
    assert f"The record is not its history: {table} row {pk}, whose" in message, message
    assert words in message


_VERSION_AGAIN = (
    "INSERT INTO settlements_historicalcase SELECT (jsonb_populate_record("
    "NULL::settlements_historicalcase, to_jsonb(v) || jsonb_build_object("
    "'history_id', (SELECT max(history_id) + 1 FROM settlements_historicalcase),"
    " 'history_change_reason', 'slipped in'))).* FROM settlements_historicalcase AS v"
    " WHERE history_id = (SELECT max(history_id) FROM settlements_historicalcase"
    " WHERE id = {case})"
)


@pytest.mark.parametrize("by", [OWNER, APP])
def test_a_version_slipped_in_after_the_last_event_is_named_until_swept(
    app_role, settled, head, by
):
    """A version of a case added after the last event about it is loose, named by table and
    key, until the sweep seals it: then it is on the record, and what the sweep stops is
    changing it afterwards."""
    case = settled.case
    head.export()
    tamper(_VERSION_AGAIN.format(case=case.pk), by=by, app_role=app_role)
    version = case.history.order_by("-history_id").values_list("history_id", flat=True)[0]
    loose = f"settlements_historicalcase version {version} (case #{case.pk})"
    assert f"No event accounts for {loose}" in head()
    call_command("seal_loose_versions", stdout=StringIO())
    swept = Event.objects.get(type=Event.Type.HISTORY_SWEPT)
    assert swept.actor is None and swept.data == {"records": {"case": 1}}
    assert swept.subject_facts["history"][f"case:{case.pk}"][0] == version
    call_command("verify_audit", stdout=StringIO())
    behind_the_apps_back(
        f"UPDATE settlements_historicalcase SET history_change_reason = 'x' "
        f"WHERE history_id = {version}"
    )
    message = head()
    assert message.startswith(f"Event #{swept.pk} (number {swept.seq}, history_swept,"), message
    assert f"history of case #{case.pk}" in message


def test_the_sweep_writes_nothing_when_every_version_is_sealed(settled):
    output = StringIO()
    call_command("seal_loose_versions", stdout=output)
    assert "No loose history versions" in output.getvalue()
    assert not Event.objects.filter(type=Event.Type.HISTORY_SWEPT).exists()


def test_a_version_written_outside_the_services_is_sealed_by_the_sweep(users, settled):
    """An administrator's edit through Django (a version with its user, no event)."""
    settled.case.incident.save()  # as the admin's save of an unchanged form would
    with pytest.raises(CommandError, match="settlements_historicalincident version"):
        call_command("verify_audit", stdout=StringIO())
    event = history_sweep(actor=users["tournament_manager"])
    assert event.data == {"records": {"incident": 1}}
    call_command("verify_audit", stdout=StringIO())


# --- Statement figures, ICM runs, jobs' outcomes -----------------------------------------------


def test_an_approved_settlements_statement_figures_are_refused_to_the_app(app_role, settled):
    sql = f"UPDATE settlements_settlement SET basis = '{{}}' WHERE id = {settled.pk}"
    assert "final_when_approved" in refused(sql, role=app_role)


def test_statement_figures_changed_are_named(settled, head):
    head.export()
    behind_the_apps_back(
        "UPDATE settlements_settlement SET basis = basis || '{\"tampered\": 1}'::jsonb "
        f"WHERE id = {settled.pk}"
    )
    prepared = Event.objects.get(type="settlement_prepared", subject_id=settled.pk)
    message = head()
    assert message.startswith(f"Event #{prepared.pk} "), message
    assert "basis" in message


def test_an_icm_runs_seed_is_refused_to_the_app(app_role, settled):
    valuation = IcmValuation.objects.get(settlement=settled)
    sql = f"UPDATE settlements_icmvaluation SET seed = 42 WHERE id = {valuation.pk}"
    assert "settlements_icmvaluation" in refused(sql, role=app_role)


def test_an_icm_runs_seed_changed_is_named(settled, head):
    valuation = IcmValuation.objects.get(settlement=settled)
    assert valuation.method == "exact"
    head.export()
    behind_the_apps_back(
        "UPDATE settlements_icmvaluation SET method = 'sampled', seed = 42, samples = 1000 "
        f"WHERE id = {valuation.pk}"
    )
    prepared = Event.objects.get(type="settlement_prepared", subject_id=settled.pk)
    message = head()
    assert message.startswith(f"Event #{prepared.pk} "), message
    assert "icm_run" in message


@pytest.fixture
def finished_job(users, snapshot_factory):
    operator = users["operator"]
    case = load(operator, snapshot_factory, stage="middle")
    job = jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target=f"case:{case.pk}",
        items=[jobs.NewItem(key=str(case.pk), label=str(case))],
    )
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    return job


def test_a_job_ends_with_an_event_sealing_its_outcome(finished_job):
    event = Event.objects.get(type=Event.Type.JOB_FINISHED, subject_id=finished_job.pk)
    assert event.data == {"kind": "prepare", "status": "done"}
    assert event.subject_facts["outcome"]["items"] == 1
    call_command("verify_audit", stdout=StringIO())


@pytest.mark.parametrize("by", [OWNER, APP])
@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE settlements_job SET status = 'failed', error = 'x' WHERE id = {job}",
        "UPDATE settlements_jobitem SET status = 'skipped' WHERE job_id = {job}",
    ],
    ids=["the job's status", "an item's outcome"],
)
def test_a_jobs_outcome_changed_is_named(app_role, finished_job, head, sql, by):
    head.export()
    tamper(sql.format(job=finished_job.pk), by=by, app_role=app_role)
    event = Event.objects.get(type=Event.Type.JOB_FINISHED, subject_id=finished_job.pk)
    message = head()
    assert message.startswith(f"Event #{event.pk} "), message
    assert "outcome" in message


# --- Tallies, as the app's role too -------------------------------------------------------------


def test_a_tally_changed_by_the_apps_role_is_counted_afresh(app_role, settled, head):
    head.export()
    release = LedgerRelease.objects.get(settlement=settled)
    tamper(
        "UPDATE settlements_paymenttally SET paid_lines = paid_lines + 1 "
        f"WHERE release_id = {release.pk}",
        by=APP,
        app_role=app_role,
    )
    assert "payment tally" in head()
