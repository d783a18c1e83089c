"""RULES.md §4: the formulas, the guaranteed amount and cap loop, and cent rounding."""

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from settlements.rules.formulas import BoundsError, position_weights, split, tie_break_order


def reference(pool, chips, *, formula, floor=0, cap=None, prizes=()):
    """§4 as written: the capping loop with Fractions, recomputing everything each round."""
    n = len(chips)
    order = sorted(range(n), key=lambda i: -chips[i])
    if formula == "chip_position":
        weight = {}
        for i in order:
            tied = [k for k in range(n) if chips[order[k]] == chips[i]]
            weight[i] = Fraction(sum(prizes[k] if k < len(prizes) else 0 for k in tied), len(tied))
    else:
        weight = {i: Fraction(chips[i]) for i in range(n)}
    capped: set[int] = set()
    while True:
        free_players = [i for i in range(n) if i not in capped]
        rest = len(free_players)
        free = pool - len(capped) * (cap or 0) - rest * floor
        total = sum(weight[i] for i in free_players)
        x = {}
        for i in free_players:
            if formula == "even":
                share = Fraction(free, rest)
            elif formula == "chip_proportional":
                share = free * weight[i] / total
            else:
                share = Fraction(free, 2) * weight[i] / total + Fraction(free, 2 * rest)
            x[i] = floor + share
        over = [i for i in free_players if cap is not None and x[i] > cap]
        if not over:
            break
        capped.update(over)
    return [Fraction(cap) if i in capped else x[i] for i in range(n)]


def exact(result, i):
    return result.explain(i, "-", 0).exact


def test_the_worked_example_of_rules_section_7():
    result = split(
        10000, [60000, 30000, 10000], ["a", "b", "c"], formula="chip_equity", floor=2000, cap=5000
    )
    assert [exact(result, i) for i in range(3)] == [
        Fraction(11600, 3),
        Fraction(9800, 3),
        Fraction(8600, 3),
    ]
    assert result.amounts == [3867, 3267, 2866]
    assert result.cents == [1, 1, 0]  # equal fractions (⅔), so the most chips first


def test_chip_proportional_and_even():
    assert split(1000, [3, 1], ["a", "b"], formula="chip_proportional").amounts == [750, 250]
    assert split(1000, [3, 1], ["a", "b"], formula="even").amounts == [500, 500]


def test_chip_position_uses_prizes_by_rank_and_shares_ties():
    chips = [10, 50, 50, 5]
    order = tie_break_order(chips, ["a", "b", "c", "d"])
    assert order == [1, 2, 0, 3]
    weights, scale = position_weights(chips, order, (500, 300, 200, 100))
    assert weights[1] == 400 * scale
    # b and c tie for ranks 1-2 and share (500 + 300) / 2 = 400: ratios 400 : 400 : 200 : 100.
    assert weights[1] == weights[2] == 2 * weights[0] == 4 * weights[3]
    result = split(
        1100, chips, ["a", "b", "c", "d"], formula="chip_position", prizes=(500, 300, 200, 100)
    )
    # x = 1100/2 · w/1100 + 1100/8: a = 100 + 137.5, b = c = 200 + 137.5, d = 50 + 137.5.
    assert [exact(result, i) for i in range(4)] == [
        Fraction(475, 2),
        Fraction(675, 2),
        Fraction(675, 2),
        Fraction(375, 2),
    ]


def test_the_cap_loop_can_take_several_rounds():
    # Round 1 caps a; the excess it leaves lifts b above the cap in round 2.
    chips = [1000, 400, 100, 100]
    result = split(1000, chips, list("abcd"), formula="chip_proportional", cap=300)
    ref = reference(1000, chips, formula="chip_proportional", cap=300)
    assert ref[0] == ref[1] == 300
    assert [exact(result, i) for i in range(4)] == ref
    assert result.amounts == [300, 300, 200, 200]
    assert result.capped == {0, 1}


def test_guaranteed_amount_is_paid_first():
    result = split(10000, [1, 1, 98], list("abc"), formula="chip_proportional", floor=2000)
    assert [exact(result, i) for i in range(3)] == [
        Fraction(2040),
        Fraction(2040),
        Fraction(5920),
    ]


def test_rounding_gives_leftover_cents_by_largest_fraction():
    # 10 split 3 ways -> 3⅓ each, one cent left: chips are equal, so the smallest id wins.
    assert split(10, [5, 5, 5], ["b", "a", "c"], formula="even").amounts == [3, 4, 3]
    # Unequal fractions: 11 by chips 5:3:3 -> 5, 3, 3 exactly.
    assert split(11, [5, 3, 3], list("abc"), formula="chip_proportional").amounts == [5, 3, 3]
    # 10 by chips 2:1 -> 6⅔ and 3⅓: the larger fraction (⅔) takes the cent.
    assert split(10, [2, 1], list("ab"), formula="chip_proportional").amounts == [7, 3]


def test_rounding_ties_go_to_more_chips_then_smaller_id_in_code_point_order():
    # Even split of 5 among 3: one 2-cent leftover to the two with most chips.
    assert split(5, [1, 3, 2], list("abc"), formula="even").amounts == [1, 2, 2]
    # Equal chips: code-point order puts "B" and "Z" before "a", and "p10" before "p9".
    ids = ["a", "Z", "B", "p9", "p10"]
    result = split(7, [1] * 5, ids, formula="even")
    assert dict(zip(ids, result.amounts, strict=True)) == {
        "a": 1,
        "Z": 2,
        "B": 2,
        "p9": 1,
        "p10": 1,
    }


def test_a_capped_player_never_gains_a_cent():
    # a is capped at 350; b and c share 1001 - 350 - 2·300 = 51 evenly: 325½ each, so one cent
    # is left over, and it goes to b (equal chips, smaller id), never to a.
    result = split(1001, [10**6, 1, 1], list("abc"), formula="chip_equity", floor=300, cap=350)
    assert result.amounts == [350, 326, 325]
    assert result.cents == [0, 1, 0]


def test_bounds_that_cannot_hold():
    with pytest.raises(BoundsError) as low:
        split(100, [1, 1], list("ab"), formula="even", floor=51)
    assert low.value.which == "floor"
    with pytest.raises(BoundsError) as high:
        split(100, [1, 1], list("ab"), formula="even", cap=49)
    assert high.value.which == "cap"
    # n·H = Q exactly: everyone is paid the cap.
    assert split(100, [9, 1], list("ab"), formula="chip_equity", cap=50).amounts == [50, 50]
    # n·L = Q exactly: everyone is paid the floor.
    assert split(100, [9, 1], list("ab"), formula="chip_equity", floor=50).amounts == [50, 50]


@settings(deadline=None)
@given(
    data=st.data(),
    formula=st.sampled_from(["even", "chip_equity", "chip_proportional", "chip_position"]),
)
def test_split_equals_the_literal_loop_and_rounds_to_the_pool(data, formula):
    n = data.draw(st.integers(1, 9), label="players")
    chips = data.draw(st.lists(st.integers(1, 40), min_size=n, max_size=n), label="chips")
    ids = [f"id{i}" for i in data.draw(st.permutations(range(n)), label="ids")]
    prizes = tuple(
        sorted(data.draw(st.lists(st.integers(1, 500), min_size=n, max_size=n)), reverse=True)
    )
    pool = data.draw(st.integers(0, 5000), label="pool")
    floor = data.draw(st.integers(0, pool // n), label="floor")
    cap = data.draw(st.none() | st.integers(-(-pool // n), pool + 1), label="cap")
    if cap is not None and cap < floor:
        cap = floor
    result = split(pool, chips, ids, formula=formula, floor=floor, cap=cap, prizes=prizes)
    ref = reference(pool, chips, formula=formula, floor=floor, cap=cap, prizes=prizes)
    assert [exact(result, i) for i in range(n)] == ref
    assert sum(result.amounts) == pool
    for i in range(n):
        assert ref[i] - 1 < result.amounts[i] < ref[i] + 1
        assert floor <= result.amounts[i] and (cap is None or result.amounts[i] <= cap)
