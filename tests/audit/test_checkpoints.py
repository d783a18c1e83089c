"""Verification from signed checkpoints: the next one reads what came after the last and a
random sample before it; `--full` reads everything; a checkpoint altered in the database, or
one whose head was rewritten, stops verification with its name; the key lives in settings."""

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, transaction

from settlements import checkpoints
from settlements.checks import checkpoint_key_check
from settlements.models import AuditCheckpoint, Event
from settlements.services.checkpoints import checkpoint_record
from tests.db.conftest import behind_the_apps_back
from tests.services.helpers import approved, load

pytestmark = pytest.mark.django_db


@pytest.fixture
def desk(users, snapshot_factory):
    return approved(users["operator"], users["tournament_manager"], snapshot_factory)


def change_a_line(settlement) -> None:
    behind_the_apps_back(
        "UPDATE settlements_settlementline SET amount = amount + 1 "
        "WHERE settlement_id = %s AND line_no = 1",
        [settlement.pk],
    )


def test_a_first_verification_reads_the_whole_chain_and_leaves_a_checkpoint(desk, capsys):
    call_command("verify_audit")
    checkpoint = AuditCheckpoint.objects.get()
    assert checkpoint.full and checkpoint.first == 1
    assert checkpoint.events == Event.objects.count()
    assert checkpoint.counts["settlement_approved"] == 1
    assert sum(checkpoint.counts.values()) == checkpoint.events
    assert checkpoints.is_signed(checkpoint)
    assert "the whole chain read" in capsys.readouterr().out


def test_the_next_reads_what_came_after_and_a_sample(desk, users, snapshot_factory, capsys):
    call_command("verify_audit")
    first = AuditCheckpoint.objects.get()
    load(users["operator"], snapshot_factory, type="satellite", stage="middle")
    call_command("verify_audit")
    second = AuditCheckpoint.objects.order_by("-pk").first()
    assert not second.full
    assert second.first == first.events + 1 and second.events == Event.objects.count()
    assert second.sampled and set(second.sampled) <= set(range(1, first.events + 1))
    assert sum(second.counts.values()) == second.events
    assert "older events drawn at random" in capsys.readouterr().out


def test_an_old_change_is_found_by_the_sample_and_by_full(desk, monkeypatch):
    checkpoint_record(outcome=checkpoints.verify())
    change_a_line(desk)
    # As on a database whose rows carry no stamp (SQLite): only the sample leads to it.
    monkeypatch.setattr(checkpoints.row_stamps, "reachable", lambda since: None)
    assert checkpoints.verify(sample=0).verification.ok
    drawn = checkpoints.verify(sample=10_000).verification
    assert "checked again at random" in drawn.problem and "ledger" in drawn.problem
    with pytest.raises(CommandError, match="ledger"):
        call_command("verify_audit", full=True)


def test_an_altered_checkpoint_is_caught_and_named(desk):
    checkpoint = checkpoint_record(outcome=checkpoints.verify())
    behind_the_apps_back(
        "UPDATE settlements_auditcheckpoint SET events = events + 5 WHERE id = %s",
        [checkpoint.pk],
    )
    with pytest.raises(CommandError, match=f"Checkpoint #{checkpoint.pk} .* was altered"):
        call_command("verify_audit")
    with pytest.raises(CommandError, match="was altered"):
        call_command("verify_audit", full=True)


def test_a_rewritten_head_under_a_checkpoint_is_named(desk):
    checkpoint = checkpoint_record(outcome=checkpoints.verify())
    behind_the_apps_back(
        "UPDATE settlements_event SET hash = %s WHERE seq = %s", ["f" * 64, checkpoint.events]
    )
    with pytest.raises(CommandError, match=f"Checkpoint #{checkpoint.pk} verified event"):
        call_command("verify_audit")


def test_checkpoints_are_write_once(desk):
    checkpoint = checkpoint_record(outcome=checkpoints.verify())
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditCheckpoint.objects.filter(pk=checkpoint.pk).update(head="0" * 64)


def test_a_new_key_keeps_old_checkpoints_through_the_fallbacks(desk, settings):
    settings.AUDIT_CHECKPOINT_KEY = "k" * 40
    checkpoint = checkpoint_record(outcome=checkpoints.verify())
    settings.AUDIT_CHECKPOINT_KEY = "n" * 40
    assert not checkpoints.is_signed(checkpoint)
    assert "was altered" in checkpoints.verify().verification.problem
    settings.AUDIT_CHECKPOINT_KEY_FALLBACKS = ["k" * 40]
    assert checkpoints.is_signed(checkpoint)
    assert checkpoints.verify().verification.ok


def test_a_failed_verification_leaves_no_checkpoint(desk):
    change_a_line(desk)
    with pytest.raises(CommandError):
        call_command("verify_audit")
    assert not AuditCheckpoint.objects.exists()


def test_deploy_check_asks_for_a_key_of_its_own(settings):
    settings.AUDIT_CHECKPOINT_KEY = ""
    assert [w.id for w in checkpoint_key_check(None)] == ["settlements.W012"]
    settings.AUDIT_CHECKPOINT_KEY = "short"
    assert "shorter than" in checkpoint_key_check(None)[0].msg
    settings.AUDIT_CHECKPOINT_KEY = "x" * 40
    assert checkpoint_key_check(None) == []
