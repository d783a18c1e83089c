"""The database refuses what the workflow never does, whoever sends the SQL as the app's role:
a record written past its first state, a move no service makes, an approval by its preparer,
and a ledger release for a record not approved, or approved by no event of its transaction.

Before issue 41 a settlement inserted as approved, with a release, reached the cashier's feed
and `verify_audit --head` verified it."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.utils import timezone

from settlements.models import Compensation, LedgerRelease, RulebookVersion, Settlement
from settlements.services import compensation as compensation_services
from settlements.services.rulebooks import rulebook_version_approve, rulebook_version_propose
from settlements.services.settlements import settlement_approve
from tests.db.conftest import (
    behind_the_apps_back,
    execute,
    postgresql_only,
    refused,
    refused_at_commit,
)
from tests.services.helpers import submitted

pytestmark = [pytest.mark.django_db, postgresql_only]


def copy_row(table: str, pk: int, **changes) -> str:
    """SQL inserting a copy of a row of ``table`` under a new id, with ``changes``."""
    values = ", ".join(f"'{name}', {value!r}" for name, value in changes.items())
    return (
        f'INSERT INTO "{table}" SELECT (jsonb_populate_record(NULL::"{table}", to_jsonb(r)'
        f" || jsonb_build_object('id', (SELECT max(id) + 1000 FROM \"{table}\"), {values}))).*"
        f' FROM "{table}" AS r WHERE id = {int(pk)}'
    )


def test_a_settlement_is_not_inserted_already_approved(app_role, full_desk):
    settlement = full_desk["settlement"]
    sql = copy_row("settlements_settlement", settlement.pk, case_id=None, status="approved")
    # The case link is dropped so that the one-settlement-a-case key does not answer first.
    assert "starts as prepared, not approved" in refused(
        sql.replace("'case_id', None", "'case_id', null"), role=app_role
    )


def test_a_compensation_is_not_inserted_already_approved(app_role, full_desk):
    compensation = full_desk["compensation"]
    sql = copy_row("settlements_compensation", compensation.pk, status="approved")
    assert "starts as proposed, not approved" in refused(sql, role=app_role)


def test_a_settlement_moves_only_as_the_services_move_it(app_role, users, snapshot_factory):
    settlement = submitted(users["operator"], snapshot_factory)
    back = f"UPDATE settlements_settlement SET status = 'prepared' WHERE id = {settlement.pk}"
    assert "no move" in refused(back, role=app_role)
    own = (
        "UPDATE settlements_settlement SET status = 'approved', approved_by_id = prepared_by_id"
        f" WHERE id = {settlement.pk}"
    )
    assert "other than its preparer" in refused(own, role=app_role)
    settlement.refresh_from_db()
    assert settlement.status == "awaiting_approval"


def test_a_release_for_a_rejected_record_is_refused(app_role, full_desk, users):
    compensation = full_desk["compensation"]
    release = LedgerRelease.objects.get(compensation=compensation)
    rejected = Compensation.objects.filter(status="rejected").first()
    if rejected is None:  # the desk has none: reject a new proposal through the service
        rejected = compensation_services.compensation_propose(
            case=compensation.case,
            actor=users["operator"],
            reason="slow table",
            entries=[compensation_services.CompensationEntry(player="p000004", amount=50)],
        )
        compensation_services.compensation_reject(
            compensation=rejected, actor=users["tournament_manager"], reason="no loss"
        )
    places = LedgerRelease.objects.order_by("-last_position").first().last_position + 1
    sql = copy_row(
        "settlements_ledgerrelease",
        release.pk,
        compensation_id=rejected.pk,
        first_position=places,
        last_position=places,
    )
    assert f"compensation {rejected.pk} is not approved" in refused_at_commit(sql, role=app_role)


@pytest.mark.django_db(transaction=True)
def test_a_release_without_its_approval_event_in_the_transaction_is_refused(
    app_role, users, snapshot_factory
):
    """Even for an approved record: a second release (its first one removed behind the
    app's back) is refused, as no approval event is written with it. Committed for real, as
    inside one test transaction the approval's own event would count."""
    settlement = Settlement.objects.get(pk=submitted(users["operator"], snapshot_factory).pk)
    settlement_approve(settlement=settlement, actor=users["tournament_manager"])
    release = LedgerRelease.objects.get(settlement=settlement)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT to_jsonb(r)::text FROM settlements_ledgerrelease AS r WHERE id = %s",
            [release.pk],
        )
        row = cursor.fetchone()[0]
    with transaction.atomic():
        execute("SET LOCAL session_replication_role = replica")
        execute(f"DELETE FROM settlements_ledgerrelease WHERE id = {release.pk}")
    sql = (
        "INSERT INTO settlements_ledgerrelease SELECT (jsonb_populate_record("
        f"NULL::settlements_ledgerrelease, '{row}'::jsonb)).*"
    )
    message = refused_at_commit(sql, role=app_role)
    assert f"settlement {settlement.pk} has no approval event written with its release" in message


@pytest.mark.parametrize("head", [False, True])
@pytest.mark.parametrize(
    ("table", "record", "changes"),
    [
        # An adjustment: a second approved settlement of the case is refused by a unique key.
        ("settlements_settlement", "settlement", {"kind": "adjustment"}),
        ("settlements_compensation", "compensation", {}),
    ],
)
def test_a_record_no_event_accounts_for_is_named_by_verify_audit(
    full_desk, tmp_path, table, record, changes, head
):
    """As the owner with triggers off: a copy of an approved record, with no event."""
    exported = tmp_path / "head.json"
    call_command("verify_audit", full=True, export_head=str(exported), stdout=StringIO())
    original = full_desk[record]
    if record == "settlement":
        changes = {**changes, "corrects_id": original.pk}
    behind_the_apps_back(copy_row(table, original.pk, status="approved", **changes))
    new = type(original).objects.order_by("-pk").values_list("pk", flat=True).first()
    with pytest.raises(CommandError) as caught:
        call_command("verify_audit", full=True, **({"head": str(exported)} if head else {}))
    assert f"No event accounts for {table} row {new}" in str(caught.value)


@pytest.fixture
def approved_version(users, second_manager):
    version = rulebook_version_propose(
        key="eu-main",
        parameters={"final_table_icm": 9},
        text="Final tables by ICM.",
        effective_from=timezone.now() + timedelta(days=7),
        actor=users["tournament_manager"],
        reason="published policy",
    )
    return rulebook_version_approve(version=version, actor=second_manager, reason="ok")


def test_a_rulebook_version_is_not_inserted_already_approved(app_role, approved_version):
    table = "settlements_rulebookversion"
    copy = copy_row(table, approved_version.pk, number=approved_version.number + 1)
    assert "starts as proposed, not approved" in refused(copy, role=app_role)
    # Nor as the versions migration 0044 made from the old settings, approved by nobody:
    # only the tables' owner writes those.
    default = RulebookVersion.objects.get(rulebook__key="default", number=1)
    assert default.approved_by is None
    copy = copy_row(table, default.pk, number=default.number + 100)
    assert "starts as proposed, not approved" in refused(copy, role=app_role)


def test_a_rulebook_version_is_not_approved_by_its_proposer(app_role, users):
    version = rulebook_version_propose(
        key="eu-main",
        parameters={},
        text="As published.",
        effective_from=timezone.now() + timedelta(days=7),
        actor=users["tournament_manager"],
        reason="published policy",
    )
    own = (
        "UPDATE settlements_rulebookversion SET status = 'approved', approved_at = now(),"
        f" approved_by_id = proposed_by_id WHERE id = {version.pk}"
    )
    assert "other than its preparer" in refused(own, role=app_role)
    nobody = (
        "UPDATE settlements_rulebookversion SET status = 'approved', approved_at = now()"
        f" WHERE id = {version.pk}"
    )
    assert "other than its preparer" in refused(nobody, role=app_role)


def test_a_rulebook_version_no_event_accounts_for_is_named_by_verify_audit(approved_version):
    """As the owner with triggers off: a copy of an approved version, with no event."""
    table = "settlements_rulebookversion"
    call_command("verify_audit", full=True, stdout=StringIO())
    behind_the_apps_back(copy_row(table, approved_version.pk, number=approved_version.number + 1))
    new = RulebookVersion.objects.order_by("-pk").values_list("pk", flat=True).first()
    with pytest.raises(CommandError) as caught:
        call_command("verify_audit", full=True)
    assert f"No event accounts for {table} row {new}" in str(caught.value)
