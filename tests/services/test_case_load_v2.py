"""A crash-snapshot/2 (RULES.md §8) kept with its case: the entrants' entries, add-ons and
bounties, the tournament's K, A and G, the seal over them, and the new line kinds stored."""

import hashlib
import json

import pytest

from settlements import audit_log
from settlements.models import CasePlayer, Event, Tournament
from settlements.rules.snapshot import PlayerV2
from settlements.services import settlements as settlement_services
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import snapshot_bytes

pytestmark = pytest.mark.django_db


def rebuy_snapshot(**kwargs) -> bytes:
    return snapshot_bytes(rebuys=True, entrants=30, tournament_id="KO-1", **kwargs)


def test_the_entrants_keep_their_entries_add_ons_and_bounties(operator):
    data = rebuy_snapshot()
    case = case_load_snapshot(actor=operator, snapshot=data)
    players = json.loads(data)["players"]
    stored = list(
        CasePlayer.objects.filter(case=case).values_list(
            "position", "player", "chips", "entries", "add_ons", "bounty"
        )
    )
    assert stored == [
        (i, p["id"], p["chips"], p.get("entries", 1), p.get("add_ons", 0), p.get("bounty", 0))
        for i, p in enumerate(players)
    ]
    assert any(row[3] == 2 for row in stored) and any(row[5] for row in stored)
    tournament = Tournament.objects.get(operator_id="KO-1")
    assert (tournament.entry_bounty, tournament.add_on, tournament.add_on_fee) == (500, 1000, 100)


def test_the_case_and_its_events_seal_the_entrants(operator):
    case = case_load_snapshot(actor=operator, snapshot=rebuy_snapshot())
    rows = CasePlayer.objects.filter(case=case).order_by("position")
    digest = audit_log.entrants_digest(
        [
            PlayerV2(
                id=row.player,
                chips=row.chips,
                entries=row.entries,
                add_ons=row.add_ons,
                bounty=row.bounty,
            )
            for row in rows
        ]
    )
    case.refresh_from_db()
    assert case.entrants_digest == digest
    loaded = Event.objects.get(type="snapshot_loaded", case=case)
    # Every entrant row is sealed (settlements.seals), entries, add-ons and bounty included, and
    # the digest with the case's fixed fields.
    facts = loaded.subject_facts
    assert (facts["snapshot"], facts["entrants_digest"]) == (case.snapshot.sha256, digest)
    assert facts["entrant_rows"]
    assert audit_log.verify().ok


def test_a_version_1_case_is_stored_and_sealed_as_before(operator, snapshot_factory):
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory(entrants=20))
    case.refresh_from_db()
    assert case.entrants_digest == ""
    assert set(
        CasePlayer.objects.filter(case=case).values_list("entries", "add_ons", "bounty")
    ) == {(1, 0, 0)}
    tournament = case.tournament
    assert (tournament.entry_bounty, tournament.add_on, tournament.add_on_fee) == (None, None, None)
    loaded = Event.objects.get(type="snapshot_loaded", case=case)
    assert loaded.subject_facts["snapshot"] == case.snapshot.sha256
    assert loaded.subject_facts["entrants_digest"] == ""


@pytest.mark.parametrize("chunk", [1, 2, 20_000])
def test_the_entrants_digest_hashes_one_line_per_entrant_whatever_the_chunks(monkeypatch, chunk):
    # The bytes are what every case loaded since crash-snapshot/2 was sealed with.
    monkeypatch.setattr(audit_log, "_CHUNK", chunk)
    players = [
        PlayerV2(id="a", chips=10, entries=2, add_ons=1, bounty=500),
        PlayerV2(id="bc", chips=0),
        PlayerV2(id="d\tx", chips=7, add_ons=1),
    ]
    text = "0\t1:a\t10\t2\t1\t500\n1\t2:bc\t0\t1\t0\t0\n2\t3:d\tx\t7\t1\t1\t0\n"
    assert audit_log.entrants_digest(players) == hashlib.sha256(text.encode()).hexdigest()


def test_the_entrants_digest_tells_every_figure_apart():
    base = PlayerV2(id="a", chips=10, entries=2, add_ons=1, bounty=500)
    changed = [
        PlayerV2(id="a", chips=10, entries=1, add_ons=2, bounty=500),
        PlayerV2(id="a", chips=10, entries=2, add_ons=1, bounty=501),
        PlayerV2(id="a1", chips=0, entries=2, add_ons=1, bounty=500),
    ]
    digests = {audit_log.entrants_digest([player]) for player in [base, *changed]}
    assert len(digests) == 4


@pytest.mark.parametrize(
    ("stage", "kinds"),
    [
        ("pre", {("refund_buy_in", "pool"), ("refund_fee", "house"), ("refund_bounty", "house")}),
        ("middle", {("prize", "pool"), ("bounty", "bounty")}),
    ],
)
def test_the_settlement_stores_the_new_line_kinds(users, stage, kinds):
    operator, manager = users["operator"], users["tournament_manager"]
    case = case_load_snapshot(actor=operator, snapshot=rebuy_snapshot(stage=stage))
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    assert set(settlement.lines.values_list("kind", "source")) == kinds
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=manager, reason="checked")
    assert audit_log.verify().ok
