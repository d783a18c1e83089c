"""The anchor outside the database: a head exported by `verify_audit --export-head` and given
back with `--head` catches what the chain alone cannot, a chain rewritten with fresh hashes
or cut short."""

import hashlib
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from settlements import audit_log
from settlements.models import Event
from settlements.services.tokens import api_token_create
from tests.db.conftest import behind_the_apps_back
from tests.services.helpers import approved

pytestmark = pytest.mark.django_db


@pytest.fixture
def exported(users, snapshot_factory, tmp_path, capsys):
    approved(users["operator"], users["tournament_manager"], snapshot_factory)
    head = tmp_path / "head.json"
    call_command("verify_audit", export_head=str(head))
    capsys.readouterr()
    return head


def rewrite_from(seq: int, reason: str) -> None:
    """What a superuser could do: change an event and give it, and every event after it, fresh
    hashes, so that the chain verifies again."""
    previous = Event.objects.get(seq=seq - 1).hash if seq > 1 else audit_log.GENESIS
    for event in Event.objects.filter(seq__gte=seq).order_by("seq"):
        if event.seq == seq:
            event.reason = reason
        event.prev_hash = previous
        event.hash = hashlib.sha256(audit_log.canonical(event)).hexdigest()
        behind_the_apps_back(
            "UPDATE settlements_event SET reason = %s, prev_hash = %s, hash = %s WHERE id = %s",
            [event.reason, event.prev_hash, event.hash, event.pk],
        )
        previous = event.hash


def test_the_exported_head_is_the_chains(exported, capsys):
    kept = json.loads(exported.read_text())
    count, head = audit_log.head()
    assert (kept["events"], kept["head"], kept["verified"]) == (count, head, True)
    call_command("verify_audit", head=str(exported))
    assert f"{count} events verified; head {head}" in capsys.readouterr().out


def test_a_chain_rewritten_with_fresh_hashes_fails_against_the_kept_head(exported, capsys):
    approval = Event.objects.get(type="settlement_approved")
    rewrite_from(approval.seq, "approved after a long look")
    # The checkpoint the export left holds a head too, signed with a key outside the database.
    with pytest.raises(CommandError, match="Checkpoint #.* the log was rewritten"):
        call_command("verify_audit")
    call_command("verify_audit", full=True)  # the chain alone cannot tell
    capsys.readouterr()
    with pytest.raises(CommandError) as caught:
        call_command("verify_audit", full=True, head=str(exported))
    assert "is no longer in the chain" in str(caught.value)
    assert "The log was rewritten" in str(caught.value)


def test_a_chain_cut_short_fails_against_the_kept_head(exported):
    last = Event.objects.order_by("-seq").first()
    behind_the_apps_back("DELETE FROM settlements_event WHERE id = %s", [last.pk])
    with pytest.raises(CommandError) as caught:
        call_command("verify_audit", full=True, head=str(exported))
    # The last event approved a settlement: its release, now accounted for by no event, is
    # found before the head is compared (issue 41); a cut that leaves no row loose is below.
    assert "No event accounts for settlements_ledgerrelease row" in str(caught.value)


def test_a_chain_cut_short_with_nothing_left_loose_fails_against_the_kept_head(
    users, snapshot_factory, tmp_path
):
    approved(users["operator"], users["tournament_manager"], snapshot_factory)
    api_token_create(user=users["operator"], name="game server")
    kept = tmp_path / "head.json"
    call_command("verify_audit", export_head=str(kept), stdout=StringIO())
    last = Event.objects.order_by("-seq").first()
    # The token and its versions go with its event, so that no row is left for the loose-row
    # check to name.
    behind_the_apps_back("DELETE FROM settlements_event WHERE id = %s", [last.pk])
    behind_the_apps_back("DELETE FROM settlements_apitoken WHERE id = %s", [last.subject_id])
    behind_the_apps_back(
        "DELETE FROM settlements_historicalapitoken WHERE id = %s", [last.subject_id]
    )
    with pytest.raises(CommandError) as caught:
        call_command("verify_audit", full=True, head=str(kept))
    assert "the log is shorter than it was" in str(caught.value)
    # The checkpoint of the verification that exported the head says so too.
    with pytest.raises(CommandError, match="that event is gone: the log was rewritten"):
        call_command("verify_audit")


def test_a_head_kept_from_a_shorter_chain_still_holds_as_the_log_grows(
    exported, users, snapshot_factory, capsys
):
    approved(users["operator"], users["tournament_manager"], snapshot_factory, tournament_id="T2")
    call_command("verify_audit", head=str(exported))
    assert "events verified" in capsys.readouterr().out


@pytest.mark.parametrize("text", ["", "[]", '{"events": "3", "head": "x"}', '{"head": "x"}'])
def test_a_file_that_holds_no_head_is_refused_by_name(tmp_path, text, db):
    kept = tmp_path / "head.json"
    kept.write_text(text)
    with pytest.raises(CommandError) as caught:
        call_command("verify_audit", head=str(kept))
    assert str(kept) in str(caught.value)


def test_the_auditors_download_is_a_head_verify_audit_takes(users, exported, client, tmp_path):
    client.force_login(users["auditor"])
    download = tmp_path / "download.json"
    download.write_bytes(client.get("/history/audit-head.json").content)
    call_command("verify_audit", head=str(download))
