"""Splits by groups of equal chips: the rounding of RULES.md §4 done once per group."""

from settlements.rules.groups import ChipGroups, holding_at_least, round_groups


def test_groups_hold_the_distinct_stacks_most_first():
    groups = ChipGroups([5, 3, 5, 1, 5])
    assert (groups.values, groups.sizes, groups.firsts) == ([5, 3, 1], [3, 1, 1], [0, 3, 4, 5])


def test_the_group_sharing_the_last_cents_gives_them_by_id():
    chips, ids = [2, 2, 2], ["c", "a", "b"]
    # 10 among three equal stacks: 3⅓ each, one cent left, to the smallest id.
    rounded = round_groups(10, [10], 3, ChipGroups(chips), chips, ids, ids_sorted=False)
    assert rounded.amounts == [3, 4, 3] and rounded.leftover == 1
    assert rounded.rounded_down == [3]
    in_id_order = round_groups(10, [10], 3, ChipGroups(chips), chips, sorted(ids), ids_sorted=True)
    assert in_id_order.amounts == [4, 3, 3]


def test_equal_fractions_across_groups_go_to_more_chips_first():
    chips, ids = [1, 2, 1], ["a", "b", "c"]
    # 4 among three players, 1⅓ each whatever their chips: the one cent left goes to b, who
    # holds the most, although a comes first by id.
    rounded = round_groups(4, [4, 4], 3, ChipGroups(chips), chips, ids, ids_sorted=True)
    assert rounded.amounts == [1, 2, 1]


def test_a_whole_group_takes_a_cent_before_a_smaller_fraction():
    chips, ids = [3, 3, 1], ["a", "b", "c"]
    # Group 3 chips: 7/4 each (fraction ¾); group 1 chip: 6/4 (fraction ½); 5 = 1+1+1 + 2 left.
    rounded = round_groups(5, [7, 6], 4, ChipGroups(chips), chips, ids, ids_sorted=True)
    assert rounded.amounts == [2, 2, 1] and rounded.leftover == 2


def test_holding_at_least():
    assert holding_at_least([5, 1, 7, 5], 5) == frozenset({0, 2, 3})
