"""RULES.md §4: splitting a pool among players, exactly, then rounding to cents.

Every player's amount is kept as an integer numerator over one common denominator, so nothing
but integers is ever computed; fractions.Fraction is only used to show an amount to a person.

The guaranteed amount L and the cap H follow the loop of §4, without its quadratic cost: within
one round every formula gives more to a larger weight, so the players over the cap are always
the top of the players sorted by weight. Taking the groups of equal chips in falling order
(groups.py), keeping prefix sums of their weights and binary-searching with integer comparisons
finds each round's capped players in O(log G) for G distinct stacks.
"""

from bisect import bisect_left
from fractions import Fraction
from itertools import accumulate, repeat
from math import lcm
from operator import add, mul, sub

from .groups import ChipGroups, Tables, holding_at_least, round_groups
from .split_result import Split, SplitSummary

# x_i = L + Q'·(a·w_i/W + b/n)/(a + b): the chip half weighs a, the even half weighs b.
_MIX = {"even": (0, 1), "chip_equity": (1, 1), "chip_proportional": (1, 0), "chip_position": (1, 1)}


class BoundsError(ValueError):
    """n·L > Q (`which` = "floor") or n·H < Q (`which` = "cap"): no split can honour both."""

    def __init__(self, which: str, message: str):
        super().__init__(message)
        self.which = which


def tie_break_order(chips: list[int], ids: list[str], *, ids_sorted: bool = False) -> list[int]:
    """Indices by chips, most first, then by player id in code-point order (§4's tie rule).

    `ids_sorted` says the players already come in id order, which saves one sort.
    """
    order = list(range(len(ids)))
    if not ids_sorted:
        order.sort(key=ids.__getitem__)
    order.sort(key=chips.__getitem__, reverse=True)  # stable, so equal chips stay in id order
    return order


def tie_groups(chips: list[int], order: list[int]) -> list[tuple[int, int]]:
    """(first position, size) of each run of equal chips along `order` (positions from 0)."""
    groups = []
    start = 0
    for p in range(1, len(order) + 1):
        if p == len(order) or chips[order[p]] != chips[order[start]]:
            groups.append((start, p - start))
            start = p
    return groups


def places_by_chips(order: list[int], groups: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Each player's places by chips, 1 = most, as (first, last) of their tie group."""
    places = [(0, 0)] * len(order)
    for first, size in groups:
        for p in range(first, first + size):
            places[order[p]] = (first + 1, first + size)
    return places


def position_weights(
    chips: list[int], order: list[int], prizes: tuple[int, ...]
) -> tuple[list[int], int]:
    """Chip position weights w_i = prize(rank), tied players sharing the mean of their ranks.

    The means are scaled by a common multiple of the tie-group sizes so the weights stay
    integers; only their ratios matter to the formula. Returns the weights and that scale.
    """
    groups = tie_groups(chips, order)
    scale = lcm(*(size for _, size in groups))
    weights = [0] * len(order)
    for first, size in groups:
        total = sum(prizes[k] for k in range(first, min(first + size, len(prizes))))
        for p in range(first, first + size):
            weights[order[p]] = total * (scale // size)
    return weights, scale


def split(
    pool: int,
    chips: list[int],
    ids: list[str],
    *,
    formula: str,
    floor: int = 0,
    cap: int | None = None,
    prizes: tuple[int, ...] = (),
    ids_sorted: bool = False,
    floors: list[int] | None = None,
    caps: list[int] | None = None,
) -> Split:
    """Split `pool` among the players: L = `floor` each first, nobody above `cap`, rounded.

    Players must all have chips > 0 for the chip formulas; `prizes` (prize(1..M)) is needed
    for chip position only; `ids_sorted` as for tie_break_order. `floors` and `caps` give
    each player their own L_i and H_i instead (RULES.md §8), for the chip formulas and even;
    `floors` without `caps` caps everyone at `cap`.
    """
    if floors is not None:
        bound = caps if caps is not None else cap
        return _split_own_bounds(pool, chips, ids, formula, floors, bound, ids_sorted=ids_sorted)
    n = len(chips)
    _check_bounds(pool, n, floor, cap)
    a, b = _MIX[formula]
    groups = ChipGroups(chips)
    weights, scale = _group_weights(formula, groups, prizes)
    # Along the groups the weights never increase: every formula's weight grows with chips.
    prefix = list(accumulate(map(mul, weights, groups.sizes), initial=0))
    if a and prefix[-1] <= 0:
        raise ValueError("chip formulas need players with chips")
    capped_groups = _count_capped(pool, weights, groups, prefix, floor=floor, cap=cap, mix=(a, b))
    capped = groups.firsts[capped_groups]
    rest = n - capped
    rest_weight = prefix[-1] - prefix[capped_groups]
    free = pool - (capped * cap if capped else 0) - rest * floor  # Q' of §4
    denominator = (a + b) * rest_weight * rest
    slope = free * a * rest
    base = floor * denominator + free * b * rest_weight
    numerators = [cap * denominator] * capped_groups if capped else []
    numerators += [base + slope * w for w in weights[capped_groups:]]
    rounded = round_groups(pool, numerators, denominator, groups, chips, ids, ids_sorted=ids_sorted)
    summary = SplitSummary(
        formula=formula,
        pool=pool,
        players=n,
        total_weight=Fraction(prefix[-1], scale),
        floor=floor,
        cap=cap,
        capped=capped,
        rest_pool=free,
        rest_players=rest,
        rest_weight=Fraction(rest_weight, scale),
        chip_share=Fraction(a, a + b),
        leftover=rounded.leftover,
    )
    return Split(
        formula=formula,
        pool=pool,
        floor=floor,
        cap=cap,
        denominator=denominator,
        capped=holding_at_least(chips, groups.values[capped_groups - 1]) if capped else frozenset(),
        amounts=rounded.amounts,
        summary=summary,
        weight_scale=scale,
        chips=chips,
        tables=_tables(groups, numerators, rounded.rounded_down, weights, formula),
    )


def _tables(
    groups: ChipGroups, numerators: list[int], rounded_down: list[int], weights, formula: str
) -> Tables:
    places = None
    if formula == "chip_position":
        ranges = [
            (first + 1, first + size)
            for first, size in zip(groups.firsts[:-1], groups.sizes, strict=True)
        ]
        places = dict(zip(groups.values, ranges, strict=True))
    return Tables(
        dict(zip(groups.values, numerators, strict=True)),
        dict(zip(groups.values, rounded_down, strict=True)),
        dict(zip(groups.values, weights, strict=True)),
        places,
    )


def _group_weights(
    formula: str, groups: ChipGroups, prizes: tuple[int, ...]
) -> tuple[list[int], int]:
    """What the formula weighs each group's players by, and the scale of those weights: for
    chip position the prize of their chip rank, tied players sharing the mean of their ranks'
    prizes (as position_weights)."""
    if formula == "chip_position":
        scale = lcm(*groups.sizes)
        return [
            sum(prizes[first : first + size]) * (scale // size)
            for first, size in zip(groups.firsts[:-1], groups.sizes, strict=True)
        ], scale
    if formula == "even":
        return [1] * len(groups), 1
    return list(groups.values), 1


def _split_own_bounds(
    pool: int,
    chips: list[int],
    ids: list[str],
    formula: str,
    floors: list[int],
    caps: list[int] | int,
    *,
    ids_sorted: bool,
) -> Split:
    """§4's loop with a guaranteed amount L_i and a cap H_i per player (`caps` one int when
    every H_i is the same).

    Each player's L_i is an integer, so it changes neither the fractional parts nor the
    rounding: the formula shares Q − Σ L_i, each share at most the player's room H_i − L_i,
    and L_i is added back. Unlike one L and one H, the players over their rooms are not the top
    weights, so a round that caps anyone checks everyone; when the largest share fits the
    smallest room (the usual case) there is no such round, and equal chips still share equally.
    """
    n = len(chips)
    if n == 0:
        raise ValueError("a split needs at least one player")
    guaranteed = sum(floors)
    if guaranteed > pool:
        raise BoundsError("floor", f"the guaranteed amounts {guaranteed} exceed the pool {pool}")
    # One cap for all (the usual case) needs no list of rooms unless somebody reaches it.
    one_cap = isinstance(caps, int)
    total_caps, smallest_cap = (caps * n, caps) if one_cap else (sum(caps), min(caps))
    if total_caps < pool:
        raise BoundsError("cap", f"the caps add up to {total_caps}, less than the pool {pool}")
    a, b = _MIX[formula]
    groups = ChipGroups(chips)
    weights = [1] * len(groups) if formula == "even" else groups.values
    shared = pool - guaranteed
    rest_weight = sum(map(mul, weights, groups.sizes))
    denominator = (a + b) * rest_weight * n
    slope, base = shared * a * n, shared * b * rest_weight
    rooms = None if one_cap else list(map(sub, caps, floors))
    smallest_room = caps - max(floors) if one_cap else min(rooms)
    if base + slope * weights[0] > smallest_room * denominator:
        if rooms is None:
            rooms = list(map(sub, repeat(caps, n), floors))
        return _split_capping_rooms(pool, chips, ids, formula, floors, rooms, ids_sorted)
    numerators = [base + slope * w for w in weights]
    rounded = round_groups(
        shared, numerators, denominator, groups, chips, ids, ids_sorted=ids_sorted
    )
    return Split(
        formula=formula,
        pool=pool,
        floor=0,
        cap=smallest_cap,  # the cap of everyone whose own payments stay below it
        denominator=denominator,
        capped=frozenset(),
        amounts=list(map(add, rounded.amounts, floors)),
        summary=_own_summary(
            formula,
            pool,
            players=n,
            total_weight=rest_weight,
            cap=smallest_cap,
            rest_pool=shared,
            rest_players=n,
            rest_weight=rest_weight,
            capped=0,
            leftover=rounded.leftover,
            own_floors=guaranteed,
            capped_total=0,
        ),
        weight_scale=1,
        chips=chips,
        tables=_tables(groups, numerators, rounded.rounded_down, weights, formula),
        floors=list(floors),
    )


def _own_summary(
    formula: str,
    pool: int,
    *,
    players: int,
    total_weight: int,
    cap: int,
    rest_pool: int,
    rest_players: int,
    rest_weight: int,
    capped: int,
    leftover: int,
    own_floors: int,
    capped_total: int,
) -> SplitSummary:
    """The figures of a split with each player's own L_i and H_i (no one L: ``floor`` is 0)."""
    a, b = _MIX[formula]
    return SplitSummary(
        formula=formula,
        pool=pool,
        players=players,
        total_weight=Fraction(total_weight),
        floor=0,
        cap=cap,
        capped=capped,
        rest_pool=rest_pool,
        rest_players=rest_players,
        rest_weight=Fraction(rest_weight),
        chip_share=Fraction(a, a + b),
        leftover=leftover,
        own_floors=own_floors,
        capped_total=capped_total,
    )


def _split_capping_rooms(
    pool: int,
    chips: list[int],
    ids: list[str],
    formula: str,
    floors: list[int],
    rooms: list[int],
    ids_sorted: bool,
) -> Split:
    """_split_own_bounds when somebody's share can exceed their room: player by player."""
    n = len(chips)
    a, b = _MIX[formula]
    order = tie_break_order(chips, ids, ids_sorted=ids_sorted)
    weights = [1] * n if formula == "even" else chips
    shared = pool - sum(floors)
    free_players = list(range(n))
    capped: set[int] = set()
    while True:
        free = shared - sum(rooms[i] for i in capped)
        rest, rest_weight = len(free_players), sum(weights[i] for i in free_players)
        if not rest:  # only when the caps add up to the pool exactly
            denominator, free, rest_weight = 1, 0, 0
            break
        denominator = (a + b) * rest_weight * rest
        slope, base = free * a * rest, free * b * rest_weight
        shares = [base + slope * w for w in weights]
        over = [i for i in free_players if shares[i] > rooms[i] * denominator]
        if not over:
            break
        capped.update(over)
        free_players = [i for i in free_players if i not in capped]
    shares = [0] * n if not rest else shares
    for i in capped:
        shares[i] = rooms[i] * denominator
    cents, amounts, leftover = _round_down_and_share_cents(shared, shares, denominator, order)
    caps = list(map(add, rooms, floors))
    summary = _own_summary(
        formula,
        pool,
        players=n,
        total_weight=sum(weights),
        cap=min(caps),
        rest_pool=free,
        rest_players=rest,
        rest_weight=rest_weight,
        capped=len(capped),
        leftover=leftover,
        own_floors=sum(floors) - sum(floors[i] for i in capped),
        capped_total=sum(caps[i] for i in capped),
    )
    return Split(
        formula=formula,
        pool=pool,
        floor=0,
        cap=summary.cap,
        denominator=denominator,
        capped=frozenset(capped),
        amounts=list(map(add, amounts, floors)),
        summary=summary,
        weight_scale=1,
        chips=chips,
        numerators=shares,
        cents=cents,
        weights=list(weights),
        floors=list(floors),
    )


def _check_bounds(pool: int, n: int, floor: int, cap: int | None) -> None:
    if n == 0:
        raise ValueError("a split needs at least one player")
    if n * floor > pool:
        raise BoundsError(
            "floor", f"{n} players × the guaranteed {floor} = {n * floor} exceeds the pool {pool}"
        )
    if cap is not None and n * cap < pool:
        raise BoundsError(
            "cap", f"{n} players × the cap {cap} = {n * cap} cannot pay out the pool {pool}"
        )


def _count_capped(
    pool: int,
    weights: list[int],
    groups: ChipGroups,
    prefix: list[int],
    *,
    floor: int,
    cap: int | None,
    mix: tuple[int, int],
) -> int:
    """How many groups, the first along the falling weights, the cap holds: §4's loop, each
    round capping the players the formula puts over the cap, until it puts none."""
    a, b = mix
    n, count = groups.firsts[-1], len(groups)
    capped_groups = 0
    while cap is not None:
        capped = groups.firsts[capped_groups]
        rest = n - capped
        rest_weight = prefix[-1] - prefix[capped_groups]
        free = pool - capped * cap - rest * floor  # Q' of §4, never negative
        limit = (cap - floor) * (a + b) * rest_weight * rest
        slope, base = free * a * rest, free * b * rest_weight
        # Group g is over the cap iff base + slope·w_g > limit; since w falls along the groups,
        # "over" holds for a prefix of them: count it by bisecting on the weights.
        over = bisect_left(
            range(capped_groups, count), True, key=lambda g: not base + slope * weights[g] > limit
        )
        if over == 0:
            break
        capped_groups += over
    return capped_groups


def _round_down_and_share_cents(
    pool: int, numerators: list[int], denominator: int, order: list[int]
) -> tuple[list[int], list[int], int]:
    """Every exact amount rounded down, then the cents left over one each to the largest
    fractional parts: (each player's extra cent, the amounts, the cents left over)."""
    floors = [numerator // denominator for numerator in numerators]
    leftover = pool - sum(floors)
    cents = [0] * len(numerators)
    if leftover:
        remainders = [x - q * denominator for x, q in zip(numerators, floors, strict=True)]
        # Largest fractional part first; `order` already breaks ties by chips, then by id.
        for i in sorted(order, key=remainders.__getitem__, reverse=True)[:leftover]:
            cents[i] = 1
    amounts = [q + cent for q, cent in zip(floors, cents, strict=True)]
    return cents, amounts, leftover
