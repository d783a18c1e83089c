"""A desk where every audited table holds rows, for the tests of the database's guards."""

import os

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from settlements import roles, services
from settlements.models import PrizeWithdrawal
from settlements.selectors import payments as payment_reads
from settlements.services.payments import ConfirmationEntry
from tests.services.helpers import approved, load

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the guards are PostgreSQL triggers and roles"
)


def execute(sql: str, params=None) -> int:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def behind_the_apps_back(sql: str, params=None) -> int:
    """Run ``sql`` as an intruder with full rights would: as a superuser, with every trigger
    off for the transaction (on SQLite there are none to turn off)."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            execute("SET LOCAL session_replication_role = replica")
        return execute(sql, params)


@pytest.fixture
def app_role() -> str:
    """A plain role granted row access by `grant_app_role`, as the app's role in production."""
    role = f"{connection.settings_dict['NAME']}_app"[:63]
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE ROLE "{role}" LOGIN')
    with open(os.devnull, "w") as quiet:
        call_command("grant_app_role", role, stdout=quiet)
    return role


def refused(sql: str, params=None, *, role: str) -> str:
    """The error PostgreSQL answers ``sql`` with when ``role`` sends it; nothing is changed."""
    with pytest.raises(DatabaseError) as caught, transaction.atomic():
        execute(f'SET LOCAL ROLE "{role}"')
        execute(sql, params)
    return str(caught.value)


@pytest.fixture
def full_desk(users, snapshot_factory):
    """An approved settlement with approved compensation, a decision, a prize withdrawal, an
    API token and an approved re-issue: a row in every audited table and history table."""
    operator, manager = users["operator"], users["tournament_manager"]
    settlement = approved(operator, manager, snapshot_factory)
    case = settlement.case
    compensation = services.compensation_propose(
        case=case,
        actor=operator,
        reason="lag spike",
        entries=[services.CompensationEntry(player="p000001", amount=500)],
    )
    compensation = services.compensation_approve(
        compensation=compensation, actor=manager, reason="fair"
    )
    services.prize_withdrawal_decide(
        case=case, actor=manager, player="p000002", prize="seat", outcome="leave",
        reason="given in good faith",
    )  # fmt: skip
    other = load(operator, snapshot_factory, type="satellite", stage="middle")
    services.decision_record(
        case=other, actor=users["marketing_manager"], option="chip_equity", reason="fair"
    )
    services.api_token_create(user=operator, name="game server", actor=operator)
    # A line the cashier could not pay, paid again by an approved re-issue.
    line = next(iter(payment_reads.approved_lines(None)))
    failed = ConfirmationEntry(
        idempotency_key=line.key,
        status="failed",
        external_reference="account closed",
        at=timezone.now(),
        amount=line.amount,
    )
    services.payments.payment_confirm(actor=users[roles.CASHIER], confirmations=[failed])
    reissue = services.payments.reissue_propose(
        actor=operator, idempotency_key=line.key, reason="new account"
    )
    reissue = services.payments.reissue_approve(reissue=reissue, actor=users["second_manager"])
    assert PrizeWithdrawal.objects.exists()
    return {"settlement": settlement, "compensation": compensation, "reissue": reissue}
