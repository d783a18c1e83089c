"""A draft rulebook simulated over past cases: 2,000 stored cases of 500 entrants, one worker.

    .venv/bin/python benchmarks/simulation_2000.py [--cases 2000] [--entrants 500] [--keep]
    .venv/bin/python benchmarks/simulation_2000.py --smallest     (a few small cases, for CI)

On a scratch PostgreSQL database (crashdesk_bench_simulation, made from nothing and dropped at
the end unless --keep; DATABASE_URL names the server). Untimed, it loads the cases through the
services (regular and satellite tournaments crashed early, in the middle and late, under the
`default` rulebook), records the Marketing Manager's answer where a case waits for one, and has
a Tournament Manager propose a draft that differs from `default` in four keys (no early stage,
fees back in the middle, ICM from nine players left, satellite seats in cash). Timed: from
asking for the simulation of every case (``services.simulation_start``, as the page does) to
its summary written by one job worker (``manage.py run_worker``, production settings, its own
process), noticed from the database every 50 ms.

Prints the set-up, the wall time of the simulation (goal: at most 60 s for 2,000 cases of 500
entrants), the CPU seconds of the worker and of the database's backends, the cases per
second and the summary's figures.
"""

import argparse
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    MachineTime,
    Worker,
    drop_scratch_database,
    make_user,
    use_scratch_database,
)
from _snapshots import snapshot_text  # noqa: E402

DATABASE = "crashdesk_bench_simulation"
GOAL_SECONDS = 60
MIX = [(t, s) for t in ("regular", "satellite") for s in ("early", "middle", "late")]
DRAFT = {
    "early_pct": 5,
    "middle_fee_refund": True,
    "final_table_icm": 9,
    "satellite_prizes": "cash",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--entrants", type=int, default=500)
    parser.add_argument("--smallest", action="store_true", help="6 cases of 200 entrants")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()
    if args.smallest:
        args.cases, args.entrants = len(MIX), 200

    url = use_scratch_database(DATABASE)
    try:
        run(url, args.cases, args.entrants)
    finally:
        if not args.keep:
            drop_scratch_database(DATABASE)


def run(url: str, count: int, entrants: int) -> None:
    from django.utils import timezone

    from settlements.access import roles
    from settlements.selectors.rulebooks import simulation_cases
    from settlements.services.decisions import decision_record
    from settlements.services.rulebooks import rulebook_version_propose, simulation_start
    from settlements.services.snapshots import case_load_snapshot

    operator = make_user("bench-operator", roles.OPERATOR)
    marketing = make_user("bench-marketing", roles.MARKETING_MANAGER)
    manager = make_user("bench-manager", roles.TOURNAMENT_MANAGER)

    started = time.perf_counter()
    for n in range(count):
        kind, stage = MIX[n % len(MIX)]
        text = snapshot_text(
            tournament_id=f"SIM-{n:05d}", type=kind, stage=stage, entrants=entrants, seed=n
        )
        case = case_load_snapshot(actor=operator, snapshot=text.encode())
        if case.status == "awaiting_decision":
            decision_record(
                case=case, actor=marketing, option=case.decision_options[0], reason="Benchmark"
            )
    draft = rulebook_version_propose(
        key="default",
        parameters=DRAFT,
        text="Fees back before the money, ICM at the final table, seats paid in cash.",
        effective_from=timezone.now() + timedelta(days=30),
        actor=manager,
        reason="Benchmark draft",
    )
    print(
        f"{count:,} cases of {entrants:,} entrants loaded and decided in "
        f"{time.perf_counter() - started:.1f} s (untimed); draft {draft} differs in "
        f"{', '.join(DRAFT)}"
    )

    with Worker(url) as worker:
        meter = MachineTime(DATABASE, {"worker": lambda: [worker.process.pid]})
        load = os.getloadavg()[0]
        meter.start()
        began = time.perf_counter()
        simulation = simulation_start(
            version=draft, actor=manager, cases=simulation_cases(), selection={}
        )
        while True:
            ((finished, state),) = meter.query(
                "SELECT s.finished_at IS NOT NULL, j.status FROM settlements_simulation s "
                "JOIN settlements_job j ON j.id = s.job_id WHERE s.id = %s",
                (simulation.pk,),
            )
            if finished or state == "failed":
                break
            time.sleep(0.05)
        wall = time.perf_counter() - began
        meter.stop()
        meter.close()
    simulation.refresh_from_db()
    if not simulation.finished_at:
        raise SystemExit(f"the simulation's job ended {state}")
    summary = simulation.summary
    simulated = simulation.results.count()
    print(f"one job worker; load average {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(
        f"simulated {simulated:,} cases in {wall:.1f} s wall ({simulated / wall:.0f} cases/s), "
        f"{meter.line()}; goal <= {GOAL_SECONDS} s for 2,000 of 500: "
        f"{'met' if wall <= GOAL_SECONDS else 'missed'} at this size"
    )
    print(f"cases needing a new decision under the draft: {len(summary['needs_decision'])}")
    for unit, figures in sorted(summary["units"].items()):
        print(
            f"  {unit}: then {figures['then']:,}, under the draft {figures['draft']:,}; players "
            f"better off {figures['better']:,}, worse off {figures['worse']:,}, unchanged "
            f"{figures['unchanged']:,}; largest gain {figures['largest_gain']:,}, "
            f"largest loss {figures['largest_loss']:,}"
        )


if __name__ == "__main__":
    main()
