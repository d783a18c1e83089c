"""Player ids where they enter the desk: a snapshot's ids (settlements.player_ids), and every
place a player of a case is chosen by hand, which must name one the case knows."""

import json

import pytest
from django.test import Client

from settlements.errors import DomainError
from settlements.rules import InvalidInput
from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.incidents import tournament_create
from settlements.services.individual_cases import individual_case_open, prize_withdrawal_decide
from settlements.services.settlements import settlement_prepare
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create
from tests.api.conftest import post_snapshot
from tests.conftest import build_snapshot
from tests.services.helpers import load, row_counts

pytestmark = pytest.mark.django_db

ALICES = ["alice", "\u0430lice", "alice\u200b", "alice\u00ad", "\u202eecila"]


def snapshot_with(ids: list[str], **kwargs) -> str:
    doc = build_snapshot(entrants=max(8, len(ids)), **kwargs)
    for player, player_id in zip(doc["players"], ids, strict=False):
        player["id"] = player_id
    return json.dumps(doc, ensure_ascii=False)


def refusal(operator, text: str) -> dict[str, str]:
    before = row_counts()
    with pytest.raises(InvalidInput) as refused:
        case_load_snapshot(actor=operator, snapshot=text)
    assert row_counts() == before
    return {problem.path: problem.message for problem in refused.value.problems}


def test_the_five_alices_of_the_report_are_refused_at_their_paths(operator):
    problems = refusal(operator, snapshot_with(ALICES))
    assert set(problems) == {"players[2].id", "players[3].id", "players[4].id"}
    assert "U+200B" in problems["players[2].id"]
    assert "U+00AD" in problems["players[3].id"]
    assert "U+202E" in problems["players[4].id"]


def test_two_look_alike_ids_are_refused_naming_both_paths(operator):
    problems = refusal(operator, snapshot_with(["alice", "bob", "\u0430lice"]))
    assert list(problems) == ["players[2].id"]
    assert "players[0].id ('alice')" in problems["players[2].id"]


def test_an_id_not_in_nfc_is_refused(operator):
    problems = refusal(operator, snapshot_with(["zoe\u0308", "zoey"]))
    assert list(problems) == ["players[0].id"] and "NFC" in problems["players[0].id"]


def test_a_tournament_id_with_an_invisible_character_is_refused(operator):
    problems = refusal(operator, snapshot_with([], tournament_id="T-1\u200b"))
    assert list(problems) == ["tournament.id"]


def test_the_api_answers_400_with_both_paths(operator):
    _, token = api_token_create(user=operator, name="game server")
    before = row_counts()
    body = snapshot_with(["player1", "playerl"]).encode()
    response = post_snapshot(Client(), token, body)
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["path"] == "players[1].id" and "players[0].id" in error["message"]
    assert row_counts() == before


def test_ids_in_any_script_that_look_different_are_kept(operator):
    ids = ["игрок", "選手", "Zoë", "p-1", "p-2", "اللاعب"]
    case = case_load_snapshot(actor=operator, snapshot=snapshot_with(ids))
    assert set(ids) <= set(case.entries.values_list("player", flat=True))


# --- Choosing a player of a case ---------------------------------------------------------------


@pytest.fixture
def prepared(operator, snapshot_factory):
    case = load(operator, snapshot_factory, tournament_id="T-P")
    settlement_prepare(case=case, actor=operator)
    return case


@pytest.mark.parametrize("player", ["stranger", "p000001\u200b", "p00000l"])
def test_compensation_names_players_of_the_snapshot_only(operator, prepared, player):
    before = row_counts()
    with pytest.raises(DomainError) as refused:
        compensation_propose(
            case=prepared, actor=operator, reason="lag", entries=[CompensationEntry(player, 5)]
        )
    assert refused.value.field == "entries"
    assert row_counts() == before


def test_a_prize_withdrawal_names_a_player_of_the_case(tournament_manager, prepared):
    arguments = {"prize": "a seat", "outcome": "leave", "reason": "r"}
    with pytest.raises(DomainError, match="not a player of") as refused:
        prize_withdrawal_decide(
            case=prepared, actor=tournament_manager, player="stranger", **arguments
        )
    assert refused.value.field == "player"
    prize_withdrawal_decide(case=prepared, actor=tournament_manager, player="p000003", **arguments)


def test_an_individual_case_on_a_tournament_with_a_snapshot_names_its_entrants(
    tournament_manager, prepared
):
    with pytest.raises(DomainError, match="Not an entrant of T-P") as refused:
        individual_case_open(
            tournament=prepared.tournament,
            actor=tournament_manager,
            players=["p000001", "stranger"],
            description="kicked",
        )
    assert refused.value.field == "players"
    case = individual_case_open(
        tournament=prepared.tournament,
        actor=tournament_manager,
        players=["p000001"],
        description="kicked",
    )
    assert case.players == ["p000001"]


@pytest.mark.parametrize(
    ("players", "message"),
    [
        (["alice\u200b"], r"U\+200B"),
        (["\u202eecila"], r"U\+202E"),
        (["zoe\u0308"], "NFC"),
        (["alice", "\u0430lice"], "looks the same as 'alice'"),
    ],
)
def test_ids_typed_for_a_tournament_without_a_snapshot_pass_the_same_checks(
    operator, tournament_manager, players, message
):
    tournament = tournament_create(
        actor=operator, operator_id="NO-SNAP", type="regular", currency="USD"
    )
    before = row_counts()
    with pytest.raises(DomainError, match=message) as refused:
        individual_case_open(
            tournament=tournament, actor=tournament_manager, players=players, description="d"
        )
    assert refused.value.field == "players"
    assert row_counts() == before
    individual_case_open(
        tournament=tournament, actor=tournament_manager, players=["alice"], description="d"
    )
