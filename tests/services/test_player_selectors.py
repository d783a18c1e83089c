"""Finding players by id (exact, then prefix, in code-point order) and reading their cases."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from settlements.selectors import players as player_selectors
from settlements.selectors.players import prefix_end
from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.incidents import tournament_create
from settlements.services.individual_cases import individual_case_open, prize_withdrawal_decide
from tests.services.helpers import approved, load

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("prefix", "end"),
    [("abc", "abd"), ("a\U0010ffff", "b"), ("x\ud7ff", "x\ue000"), ("", ""), ("\U0010ffff", "")],
)
def test_prefix_end_is_the_first_id_past_the_prefix(prefix, end):
    assert prefix_end(prefix) == end


def ids(*players):
    return [{"id": player, "chips": 10 * (n + 1)} for n, player in enumerate(players)] + [
        {"id": f"zz-out-{n}", "chips": 0} for n in range(4)
    ]


def test_exact_then_prefix_in_code_point_order(operator, snapshot_factory):
    # Code-point order puts capitals before small letters and "é" after "z".
    players = ids("bob", "bob2", "bobé", "bobZ", "Bob", "bo", "bob\u0430")
    for tournament_id in ("T-A", "T-B"):
        load(
            operator,
            snapshot_factory,
            stage="pre",
            entrants=len(players),
            players=players,
            tournament_id=tournament_id,
        )
    found = player_selectors.player_search("bob")
    assert found.exact
    assert found.others == ["bob2", "bobZ", "bobé", "bob\u0430"]
    # Paging on after the last id shown, without the exact id again.
    first = player_selectors.player_search("bob", limit=2)
    assert first.others == ["bob2", "bobZ"] and first.more
    rest = player_selectors.player_search("bob", after="bobZ", limit=2)
    assert not rest.exact and rest.others == ["bobé", "bob\u0430"] and not rest.more
    # A prefix with no exact id, and nothing at all.
    assert (
        player_selectors.player_search("bo").exact
        and player_selectors.player_search("b").exact is False
    )
    assert (
        player_selectors.player_search("Bob").others == []
        and player_selectors.player_search("Bob").exact
    )
    assert player_selectors.player_search("nobody") == player_selectors.PlayerSearch(
        "nobody", False, [], False
    )
    # LIKE wildcards are plain characters in an id.
    assert (
        player_selectors.player_search("bo_").others == []
        and not player_selectors.player_search("%").exact
    )


def test_a_players_cases_in_a_constant_number_of_queries(
    operator, tournament_manager, second_manager, snapshot_factory
):
    settled = []
    for number in range(3):
        settlement = approved(
            operator, tournament_manager, snapshot_factory, tournament_id=f"T-{number}"
        )
        compensation_propose(
            case=settlement.case,
            actor=operator,
            reason="lag",
            entries=[CompensationEntry("p000001", 100 + number)],
        )
        settled.append(settlement)
    entries = player_selectors.player_entries("p000001", 0, 25)
    assert [entry.case_id for entry in entries] == sorted(
        (s.case_id for s in settled), reverse=True
    )
    with CaptureQueriesContext(connection) as queries:
        rows = player_selectors.player_cases("p000001", entries)
    # Settlements, line sums, compensation items, prize withdrawals; then where each line's
    # payment stands: the player's lines, their releases, the wallet's answers, re-issues.
    assert len(queries) == 8
    for row, settlement in zip(rows, reversed(settled), strict=True):
        assert row.settlement == settlement
        paid = sum(line.amount for line in settlement.lines.filter(player="p000001"))
        assert sum(amount for _, _, amount in row.owed) == paid
        assert [amounts for _, _, _, amounts in row.compensations] != []


def test_the_cases_that_concern_a_player(operator, tournament_manager, snapshot_factory):
    crash = load(operator, snapshot_factory, tournament_id="T-CRASH")
    # A tournament without a snapshot: an individual case names whom it concerns.
    quiet = tournament_create(
        actor=tournament_manager, operator_id="T-QUIET", type="regular", currency="USD"
    )
    individual = individual_case_open(
        tournament=quiet, actor=tournament_manager, players=["walk-in"], description="d"
    )
    assert set(player_selectors.player_case_ids("p000001").values_list("pk", flat=True)) == {
        crash.pk
    }
    assert set(player_selectors.player_case_ids("walk-in").values_list("pk", flat=True)) == {
        individual.pk
    }
    assert [case.pk for case in player_selectors.player_other_cases("walk-in")] == [individual.pk]
    # An entrant's own case is listed with the entries, not again among the others.
    prize_withdrawal_decide(
        case=crash,
        actor=tournament_manager,
        player="p000001",
        prize="a ticket",
        outcome="leave",
        reason="fine",
    )
    assert player_selectors.player_other_cases("p000001") == []
    assert set(player_selectors.player_case_ids("p000001").values_list("pk", flat=True)) == {
        crash.pk
    }
