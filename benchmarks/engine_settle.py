"""Benchmark: `manage.py settle` and the rules engine on 300,000-entrant snapshots.

Run from the project root:  .venv/bin/python benchmarks/engine_settle.py [--entrants N]
    [--smallest]

For each scenario it prints the best of 3 wall-clock times of the whole command in a fresh
process (interpreter start, Django set-up, read, parse, settle, JSON out) with that process's
peak resident memory, and of the engine alone in this process (parse + settle + JSON encoding)
with its peak Python allocation (tracemalloc). The goal is under 2 s end to end.

It also times the checks the desk adds on a snapshot's ids when it loads one
(settlements.player_ids: characters, NFC, look-alike skeletons), on the ids as they are (ASCII)
and on the same ids in Cyrillic, the slower path for text outside ASCII. ``--smallest`` (CI):
1,000 entrants, each step once.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _snapshots import write_snapshot  # noqa: E402

from settlements import player_ids  # noqa: E402
from settlements.rules import parse_snapshot, settle  # noqa: E402

RUNS = 3


def scenarios(folder: Path, entrants: int) -> list[tuple[str, Path, list[str]]]:
    plan = [
        # 40 % eliminated, 15 % paid: middle stage, 180,000 players share P.
        ("regular middle", "regular", "middle", []),
        # Two thirds of the paid places still to play for: late stage.
        ("regular late", "regular", "late", []),
        ("satellite middle", "satellite", "middle", ["--decision", "chip_equity"]),
    ]
    cases = []
    for seed, (name, type_, stage, extra) in enumerate(plan):
        path = folder / (name.replace(" ", "-") + ".json")
        write_snapshot(
            path,
            tournament_id=f"BENCH-{type_[0].upper()}",
            type=type_,
            stage=stage,
            entrants=entrants,
            seed=seed,
        )
        cases.append((name, path, extra))
    return cases


def time_command(path: Path, extra: list[str]) -> tuple[float, int]:
    """Best wall time of RUNS command runs, and the largest peak RSS (KiB) among them."""
    best, peak = float("inf"), 0
    command = [sys.executable, "manage.py", "settle", str(path), *extra]
    for _ in range(RUNS):
        with open(os.devnull, "wb") as sink, tempfile.TemporaryFile() as errors:
            start = time.perf_counter()
            child = subprocess.Popen(command, cwd=ROOT, stdout=sink, stderr=errors)
            _, status, usage = os.wait4(child.pid, 0)
            elapsed = time.perf_counter() - start
            child.returncode = os.waitstatus_to_exitcode(status)
            if child.returncode != 0:
                errors.seek(0)
                raise SystemExit(f"settle failed on {path.name}: {errors.read().decode()}")
        best, peak = min(best, elapsed), max(peak, usage.ru_maxrss)
    return best, peak


def time_engine(data: bytes, extra: list[str]) -> tuple[float, int, object]:
    """Best in-process time of parse + settle + JSON, the peak traced allocation, the result."""
    decision = extra[1] if extra else None
    best = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        result = settle(parse_snapshot(data), decision=decision)
        result.to_json()
        best = min(best, time.perf_counter() - start)
    tracemalloc.start()
    settle(parse_snapshot(data), decision=decision).to_json()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak, result


def time_id_checks(ids: list[str]) -> float:
    """Best time of the desk's id checks (each id's characters, then look-alike pairs)."""
    best = float("inf")
    for _ in range(RUNS):
        start = time.perf_counter()
        assert not player_ids.id_problems(ids) and not player_ids.look_alikes(ids)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--smallest", action="store_true", help="1,000 entrants, each step once")
    args = parser.parse_args()
    entrants = args.entrants
    if args.smallest:
        global RUNS
        entrants, RUNS = 1000, 1
    with tempfile.TemporaryDirectory() as folder:
        cases = scenarios(Path(folder), entrants)
        commands = [time_command(path, extra) for _, path, extra in cases]
        rows = []
        for (name, path, extra), (command, rss) in zip(cases, commands, strict=True):
            data = path.read_bytes()
            engine, traced, result = time_engine(data, extra)
            rows.append(
                (name, result.stage, result.remaining, len(data), command, rss, engine, traced)
            )
    print(f"settle, {entrants:,} entrants, best of {RUNS}; Python {sys.version.split()[0]}")
    print(
        f"{'scenario':<17} {'stage':<7} {'remaining':>9} {'snapshot':>9} {'command':>8} "
        f"{'peak RSS':>9} {'engine':>7} {'peak alloc':>10}"
    )
    for name, stage, remaining, size, command, rss, engine, traced in rows:
        print(
            f"{name:<17} {stage:<7} {remaining:>9,} {size / 2**20:>7.1f}MB {command:>7.2f}s "
            f"{rss / 1024:>7.0f}MB {engine:>6.2f}s {traced / 2**20:>8.0f}MB"
        )
    worst = max(row[4] for row in rows)
    verdict = "within" if worst < 2 else "OVER"
    print(f"slowest end to end: {worst:.2f} s, {verdict} the 2 s goal")
    ids = [player.id for player in parse_snapshot(data).players]
    cyrillic = [player.replace("player", "игрок") for player in ids]
    print(
        f"id checks when the desk loads it: {time_id_checks(ids):.2f} s (ASCII ids), "
        f"{time_id_checks(cyrillic):.2f} s (Cyrillic ids)"
    )


if __name__ == "__main__":
    main()
