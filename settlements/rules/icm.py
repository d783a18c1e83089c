"""The Independent Chip Model (Malmuth–Harville): what each remaining stack is worth in prizes.

A reference for the Tournament Manager's judgement, never a rule that pays anyone. A player
finishes first with probability chips / all chips; each next place is drawn the same way among
the players not yet placed. A player's equity is the sum over places of the chance of finishing
there times that place's prize.

Two ways to the same model:

- **exact**, by dynamic programming over the sets of players who have taken the top places, in
  exact fractions. Only places whose prize is above the last place's need a set: every player
  is sure of the last place's prize, so it is added once. The work is counted beforehand
  (`exact_work`) and the exact way is used while it stays within `EXACT_WORK_LIMIT`, which keeps
  it under a second (docs/benchmarks.md).
- **sampled**, beyond that: finishing orders drawn from a seeded generator in the exponential
  race form of the same model (each player's finishing time is exponential with their chips as
  its rate; the earliest finishes first), each player's mean prize over the samples with its
  standard error. The same seed and sample count give the same figures again. The times are
  binary floats, as any sampling's are, but only their order is used: the prizes summed are
  integers and the means exact fractions.

Either way the values are exact until `round_to_units` rounds them to minor units (largest
remainder, ties to more chips and then the smaller player id, as RULES.md §4 rounds a split),
so the rounded amounts add up to exactly the prizes in play: that rounding is the only one.
"""

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .formulas import tie_break_order
from .snapshot import Snapshot
from .terms import Terms, terms_of

# In the units of exact_work: under a second on the shared benchmark machine even when busy
# (benchmarks/icm.py, docs/benchmarks.md): nine players with every place paying differently,
# or 100 players with two paid places.
EXACT_WORK_LIMIT = 2_000_000
DEFAULT_SAMPLES = 1_000
# Samples drawn per batch: a background job's step, and the grain of its progress.
BATCH = 100
# Where the policy's split depends on the chips: earlier, it refunds and splits evenly.
CHIP_STAGES = ("middle", "late")


def prizes_in_play(terms: Terms) -> list[int]:
    """The prize of each place the remaining players can still finish in, 1..R.

    Places below R were taken by players eliminated earlier (and, in the money, already paid by
    the tournament). A satellite's places are worth a seat at its ticket value, then the cash
    remainder, then nothing (satellite.position_value).
    """
    places = terms.remaining
    if terms.seat_value:
        seats = min(terms.seats, places)
        prizes = [terms.seat_value] * seats + [terms.remainder] * min(1, places - seats)
    else:
        prizes = list(terms.prizes[:places])
    return prizes + [0] * (places - len(prizes))


@dataclass(frozen=True, slots=True)
class Field:
    """The players still holding chips, in player id order, and the prizes they play for."""

    ids: list[str]
    chips: list[int]
    prizes: list[int]


def field_prizes(snapshot: Snapshot, stage: str) -> list[int] | None:
    """The prizes of the field the model values (prizes_in_play), or None where chips decide
    nothing in the policy's answer (pre and early stages) or nobody plays on against anyone.
    Its length is the field's size: enough to choose the exact way or sampling without
    sorting the field."""
    terms = terms_of(snapshot)
    if stage not in CHIP_STAGES or terms.remaining < 2:
        return None
    return prizes_in_play(terms)


def field_of(snapshot: Snapshot, stage: str) -> Field | None:
    """The field the model values, or None as for field_prizes."""
    prizes = field_prizes(snapshot, stage)
    if prizes is None:
        return None
    remaining = sorted((p.id, p.chips) for p in snapshot.players if p.chips > 0)
    return Field(
        ids=[player for player, _ in remaining],
        chips=[chips for _, chips in remaining],
        prizes=prizes,
    )


def _above_last(prizes: Sequence[int], n: int) -> tuple[int, list[int]]:
    """The prize every player is sure of (the last place's) and what each place pays above it,
    trimmed after the last place that pays more."""
    places = list(prizes[:n]) + [0] * (n - len(prizes))
    if any(a < b for a, b in zip(places, places[1:], strict=False)):
        raise ValueError("prizes must not increase with the place")
    sure = places[-1]
    extra = [p - sure for p in places]
    while extra and extra[-1] == 0:
        extra.pop()
    return sure, extra


def exact_work(players: int, prizes: Sequence[int], *, cap: int = EXACT_WORK_LIMIT) -> int:
    """What the exact way costs for this field, in arbitrary units: its steps (one per set of
    players placed and next player, for every place that pays more than the last) times its
    sets, since the fractions grow with every set's distinct chips left.

    Counted only up to `cap`: past it the count stops (a 180,000-player field with 45,000 paid
    places would otherwise spend minutes on binomials), so any answer above `cap` means "more"."""
    _, extra = _above_last(prizes, players)
    sets = steps = 0
    placed_sets = 1  # comb(players, k), kept as k grows
    for k in range(len(extra)):
        sets += placed_sets
        steps += placed_sets * (players - k)
        if sets * steps > cap:
            break
        placed_sets = placed_sets * (players - k) // (k + 1)
    return sets * steps


def fits_exact(players: int, prizes: Sequence[int]) -> bool:
    """Whether the exact way values this field within EXACT_WORK_LIMIT (else it is sampled)."""
    return exact_work(players, prizes) <= EXACT_WORK_LIMIT


def exact_equity(chips: Sequence[int], prizes: Sequence[int]) -> list[Fraction]:
    """Malmuth–Harville equity of each player, exactly, by dynamic programming over subsets."""
    _check_chips(chips)
    n = len(chips)
    sure, extra = _above_last(prizes, n)
    total = sum(chips)
    equity = [Fraction(sure)] * n
    # The chance of each set of players having taken the top places (bit i = player i), with
    # the chips they held; the order within the set no longer matters to what follows.
    reach: dict[int, tuple[Fraction, int]] = {0: (Fraction(1), 0)}
    for place, prize in enumerate(extra):
        last = place == len(extra) - 1
        chance_here = [Fraction(0)] * n  # Σ over sets of P(set) / chips left, per next player
        following: dict[int, tuple[Fraction, int]] = {}
        for placed, (chance, used) in reach.items():
            per_chip = chance / (total - used)
            for i in range(n):
                bit = 1 << i
                if placed & bit:
                    continue
                chance_here[i] += per_chip
                if not last:
                    key = placed | bit
                    step = per_chip * chips[i]
                    if key in following:
                        following[key] = (following[key][0] + step, used + chips[i])
                    else:
                        following[key] = (step, used + chips[i])
        for i in range(n):
            equity[i] += chance_here[i] * chips[i] * prize
        reach = following
    return equity


def sampled_equity(
    chips: Sequence[int],
    prizes: Sequence[int],
    *,
    seed: int,
    samples: int = DEFAULT_SAMPLES,
) -> tuple[list[Fraction], list[int]]:
    """Each player's mean prize over `samples` finishing orders drawn from `seed`, with its
    standard error in minor units (rounded up). A background job draws the same batches one
    step at a time (`sample_batch`) and gets the same figures."""
    n = len(chips)
    sums, squares = [0] * n, [0] * n
    for batch, size in enumerate(batch_sizes(samples)):
        batch_sums, batch_squares = sample_batch(chips, prizes, seed=seed, batch=batch, size=size)
        sums = [a + b for a, b in zip(sums, batch_sums, strict=True)]
        squares = [a + b for a, b in zip(squares, batch_squares, strict=True)]
    return estimate(sure_prize(prizes, n), sums, squares, samples)


def batch_sizes(samples: int) -> list[int]:
    """How `samples` are cut into batches of BATCH (the last one shorter)."""
    if samples < 2:
        raise ValueError("a standard error needs at least two samples")
    return [min(BATCH, samples - start) for start in range(0, samples, BATCH)]


def sure_prize(prizes: Sequence[int], players: int) -> int:
    """The last place's prize, which every player in the field is sure of."""
    return _above_last(prizes, players)[0]


def sample_batch(
    chips: Sequence[int], prizes: Sequence[int], *, seed: int, batch: int, size: int
) -> tuple[list[int], list[int]]:
    """One batch of finishing orders: per player, the sum of the prizes above the sure one
    they won and the sum of their squares. Batch k of a seed always draws the same orders,
    whichever batches ran before it."""
    _check_chips(chips)
    n = len(chips)
    _, extra = _above_last(prizes, n)
    paid = len(extra)
    # A generator per batch, seeded from the valuation's seed and the batch's number, so that
    # batches may run in any order or again after a worker is lost.
    draw = random.Random(f"{seed}/{batch}").random
    log = math.log
    rates = [float(c) for c in chips]
    sums, squares = [0] * n, [0] * n
    for _ in range(size):
        # -log(1 - U) / rate: written out rather than expovariate so that the figures never
        # depend on how a Python release implements it. 1 - U is never 0.
        times = [-log(1.0 - draw()) / rate for rate in rates]
        order = sorted(range(n), key=times.__getitem__)
        for i, prize in zip(order[:paid], extra, strict=True):
            sums[i] += prize
            squares[i] += prize * prize
    return sums, squares


def estimate(
    sure: int, sums: Sequence[int], squares: Sequence[int], samples: int
) -> tuple[list[Fraction], list[int]]:
    """Means (exact fractions) and standard errors (minor units, rounded up) of summed batches."""
    means = [sure + Fraction(s, samples) for s in sums]
    errors = [_standard_error(s, q, samples) for s, q in zip(sums, squares, strict=True)]
    return means, errors


def _standard_error(total: int, squares: int, samples: int) -> int:
    """sqrt(sample variance / samples), rounded up to a whole minor unit, in integers."""
    spread = samples * squares - total * total  # samples² · (samples - 1) · variance / samples
    scale = samples * samples * (samples - 1)
    error = math.isqrt(spread // scale)
    while error * error * scale < spread:
        error += 1
    return error


def round_to_units(
    values: Sequence[Fraction], chips: Sequence[int], ids: Sequence[str]
) -> list[int]:
    """Largest remainder to whole minor units, preserving the exact total (a whole number:
    the values share out integer prizes); ties to more chips, then the smaller id."""
    floors = [v.numerator // v.denominator for v in values]
    leftover = sum(values) - sum(floors)
    if leftover.denominator != 1:
        raise ValueError("the values do not add up to whole prizes")
    order = tie_break_order(list(chips), list(ids))
    remainders = [v - f for v, f in zip(values, floors, strict=True)]
    for i in sorted(order, key=remainders.__getitem__, reverse=True)[: int(leftover)]:
        floors[i] += 1
    return floors


def _check_chips(chips: Sequence[int]) -> None:
    if not chips or any(c <= 0 for c in chips):
        raise ValueError("every player in the model needs chips")
