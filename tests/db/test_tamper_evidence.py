"""A row changed behind the app's back, past the triggers, is named by `verify_audit`: an
event's content, a missing event, a ledger line, a settlement's totals, a compensation item,
a snapshot's text, a crash-snapshot/2 entrant's figures. The auditor's page shows the failure
once verify_audit has run."""

import os

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from settlements import audit_log
from settlements.models import Event
from settlements.services import compensation as compensation_services
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import snapshot_bytes
from tests.db.conftest import behind_the_apps_back
from tests.services.helpers import approved

pytestmark = pytest.mark.django_db


@pytest.fixture
def settled(users, snapshot_factory):
    operator, manager = users["operator"], users["tournament_manager"]
    settlement = approved(operator, manager, snapshot_factory)
    compensation = compensation_services.compensation_propose(
        case=settlement.case,
        actor=operator,
        reason="lag",
        entries=[compensation_services.CompensationEntry(player="p000001", amount=250)],
    )
    compensation_services.compensation_approve(
        compensation=compensation, actor=manager, reason="fair"
    )
    with open(os.devnull, "w") as quiet:
        call_command("verify_audit", full=True, stdout=quiet)
    return settlement


def named(event: Event, words: str) -> None:
    with pytest.raises(CommandError) as caught:
        call_command("verify_audit", full=True)
    message = str(caught.value)
    assert message.startswith(f"Event #{event.pk} (number {event.seq}, {event.type},"), message
    assert words in message


def first(**filters) -> Event:
    return Event.objects.filter(**filters).order_by("seq").first()


def test_an_edited_event_is_named(settled):
    event = first(type="settlement_prepared")
    behind_the_apps_back(
        "UPDATE settlements_event SET reason = 'nothing' WHERE id = %s", [event.pk]
    )
    named(event, "was changed after it was written")


def test_a_deleted_event_is_named_by_the_one_after_it(settled):
    gone = first(type="settlement_submitted")
    behind_the_apps_back("DELETE FROM settlements_event WHERE id = %s", [gone.pk])
    named(Event.objects.get(seq=gone.seq + 1), f"where {gone.seq} was expected")


def test_a_ledger_line_changed_is_named_by_the_first_event_sealing_it(settled):
    behind_the_apps_back(
        "UPDATE settlements_settlementline SET amount = amount * 100 WHERE settlement_id = %s"
        " AND line_no = 1",
        [settled.pk],
    )
    named(first(type="settlement_prepared"), "whose ledger no longer match")


def test_rewritten_totals_are_named(settled):
    behind_the_apps_back(
        "UPDATE settlements_settlement SET totals = '{}' WHERE id = %s", [settled.pk]
    )
    named(first(type="settlement_prepared"), "whose totals no longer match")


def test_a_compensation_item_changed_is_named(settled):
    behind_the_apps_back("UPDATE settlements_compensationitem SET amount = 99999")
    named(first(type="compensation_proposed"), "whose items no longer match")


def test_a_snapshot_rewritten_is_named(settled):
    behind_the_apps_back(
        "UPDATE settlements_snapshot SET text = replace(text, 'p000001', 'p000099')"
    )
    named(first(type="snapshot_loaded"), "whose snapshot no longer match")


def test_an_entrants_bounty_changed_is_named(users):
    case = case_load_snapshot(
        actor=users["operator"], snapshot=snapshot_bytes(rebuys=True, entrants=20)
    )
    behind_the_apps_back(
        "UPDATE settlements_caseplayer SET bounty = bounty + 1 WHERE case_id = %s AND bounty > 0",
        [case.pk],
    )
    named(first(type="snapshot_loaded", case=case), "entrant_rows no longer match")


def test_the_auditors_page_shows_a_failed_verification(settled, users, client):
    event = first(type="settlement_approved")
    behind_the_apps_back("UPDATE settlements_event SET actor_id = NULL WHERE id = %s", [event.pk])
    with pytest.raises(CommandError):
        call_command("verify_audit", full=True)
    status = audit_log.status(cache=cache)
    assert not status.ok and f"Event #{event.pk}" in status.problem
    client.force_login(users["auditor"])
    page = client.get("/history/")
    assert b"Does not verify" in page.content and f"Event #{event.pk}".encode() in page.content
