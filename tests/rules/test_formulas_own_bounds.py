"""§8's split with a guaranteed amount and a cap per player (regular middle stage)."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from settlements.rules.formulas import BoundsError, split

from .test_properties import PROPERTY_SETTINGS


def own_split(pool, chips, floors, first_prize, formula="chip_equity"):
    ids = [f"p{i:02d}" for i in range(len(chips))]
    caps = [max(first_prize, floor) for floor in floors]
    return split(pool, chips, ids, formula=formula, floors=floors, caps=caps, ids_sorted=True)


def test_a_player_whose_own_buy_ins_exceed_the_first_prize_gets_them_back_and_no_more():
    # The whale paid 10,000 and holds the fewest chips: its cap is its own buy-ins.
    result = own_split(19000, [1000, 20000, 18000, 9000, 8000], [10000] + [1000] * 4, 8550)
    assert result.amounts[0] == 10000 and 0 in result.capped
    assert sum(result.amounts) == 19000
    assert result.summary.capped_total == 10000 and result.summary.own_floors == 4000


@PROPERTY_SETTINGS
@given(
    data=st.lists(
        st.tuples(st.integers(1, 10**6), st.integers(1, 6), st.integers(0, 2)),
        min_size=1,
        max_size=25,
    ),
    extra=st.integers(0, 10**5),
    first_share=st.integers(1, 100),
    formula=st.sampled_from(["chip_equity", "chip_proportional", "even"]),
)
def test_own_bounds_hold_and_explanations_add_up(data, extra, first_share, formula):
    chips = [c for c, _, _ in data]
    floors = [1000 * e + 500 * a for _, e, a in data]
    pool = sum(floors) + extra
    first_prize = max(1, pool * first_share // 100)
    try:
        result = own_split(pool, chips, floors, first_prize, formula)
    except BoundsError:
        assert sum(max(first_prize, f) for f in floors) < pool
        return
    assert sum(result.amounts) == pool
    for i, amount in enumerate(result.amounts):
        assert floors[i] <= amount <= max(first_prize, floors[i])
        explained = result.explain(i, f"p{i:02d}", chips[i])
        assert explained.guaranteed == floors[i]
        assert abs(explained.exact - amount) < 1 and explained.rounded == amount
        exact, share, denominator = result.terms(i)
        assert Fraction(exact, denominator) == explained.exact
        assert Fraction(share, denominator) == explained.share


def test_floors_above_the_pool_cannot_hold():
    with pytest.raises(BoundsError):
        own_split(1000, [5, 5], [600, 600], 1000)


def test_the_stored_explanation_terms_carry_each_players_own_guarantee():
    from settlements.rules.settlement import SplitPart

    chips, floors = [1000, 20000, 18000], [10000, 1000, 2000]
    result = own_split(19000, chips, floors, 8550)
    terms = SplitPart(["p00", "p01", "p02"], chips, result).terms_column()
    assert [each.guaranteed for each in terms] == floors


@pytest.mark.parametrize("pool", [19000, 45000])
def test_one_cap_for_everyone_splits_as_a_list_of_that_cap(pool):
    # 45,000 puts the chip leader over the cap, so the rooms are built after all.
    chips, floors = [90000, 20000, 18000, 9000, 8000], [2000, 1000, 3000, 1000, 1000]
    ids = [f"p{i:02d}" for i in range(len(chips))]
    by_list = split(pool, chips, ids, formula="chip_equity", floors=floors, caps=[12000] * 5)
    one = split(pool, chips, ids, formula="chip_equity", floors=floors, cap=12000)
    assert one.amounts == by_list.amounts and one.capped == by_list.capped
    assert one.summary == by_list.summary and one.cap == by_list.cap == 12000
    assert bool(one.capped) == (pool == 45000)


def test_equal_stacks_with_their_own_guarantees_are_explained_apart():
    from settlements.rules.settlement import SplitPart

    chips, floors = [1000, 1000, 1000], [1000, 2000, 1000]
    result = own_split(7000, chips, floors, 7000)
    terms = SplitPart(["p00", "p01", "p02"], chips, result).terms_column()
    assert [each.guaranteed for each in terms] == floors
    assert terms[0] is terms[2]
    assert terms[1].exact == terms[0].exact + 1000 * terms[0].denominator
