"""Benchmark: the ICM second opinion's engine (settlements.rules.icm), no database.

Run from the project root:  .venv/bin/python benchmarks/icm.py [--samples 1000] [--players 10000]
    [--smallest]

1. Exact values by dynamic programming over subsets: the time for fields where every place
   pays a different prize (the costliest shape), from 6 players up until one takes over a
   second, with the work units the engine counts for each and whether the exact way is chosen
   (EXACT_WORK_LIMIT); then a few fields with few paid places, where far larger fields stay
   exact.
2. Sampling: a 300,000-entrant regular tournament in its late stage (45,000 paid places, the
   10,000 players left all in the money): the time for the samples in batches as the background
   job draws them, and the standard errors they give.

``--smallest`` (CI): the exact fields stop once one takes over 10 ms, and 100 players are
sampled 2 batches deep.
"""

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from settlements.rules import icm  # noqa: E402


def falling_prizes(rng: random.Random, places: int, pool: int) -> list[int]:
    """`places` strictly falling prizes adding up to `pool` (a steep top, a long flat tail)."""
    weights = sorted((rng.random() ** 3 + 1e-3 for _ in range(places)), reverse=True)
    total = sum(weights)
    prizes = [int(pool * w / total) for w in weights]
    prizes[0] += pool - sum(prizes)
    return prizes


def exact_fields(seed: int, longest: float) -> None:
    rng = random.Random(seed)
    print("Exact, every place a different prize (chips up to 10,000,000 each):")
    print(f"{'players':>8} {'work units':>14} {'chosen':>8} {'time':>9}")
    for players in range(6, 16):
        chips = [rng.randint(1, 10**7) for _ in range(players)]
        prizes = sorted(rng.sample(range(1, 10**6), players), reverse=True)
        work = icm.exact_work(players, prizes, cap=10**12)
        start = time.perf_counter()
        icm.exact_equity(chips, prizes)
        elapsed = time.perf_counter() - start
        chosen = "exact" if work <= icm.EXACT_WORK_LIMIT else "sampled"
        print(f"{players:>8} {work:>14,} {chosen:>8} {elapsed:>8.3f}s")
        if elapsed > longest:
            break
    print("\nExact, few paid places (the rest of the field paid nothing):")
    print(f"{'players':>8} {'paid':>5} {'work units':>14} {'chosen':>8} {'time':>9}")
    for players, paid in ((20, 3), (30, 3), (40, 3), (100, 2), (30, 4)):
        chips = [rng.randint(1, 10**7) for _ in range(players)]
        prizes = sorted(rng.sample(range(1, 10**6), paid), reverse=True)
        work = icm.exact_work(players, prizes, cap=10**12)
        chosen = "exact" if work <= icm.EXACT_WORK_LIMIT else "sampled"
        if chosen == "sampled":
            print(f"{players:>8} {paid:>5} {work:>14,} {chosen:>8}  (not timed)")
            continue
        start = time.perf_counter()
        icm.exact_equity(chips, prizes)
        print(
            f"{players:>8} {paid:>5} {work:>14,} {chosen:>8} {time.perf_counter() - start:>8.3f}s"
        )


def sampled_field(players: int, samples: int, seed: int) -> None:
    rng = random.Random(seed)
    entrants, buy_in = 300_000, 1_000
    prizes = falling_prizes(rng, 45_000, entrants * buy_in)[:players]
    chips = [rng.randint(1_000, 2_000_000) for _ in range(players)]
    print(
        f"\nSampled: {players:,} players left of {entrants:,} entrants (late stage), "
        f"{samples:,} finishing orders in batches of {icm.BATCH}:"
    )
    sums, squares = [0] * players, [0] * players
    batch_times = []
    start = time.perf_counter()
    for batch, size in enumerate(icm.batch_sizes(samples)):
        began = time.perf_counter()
        more, more_squares = icm.sample_batch(chips, prizes, seed=seed, batch=batch, size=size)
        sums = [a + b for a, b in zip(sums, more, strict=True)]
        squares = [a + b for a, b in zip(squares, more_squares, strict=True)]
        batch_times.append(time.perf_counter() - began)
    sampled = time.perf_counter() - start
    began = time.perf_counter()
    means, errors = icm.estimate(icm.sure_prize(prizes, players), sums, squares, samples)
    amounts = icm.round_to_units(means, chips, [f"p{i:06d}" for i in range(players)])
    finished = time.perf_counter() - began
    print(f"  sampling: {sampled:.1f} s ({statistics.median(batch_times):.2f} s a batch)")
    print(f"  means, standard errors and rounding: {finished:.2f} s")
    print(f"  prizes in play {sum(prizes):,}, values add up to {sum(amounts):,}")
    ranked = sorted(range(players), key=chips.__getitem__, reverse=True)
    leader = ranked[0]
    print(
        f"  chip leader: value {amounts[leader]:,} ± {errors[leader]:,}; "
        f"median standard error {statistics.median(errors):,}, largest {max(errors):,} "
        "(minor units)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--smallest", action="store_true", help="a few small fields, for CI")
    args = parser.parse_args()
    longest = 1.0
    if args.smallest:
        args.players, args.samples, longest = 100, 2 * icm.BATCH, 0.01
    print(f"load average {os.getloadavg()[0]:.2f}\n")
    exact_fields(args.seed, longest)
    sampled_field(args.players, args.samples, args.seed)
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
