"""The app's database role reads and writes rows and nothing more: connected as that role (set
up by `grant_app_role`, as the container does), the workflow runs from snapshot to approval,
while altering, dropping or disabling a table or a trigger, and granting itself privileges, are
refused."""

import pytest
from django.db import DatabaseError, connection

from settlements.models import Event, Settlement
from settlements.services import settlements as settlement_services
from tests.db.conftest import postgresql_only
from tests.services.helpers import load

pytestmark = [pytest.mark.django_db(transaction=True), postgresql_only]


@pytest.fixture
def as_app_role(users, app_role):
    """Reconnect as the app's role, then back as the owner (who empties the tables after)."""
    owner = connection.settings_dict["USER"]
    connection.close()
    connection.settings_dict["USER"] = app_role
    try:
        yield app_role
    finally:
        connection.close()
        connection.settings_dict["USER"] = owner


def refused(sql: str) -> str:
    with pytest.raises(DatabaseError) as caught, connection.cursor() as cursor:
        cursor.execute(sql)
    return str(caught.value)


def test_the_app_role_runs_the_workflow(as_app_role, users, snapshot_factory):
    operator, manager = users["operator"], users["tournament_manager"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        assert cursor.fetchone() == (as_app_role,)
    case = load(operator, snapshot_factory)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=manager, reason="checked")
    assert Settlement.objects.get(pk=settlement.pk).status == "approved"
    assert Event.objects.filter(type="settlement_approved").exists()


def test_the_app_role_cannot_change_the_schema_or_its_guards(as_app_role):
    trigger = _trigger_of("settlements_settlementline")
    for sql in (
        "ALTER TABLE settlements_settlementline DISABLE TRIGGER ALL",
        f"ALTER TABLE settlements_settlementline DISABLE TRIGGER {trigger}",
        f"DROP TRIGGER {trigger} ON settlements_settlementline",
        "ALTER TABLE settlements_event ADD COLUMN note text",
        "DROP TABLE settlements_event",
        "TRUNCATE settlements_event",
        "CREATE TABLE settlements_shadow (id int)",
        "SET session_replication_role = replica",
        f'ALTER ROLE "{as_app_role}" SUPERUSER',
        f'ALTER ROLE "{as_app_role}" BYPASSRLS',
    ):
        message = refused(sql)
        assert any(why in message for why in ("must be", "permission denied")), (sql, message)


def test_the_app_role_cannot_grant_itself_more(as_app_role):
    with connection.cursor() as cursor:
        # A role without the grant option gets a warning and nothing else.
        cursor.execute(f'GRANT ALL ON settlements_event TO "{as_app_role}"')
        cursor.execute(
            "SELECT has_table_privilege(current_user, 'settlements_event', 'TRUNCATE'),"
            " has_table_privilege(current_user, 'settlements_event', 'TRIGGER')"
        )
        assert cursor.fetchone() == (False, False)
    refused("TRUNCATE settlements_event")


def test_the_app_role_cannot_skip_a_trigger_through_pgtrigger(as_app_role, users, snapshot_factory):
    load(users["operator"], snapshot_factory)
    trigger = _trigger_of("settlements_event")
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('pgtrigger.ignore', %s, false)", [f"{{{trigger}}}"])
    assert "Cannot update or delete" in refused("DELETE FROM settlements_event")
    assert Event.objects.exists()


def _trigger_of(table: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass"
            " AND tgname LIKE 'pgtrigger_write_once_%%'",
            [table],
        )
        return cursor.fetchone()[0]
