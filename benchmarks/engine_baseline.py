"""Benchmark: the engine against a straightforward exact implementation, and start-up.

Run from the project root:  .venv/bin/python benchmarks/engine_baseline.py [--entrants N]
    [--smallest]

The straightforward implementation below is what the rules read as, written plainly: the
snapshot read with ``json.load`` into dicts, every amount a ``fractions.Fraction`` per player,
the guaranteed-amount and cap loop of RULES.md §4 recomputing every share each round, the
rounding by one sort of the fractional parts, the document built as dicts for ``json.dumps``.
It covers the three scenarios of ``engine_settle.py`` (regular middle and late, satellite
middle by chip equity) and must pay every player exactly what the engine pays, which is
checked before anything is timed.

Both are timed in this process, best CPU time of 3, from the snapshot's bytes to the
document's bytes. Beside them, the floor: the snapshot decoded and the engine's settlement
document encoded by msgspec, to and from plain objects (the fastest JSON codec here, with no
checks and no rules). No implementation that reads the snapshot and writes SNAPSHOT.md's
document can beat it, so the straightforward time over the floor is the largest ratio any
engine could reach (the straightforward implementation writes its lines only).
Then the start-up of the two commands that settle a file: ``python -m settlements.rules``
(the engine alone) and ``manage.py settle`` (Django set up first), each run with ``--help``
(start-up and nothing else), best of 5 wall and CPU. ``--smallest`` (CI): 1,000 entrants, each
command started once.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import msgspec  # noqa: E402
from _snapshots import write_snapshot  # noqa: E402

from settlements.rules import parse_snapshot, settle  # noqa: E402

RUNS = 3
STARTS = 5
SCENARIOS = [
    ("regular middle", "regular", "middle", None),
    ("regular late", "regular", "late", None),
    ("satellite middle", "satellite", "middle", "chip_equity"),
]


def split(remaining: list[dict], pool: int, floor: int, cap: int) -> dict[str, int]:
    """Chip equity over ``pool`` with ``floor`` first and ``cap`` at most (RULES.md §4),
    rounded to the unit by largest remainder."""
    chips = {player["id"]: player["chips"] for player in remaining}
    capped: dict[str, int] = {}
    while True:
        open_ = [name for name in chips if name not in capped]
        n, total = len(open_), sum(chips[name] for name in open_)
        rest = pool - sum(capped.values()) - n * floor
        shares = {
            name: floor + Fraction(rest * (chips[name] * n + total), 2 * total * n)
            for name in open_
        }
        over = [name for name, share in shares.items() if share > cap]
        if not over:
            break
        capped.update(dict.fromkeys(over, cap))
    shares.update(capped)
    amounts = {name: math.floor(share) for name, share in shares.items()}
    leftover = pool - sum(amounts.values())
    order = sorted(shares, key=lambda name: (amounts[name] - shares[name], -chips[name], name))
    for name in order[:leftover]:
        amounts[name] += 1
    return amounts


def straightforward(data: bytes) -> bytes:
    snapshot = json.loads(data)
    tournament, players = snapshot["tournament"], snapshot["players"]
    remaining = [player for player in players if player["chips"] > 0]
    entrants, left = len(players), len(remaining)
    if tournament["type"] == "satellite":
        seat = tournament["seat_value"]
        pool = entrants * tournament["buy_in"]
        amounts = split(remaining, pool, 0, seat)
        lines = []
        for name, value in amounts.items():
            if value >= seat:
                lines.append({"player": name, "kind": "ticket", "unit": "tickets", "amount": 1})
                value -= seat
            if value:
                lines.append({"player": name, "kind": "prize", "unit": "tdollars", "amount": value})
    else:
        prizes = tournament["payouts"]
        pool = max(entrants * tournament["buy_in"], tournament.get("guarantee", 0))
        if left <= len(prizes):  # late: the places below R already paid, prize(R) first
            pool -= sum(prizes[left:])
            amounts = split(remaining, pool, prizes[left - 1], prizes[0])
        else:  # middle: the buy-in first
            amounts = split(remaining, pool, tournament["buy_in"], prizes[0])
        lines = [
            {"player": name, "kind": "prize", "unit": "cash", "amount": value}
            for name, value in amounts.items()
        ]
    return json.dumps({"pool": pool, "lines": lines}).encode()


def paid(document: dict) -> dict[str, tuple[int, int, int]]:
    return {
        row["player"]: (row["cash"], row["tdollars"], row["tickets"])
        for row in document["payouts"]
        if row["cash"] or row["tdollars"] or row["tickets"]
    }


def paid_plainly(document: dict) -> dict[str, tuple[int, int, int]]:
    totals: dict[str, list[int]] = {}
    for line in document["lines"]:
        row = totals.setdefault(line["player"], [0, 0, 0])
        row[["cash", "tdollars", "tickets"].index(line["unit"])] += line["amount"]
    return {name: tuple(row) for name, row in totals.items()}


def best(work, *args) -> float:
    """Best CPU time (this process's) of RUNS calls: on a shared machine the wall time mostly
    measures the others."""
    times = []
    for _ in range(RUNS):
        start = time.process_time()
        work(*args)
        times.append(time.process_time() - start)
    return min(times)


def codec(data: bytes, document: object) -> None:
    msgspec.json.decode(data)
    msgspec.json.encode(document)


def startup(command: list[str]) -> tuple[float, float]:
    """Best wall and CPU time of ``command`` in a fresh process."""
    walls, cpus = [], []
    for _ in range(STARTS):
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
        _, _, usage = os.wait4(child.pid, 0)
        walls.append(time.perf_counter() - start)
        cpus.append(usage.ru_utime + usage.ru_stime)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--smallest", action="store_true", help="1,000 entrants, one start each")
    args = parser.parse_args()
    entrants = args.entrants
    if args.smallest:
        global STARTS
        entrants, STARTS = 1000, 1
    print(f"{entrants:,} entrants, best of {RUNS}; load average {os.getloadavg()}")
    print(
        f"{'scenario':<17} {'engine':>7} {'straightforward':>15} {'ratio':>6} {'floor':>6} "
        f"{'largest ratio':>13}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for seed, (name, type_, stage, decision) in enumerate(SCENARIOS):
            path = Path(folder) / f"{seed}.json"
            write_snapshot(
                path, tournament_id="B", type=type_, stage=stage, entrants=entrants, seed=seed
            )
            data = path.read_bytes()

            def engine(data=data, decision=decision):
                return settle(parse_snapshot(data), decision=decision).to_json()

            document = json.loads(engine())
            assert paid(document) == paid_plainly(json.loads(straightforward(data)))
            fast, plain = best(engine), best(straightforward, data)
            floor = best(codec, data, document)
            print(
                f"{name:<17} {fast:>6.2f}s {plain:>14.2f}s {plain / fast:>5.1f}x {floor:>5.2f}s "
                f"{plain / floor:>12.1f}x"
            )
    print(f"start-up (--help), best of {STARTS}: wall, CPU")
    for label, command in [
        ("python -m settlements.rules", [sys.executable, "-m", "settlements.rules", "--help"]),
        ("manage.py settle", [sys.executable, "manage.py", "settle", "--help"]),
    ]:
        wall, cpu = startup(command)
        print(f"  {label:<28} {wall:.3f} s  {cpu:.3f} s")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
