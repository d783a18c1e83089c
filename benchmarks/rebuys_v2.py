"""crash-snapshot/2 against crash-snapshot/1: the same 300,000-entrant crash, timed both ways.

    .venv/bin/python benchmarks/rebuys_v2.py [--entrants 300000] [--runs 3] [--stage middle]
        [--keep] [--only settle] [--smallest]

The version 2 snapshot is the version 1 one (same players, chips and stage) with RULES.md §8's
fields: every third player bought a second entry, every tenth an add-on, every entry put 500 on
its player's head, and each player still in holds the bounty of each of their entries. Its pool
and payouts are worked out from those entries, so the two settle different amounts of the same
shape. For each version, alternating runs (ABBA: which goes first changes from run to run) so
that both see the same load and the same size of desk:

1. settle: ``manage.py settle`` in a fresh process (start-up, parse, settle, JSON out), and the
   engine alone in this process (parse, settle, JSON encoding);
2. upload -> prepared: POST /api/v1/snapshots to gunicorn (production settings) with a bearer
   token, then services.settlement_prepare, on a scratch PostgreSQL database
   (BENCH_DATABASE, default crashdesk_bench_rebuys, dropped at the end; DATABASE_URL names the
   server). ``--only settle`` stops after step 1 and needs no database.

Each step beside its floor, timed in the same run, to tell the engine's and the services' work
from what merely reading and writing two documents of different sizes costs:

- settle: decoding the snapshot and encoding the settlement document with msgspec, to and from
  plain Python objects (the fastest JSON codec here; no checks, no rules);
- upload -> prepared: json.load of the snapshot plus a plain COPY of every row written (the
  snapshot, the entrants, the payouts, the lines) into tables without keys or indexes, as
  pipeline_300k.py measures it.

It prints the medians of wall time and of CPU seconds, and the ratios version 2 / version 1.
The machine is shared, so wall times measure the neighbours too; CPU seconds (the command's
process, this process for the engine and prepare, and for upload -> prepared also gunicorn's
processes and the PostgreSQL backends of the scratch database) are the steadier comparison.
Goal: within 1.2 (20 %). The version 2 documents are larger (a third more snapshot, half as many
lines again), so the floors' own ratios say how much of a step's ratio no implementation avoids.
``--smallest`` (CI): 200 entrants, one run of each version.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import (  # noqa: E402
    Client,
    Gunicorn,
    MachineTime,
    copy_floor,
    drop_scratch_database,
    make_user,
    smallest_servers,
    use_scratch_database,
)
from _snapshots import eliminated_for, rebuy_text, snapshot_text  # noqa: E402

DATABASE = os.environ.get("BENCH_DATABASE", "crashdesk_bench_rebuys")
GOAL = 1.2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stage", default="middle", choices=["pre", "early", "middle", "late"])
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--only", choices=["settle"], help="time the settle step alone")
    parser.add_argument("--smallest", action="store_true", help="200 entrants, one run each")
    args = parser.parse_args()
    if args.smallest:
        args.entrants, args.runs = 200, 1
        smallest_servers()
    if args.stage == "middle":
        assert eliminated_for("regular", "middle", args.entrants) > 0
    v1 = snapshot_text(
        tournament_id="BENCH-ID", type="regular", stage=args.stage, entrants=args.entrants
    )
    bodies = {"v1": v1.encode(), "v2": rebuy_text(v1, args.entrants).encode()}
    for name, body in bodies.items():
        print(f"{name}: {len(body) / 1e6:.1f} MB")
    keys = ("command", "engine", "codec", "upload", "prepare", "to_prepared", "floor")
    results = {name: {key: [] for key in keys} | {"cpu": {}} for name in bodies}
    for name in bodies:
        results[name]["cpu"] = {key: [] for key in keys}
    with tempfile.TemporaryDirectory() as folder:
        for attempt in range(args.runs):
            for name, body in in_turn(bodies, attempt):
                path = Path(folder) / f"{name}.json"
                path.write_bytes(body)
                for key, (wall, cpu) in (
                    ("command", time_command(path)),
                    ("engine", time_engine(body)),
                    ("codec", time_codec(body)),
                ):
                    results[name][key].append(wall)
                    results[name]["cpu"][key].append(cpu)
                print(
                    f"settle {name} run {attempt + 1}: command "
                    f"{results[name]['command'][-1]:.2f} s, engine "
                    f"{results[name]['engine'][-1]:.2f} s (load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
    if args.only != "settle":
        url = use_scratch_database(DATABASE)
        try:
            pipeline(url, bodies, results, args.runs)
        finally:
            if not args.keep:
                drop_scratch_database(DATABASE)
    report(args, results)


def in_turn(bodies: dict, attempt: int) -> list:
    """Both versions, the first going first in even runs and second in odd ones. The database
    grows with every case (each case's entrants go in among the earlier cases' rows of the
    same player ids), so the version always loaded second would always pay a little more."""
    pairs = list(bodies.items())
    return pairs if attempt % 2 == 0 else pairs[::-1]


def time_command(path: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one `manage.py settle` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "manage.py", "settle", str(path)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if run.returncode:
        raise SystemExit(f"settle failed: {run.stderr.decode()[:500]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def time_engine(body: bytes) -> tuple[float, float]:
    from settlements.rules import parse_snapshot, settle

    started, cpu = time.perf_counter(), time.process_time()
    settle(parse_snapshot(body)).to_json()
    return time.perf_counter() - started, time.process_time() - cpu


def time_codec(body: bytes) -> tuple[float, float]:
    """Wall and CPU seconds of the settle step's floor: the snapshot decoded and the settlement
    document encoded by msgspec, without types (the document is made, untimed, by the engine)."""
    from settlements.rules import parse_snapshot, settle

    document = msgspec.json.decode(settle(parse_snapshot(body)).to_json())
    started, cpu = time.perf_counter(), time.process_time()
    msgspec.json.decode(body)
    msgspec.json.encode(document)
    return time.perf_counter() - started, time.process_time() - cpu


def pipeline(url: str, bodies: dict, results: dict, runs: int) -> None:
    from settlements.access import roles
    from settlements.models import Case
    from settlements.services.settlements import settlement_prepare
    from settlements.services.tokens import api_token_create

    operator = make_user("bench-operator", roles.OPERATOR)
    _, token = api_token_create(user=operator, name="benchmark game server")
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with Gunicorn(url) as server:
        api = Client(server.base)
        for attempt in range(runs):
            for name, body in in_turn(bodies, attempt):
                renamed = body.replace(b'"BENCH-ID"', f'"BENCH-{name}-{attempt}"'.encode(), 1)
                meter = MachineTime(
                    DATABASE,
                    {
                        "gunicorn": lambda: [server.process.pid, *server.worker_pids()],
                        "prepare": lambda: [os.getpid()],
                    },
                )
                meter.start()
                started = time.perf_counter()
                status, _, answer = api.request("POST", "/api/v1/snapshots", renamed, headers)
                uploaded = time.perf_counter()
                at_upload = sum(meter.so_far().values())
                if status != 201:
                    raise SystemExit(f"upload refused: HTTP {status} {answer[:500]!r}")
                case = Case.objects.get(pk=json.loads(answer)["case"])
                settlement = settlement_prepare(case=case, actor=operator)
                prepared = time.perf_counter()
                cpu = sum(meter.stop().values())
                meter.close()
                floor = copy_floor(renamed, settlement.pk, case, indexed=False)["floor"]
                for key, wall, seconds in (
                    ("upload", uploaded - started, at_upload),
                    ("prepare", prepared - uploaded, cpu - at_upload),
                    ("to_prepared", prepared - started, cpu),
                    ("floor", *floor),
                ):
                    results[name][key].append(wall)
                    results[name]["cpu"][key].append(seconds)
                print(
                    f"pipeline {name} run {attempt + 1}: upload {uploaded - started:.2f} s, "
                    f"prepare {prepared - uploaded:.2f} s, {cpu:.2f} CPU s in all "
                    f"({settlement.line_count:,} lines, load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )


def report(args, results: dict) -> None:
    print(f"\n{args.entrants:,} entrants, regular {args.stage}, medians of {args.runs} runs")
    print(f"{'step':<28}{'wall v1':>9}{'v2':>9}{'v2/v1':>7}{'CPU v1':>9}{'v2':>9}{'v2/v1':>7}")
    rows = [
        ("manage.py settle", "command"),
        ("engine (parse+settle+JSON)", "engine"),
        ("  its floor (msgspec codec)", "codec"),
        ("upload (POST)", "upload"),
        ("prepare", "prepare"),
        ("upload -> prepared", "to_prepared"),
        ("  its floor (load + COPYs)", "floor"),
    ]
    for label, key in rows:
        if not results["v1"][key]:
            continue  # a step left out with --only
        one, two = (statistics.median(results[name][key]) for name in ("v1", "v2"))
        cpu_one, cpu_two = (statistics.median(results[name]["cpu"][key]) for name in ("v1", "v2"))
        print(
            f"{label:<28}{one:>8.2f}s{two:>8.2f}s{two / one:>7.2f}"
            f"{cpu_one:>8.2f}s{cpu_two:>8.2f}s{cpu_two / cpu_one:>7.2f}"
        )
    print(f"goal: v2/v1 <= {GOAL}; load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
