"""Satellites: late-stage position values with ties (RULES.md §3) and the ticket rule (§5)."""

from fractions import Fraction

import pytest

from settlements.rules.satellite import pay_as_seat, position_value, rank_values

from .builders import amounts, satellite, settle_doc


@pytest.mark.parametrize(
    ("value", "paid"), [(0, (0, 0)), (4999, (0, 4999)), (5000, (1, 0)), (7300, (1, 2300))]
)
def test_the_ticket_rule_pays_one_seat_at_most(value, paid):
    assert pay_as_seat(value, 5000) == paid


def test_position_values():
    values = [position_value(k, seat_value=6000, seats=3, remainder=2000) for k in range(1, 6)]
    assert values == [6000, 6000, 6000, 2000, 0]
    assert position_value(4, seat_value=5000, seats=3, remainder=0) == 0


def ranks(chips, **terms):
    ids = [f"p{n}" for n in range(1, len(chips) + 1)]
    values, shared, _ = rank_values(chips, ids, **terms)
    return values, shared


def test_distinct_stacks_take_their_positions():
    values, shared = ranks([10, 40, 30, 20], seat_value=6000, seats=3, remainder=2000)
    assert values == [2000, 6000, 6000, 6000]
    assert shared == []


def test_a_tie_on_the_bubble_shares_the_last_seat_and_the_remainder():
    values, shared = ranks([30, 20, 10, 10], seat_value=6000, seats=3, remainder=2000)
    assert values == [6000, 6000, 4000, 4000]
    ((members, even),) = shared
    assert members == [2, 3] and even.pool == 8000


def test_a_three_way_tie_rounds_by_id():
    # Positions 2-4: 5000 + 5000 + 1000 = 11000 among three: 3666⅔ each, two cents left.
    values, _ = ranks([50, 7, 7, 7], seat_value=5000, seats=3, remainder=1000)
    assert values == [5000, 3667, 3667, 3666]


def test_players_tied_for_seats_all_get_seats():
    values, _ = ranks([9, 9, 9, 1], seat_value=5000, seats=3, remainder=700)
    assert values == [5000, 5000, 5000, 700]


def test_late_settlement_bubble_tie_pays_tdollars():
    # P = 20000, V = 6000: S = 3, remainder 2000, M = 4; R = 4 so late.
    document = satellite([30000, 20000, 10000, 10000] + [0] * 16, seat_value=6000)
    result = settle_doc(document)
    assert (result.stage, result.remedy) == ("late", "satellite_rank")
    assert amounts(result, "tickets") == {"p01": 1, "p02": 1, "p03": 0, "p04": 0}
    assert amounts(result, "tdollars") == {"p01": 0, "p02": 0, "p03": 4000, "p04": 4000}
    assert result.pool_distributed == 20000
    explained = result.explanations["p03"]
    assert explained.exact == Fraction(4000) and explained.rounded == 4000
    assert explained.places == (3, 4)  # tied with p04 for the last seat and the remainder
    alone = result.explanations["p01"]  # no tie: the value of first place, nothing split
    assert (alone.places, alone.exact, alone.rounding_cent) == ((1, 1), 6000, 0)


def test_late_with_r_equal_s_every_player_gets_a_seat_and_the_remainder_was_paid():
    # P = 20000, V = 6000: S = 3 and the remainder place (4th) already went to a player.
    document = satellite([30000, 20000, 10000] + [0] * 17, seat_value=6000)
    result = settle_doc(document)
    assert result.stage == "late"
    assert amounts(result, "tickets") == {"p01": 1, "p02": 1, "p03": 1}
    assert result.pool_distributed == 18000
    assert {line.kind for line in result.lines} == {"ticket"}


def test_the_ticket_rule_after_a_split_is_capped_at_one_seat():
    document = satellite([20000, 15000, 9000, 7000, 5000, 3000, 1000] + [0] * 13)
    result = settle_doc(document, decision="chip_proportional")
    assert amounts(result, "tickets") == {
        "p01": 1,
        "p02": 1,
        "p03": 0,
        "p04": 0,
        "p05": 0,
        "p06": 0,
        "p07": 0,
    }
    assert max(result.explanations[p].rounded for p in result.explanations) == 5000
    assert result.explanations["p01"].capped


def test_satellite_early_pays_refunds_in_cash_and_the_split_in_tdollars():
    # 20000 - 18 × 1000 = 2000 shared by 18 equal stacks: 111⅑ each, the 2 cents left over go
    # to the smallest ids.
    result = settle_doc(satellite([100] * 18 + [0, 0]))
    assert result.stage == "early"
    lines = [(line.kind, line.unit, line.amount) for line in result.lines if line.player == "p01"]
    assert lines == [
        ("refund_buy_in", "cash", 1000),
        ("refund_fee", "cash", 100),
        ("prize", "tdollars", 112),
    ]
    assert amounts(result, "tdollars")["p03"] == 111
    assert "p19" not in amounts(result)
