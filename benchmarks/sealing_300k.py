"""What sealing every row costs (issue 21): a 300,000-entrant snapshot loaded and prepared by
today's code and by the code before the sealing, turn about, in one run; then `verify_audit`
on a desk holding one approved 300,000-entrant settlement.

    git worktree add /tmp/i21a-base <commit before the sealing>
    .venv/bin/python benchmarks/sealing_300k.py --baseline /tmp/i21a-base [--entrants 300000]
        [--runs 2] [--scenario regular:early]
    .venv/bin/python benchmarks/sealing_300k.py --smallest

Both versions run as child processes of this one (the same interpreter and virtualenv, each
importing its own tree) against one scratch PostgreSQL database (crashdesk_bench_sealing,
dropped at the end; DATABASE_URL names the server): the sealing changed no table, so the
baseline runs on today's schema. Each child loads the snapshot through
services.case_load_snapshot (which seals the entrants), records the decision if one is
needed, and times services.settlement_prepare (which seals the payouts and the history): wall
seconds, and the CPU seconds of the child, steadier on a shared machine.

--smallest (CI): 200 entrants, one run of each version and of verify_audit, HEAD (the committed
code, exported with git archive) standing in for the code before the sealing.
"""

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import drop_scratch_database, make_user, use_scratch_database  # noqa: E402
from _snapshots import snapshot_text  # noqa: E402

DATABASE = "crashdesk_bench_sealing"
HERE = Path(__file__).resolve().parent.parent

# One load and prepare, in the tree given as the working directory.
CHILD = """
import json, logging, sys, time
import django
django.setup()
logging.getLogger("crashdesk.events").setLevel(logging.WARNING)
from django.contrib.auth import get_user_model
from settlements.services.decisions import decision_record
from settlements.services.settlements import settlement_prepare
from settlements.services.snapshots import case_load_snapshot
users = get_user_model().objects
operator = users.get(username="bench-operator")
marketing = users.get(username="bench-marketing")
body = open(sys.argv[1], "rb").read().replace(b'"BENCH-ID"', sys.argv[2].encode(), 1)
started, cpu = time.perf_counter(), time.process_time()
case = case_load_snapshot(actor=operator, snapshot=body)
loaded, loaded_cpu = time.perf_counter() - started, time.process_time() - cpu
if case.decision_options:
    decision_record(
        case=case, actor=marketing, option=case.decision_options[-1], reason="benchmark"
    )
started, cpu = time.perf_counter(), time.process_time()
settlement = settlement_prepare(case=case, actor=operator)
prepared, prepared_cpu = time.perf_counter() - started, time.process_time() - cpu
print(json.dumps({"load": loaded, "prepare": prepared, "load_cpu": loaded_cpu,
                  "prepare_cpu": prepared_cpu, "payouts": settlement.payout_count,
                  "lines": settlement.line_count}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a worktree of the code before (required)")
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=2, help="runs of each version")
    parser.add_argument("--scenario", default="regular:middle", help="TYPE:STAGE")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--smallest", action="store_true", help="200 entrants against HEAD (CI)")
    args = parser.parse_args()
    type_, stage = args.scenario.split(":")
    with tempfile.TemporaryDirectory(prefix="crashdesk-sealing-") as exported:
        if args.smallest:
            args.entrants, args.runs, args.baseline = 200, 1, exported
            archive = subprocess.run(
                ["git", "archive", "HEAD"], cwd=HERE, check=True, capture_output=True
            ).stdout
            with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                tar.extractall(exported, filter="data")
        elif not args.baseline:
            parser.error("--baseline is required")
        url = use_scratch_database(DATABASE)
        try:
            compared = compare(url, Path(args.baseline), args, type_, stage)
            verified = time_verify(args.entrants, type_, stage, runs=1 if args.smallest else 3)
        finally:
            if not args.keep:
                drop_scratch_database(DATABASE)
    report(compared, verified, args)


def compare(url: str, baseline: Path, args, type_: str, stage: str) -> dict[str, list[dict]]:
    from settlements.access import roles

    make_user("bench-operator", roles.OPERATOR)
    make_user("bench-marketing", roles.MARKETING_MANAGER)
    text = snapshot_text(tournament_id="BENCH-ID", type=type_, stage=stage, entrants=args.entrants)
    measured: dict[str, list[dict]] = {"before": [], "sealed": []}
    with tempfile.TemporaryDirectory() as scratch:
        body = Path(scratch) / "snapshot.json"
        body.write_text(text)
        env = {**os.environ, "DATABASE_URL": url}
        for attempt in range(1, args.runs + 1):
            # Turn about, the order swapped each run, so that neither gains from the other's
            # warm caches or loses to a busier minute.
            order = (("before", baseline), ("sealed", HERE))
            for name, tree in order if attempt % 2 else reversed(order):
                load = os.getloadavg()[0]
                done = subprocess.run(
                    [sys.executable, "-c", CHILD, str(body), f'"BENCH-{name}-{attempt}"'],
                    cwd=tree,
                    env={**env, "PYTHONPATH": str(tree)},
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode:
                    raise SystemExit(f"{name}: {done.stderr[-2000:]}")
                figures = json.loads(done.stdout.strip().splitlines()[-1]) | {"loadavg": load}
                print(
                    f"{name:>6} run {attempt}: load {figures['load']:.2f} s "
                    f"({figures['load_cpu']:.2f} s CPU), prepare {figures['prepare']:.2f} s "
                    f"({figures['prepare_cpu']:.2f} s CPU; {figures['payouts']:,} payouts, "
                    f"{figures['lines']:,} lines; load average {load:.1f})",
                    flush=True,
                )
                measured[name].append(figures)
    return measured


def time_verify(entrants: int, type_: str, stage: str, runs: int = 3) -> dict:
    """A desk with one approved settlement of ``entrants``: verify_audit's whole pass."""
    from django.core.management import call_command

    from settlements.access import roles
    from settlements.models import Event
    from settlements.services import settlements as settlement_services
    from settlements.services.decisions import decision_record
    from settlements.services.snapshots import case_load_snapshot

    drop_scratch_database(DATABASE)
    use_scratch_database(DATABASE)
    operator = make_user("bench-operator", roles.OPERATOR)
    manager = make_user("bench-manager", roles.TOURNAMENT_MANAGER)
    marketing = make_user("bench-marketing", roles.MARKETING_MANAGER)
    body = snapshot_text(tournament_id="BENCH-V", type=type_, stage=stage, entrants=entrants)
    case = case_load_snapshot(actor=operator, snapshot=body.encode())
    if case.decision_options:
        decision_record(
            case=case, actor=marketing, option=case.decision_options[-1], reason="benchmark"
        )
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=manager, reason="benchmark")
    timings, cpu = [], []
    with open(os.devnull, "w") as quiet:
        for _ in range(runs):
            started, used = time.perf_counter(), time.process_time()
            call_command("verify_audit", stdout=quiet)
            timings.append(time.perf_counter() - started)
            cpu.append(time.process_time() - used)
    return {
        "events": Event.objects.count(),
        "payouts": settlement.payout_count,
        "lines": settlement.line_count,
        "timings": timings,
        "cpu": cpu,
        "loadavg": os.getloadavg(),
    }


def report(compared: dict[str, list[dict]], verified: dict, args) -> None:
    print(f"\n{args.entrants:,} entrants, {args.scenario}, {args.runs} runs of each version")
    for step in ("load", "prepare", "load_cpu", "prepare_cpu"):
        before = statistics.median(r[step] for r in compared["before"])
        sealed = statistics.median(r[step] for r in compared["sealed"])
        print(
            f"  {step:<12} before {before:6.2f} s  sealed {sealed:6.2f} s  "
            f"cost {sealed - before:+.2f} s ({(sealed / before - 1) * 100:+.0f}%)"
        )
    timings = verified["timings"]
    print(
        f"  verify_audit over {verified['events']} events sealing {args.entrants:,} entrants, "
        f"{verified['payouts']:,} payouts, {verified['lines']:,} lines: "
        + ", ".join(f"{t:.2f} s" for t in timings)
        + f" (median {statistics.median(timings):.2f} s; CPU in this process "
        + ", ".join(f"{t:.2f} s" for t in verified["cpu"])
        + "); load average "
        + " ".join(f"{x:.1f}" for x in verified["loadavg"])
    )


if __name__ == "__main__":
    main()
