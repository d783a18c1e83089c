"""Players grouped by equal chips, for RULES.md §4's splits at C speed.

Every formula pays players with equal chips the same exact amount (their weights are equal,
so is being over the cap), and §4's rounding ranks equal fractional parts by chips, then by
id. So a split's arithmetic and the ranking of its fractional parts are done once per group,
and each player's amount is a lookup of their chips; only the group that receives the last of
the leftover cents is divided, by id. With G distinct stacks among n players that is G
big-integer operations and a sort of G groups, plus a few passes over the players at C speed,
instead of big integers and two sorts per player.
"""

from collections import Counter
from itertools import accumulate, compress, repeat
from operator import le, mul
from typing import NamedTuple


class ChipGroups:
    """The distinct chip counts, most first, with how many players hold each: group g holds
    the players at positions firsts[g] .. firsts[g] + sizes[g] - 1 of the chip order."""

    __slots__ = ("firsts", "sizes", "values")

    def __init__(self, chips: list[int]):
        counts = Counter(chips)
        self.values = sorted(counts, reverse=True)
        self.sizes = list(map(counts.__getitem__, self.values))
        self.firsts = list(accumulate(self.sizes, initial=0))

    def __len__(self) -> int:
        return len(self.values)


class Tables(NamedTuple):
    """Per chip count: the exact amount's numerator, the amount rounded down, the weight, and
    (chip position only) the places by chips."""

    numerators: dict[int, int]
    rounded_down: dict[int, int]
    weights: dict[int, int]
    places: dict[int, tuple[int, int]] | None


class Rounded(NamedTuple):
    amounts: list[int]  # each player's amount, aligned with the chips passed in
    leftover: int  # cents left after rounding down, given out one each
    rounded_down: list[int]  # each group's amount rounded down


def round_groups(
    pool: int,
    numerators: list[int],
    denominator: int,
    groups: ChipGroups,
    chips: list[int],
    ids: list[str],
    *,
    ids_sorted: bool,
) -> Rounded:
    """§4's rounding: every exact amount (numerators[g] / denominator for each player of group
    g) rounded down, then the cents left over one each to the largest fractional parts, ties
    to more chips, then to the smaller id."""
    sizes = groups.sizes
    rounded_down = [numerator // denominator for numerator in numerators]
    leftover = pool - sum(map(mul, rounded_down, sizes))
    paid = list(rounded_down)
    partial = None  # (group, cents) for the group whose players do not all get a cent
    if leftover:
        remainders = [x - q * denominator for x, q in zip(numerators, rounded_down, strict=True)]
        left = leftover
        # Stable, so equal fractional parts keep the groups' order: more chips first.
        for g in sorted(range(len(groups)), key=remainders.__getitem__, reverse=True):
            if left < sizes[g]:
                partial = (g, left)
                break
            paid[g] += 1
            left -= sizes[g]
            if not left:
                break
    by_chips = dict(zip(groups.values, paid, strict=True))
    amounts = list(map(by_chips.__getitem__, chips))
    if partial is not None:
        g, cents = partial
        for i in _first_by_id(chips, ids, groups.values[g], cents, ids_sorted=ids_sorted):
            amounts[i] += 1
    return Rounded(amounts, leftover, rounded_down)


def _first_by_id(chips: list[int], ids: list[str], value: int, count: int, *, ids_sorted: bool):
    """The positions of the first `count` players by id among those holding `value` chips."""
    found, i = [], -1
    for _ in range(count if ids_sorted else chips.count(value)):
        i = chips.index(value, i + 1)  # a scan at C speed
        found.append(i)
    return found if ids_sorted else sorted(found, key=ids.__getitem__)[:count]


def holding_at_least(chips: list[int], threshold: int) -> frozenset[int]:
    """The positions of the players holding `threshold` chips or more."""
    return frozenset(compress(range(len(chips)), map(le, repeat(threshold), chips)))
