"""Verification of a desk sized like years of a large site: the whole chain against what an
incremental verification from the last checkpoint reads after a typical day.

    .venv/bin/python benchmarks/decade_desk.py [--years 10] [--incidents-per-year 100]
        [--big-per-year 1] [--entrants 300000] [--sample 200] [--keep] [--smallest]

Starts from an empty scratch PostgreSQL database (crashdesk_bench_decade, dropped at the end
unless --keep; DATABASE_URL names the server). The desk is the page-latency desk's
(benchmarks/page_latency.py: incidents built through the services and copied, events chained
again) with ``years × incidents-per-year`` incidents and ``years × big-per-year`` settlements
of ``--entrants`` players each, loaded and prepared through the services (a large outage a
year). It prints the desk's size in rows, then times:

- ``verify_audit --full``: the whole chain, every sealed row, the tallies counted afresh;
- a typical day: one incident of four cases reported, loaded, decided and prepared;
- ``verify_audit``: the events since the checkpoint, ``--sample`` older events at random, and
  the rows written since with the older events sealing them (settlements.row_stamps).

``--smallest`` (for CI) builds two years of five incidents with 200-entrant settlements.
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import page_latency  # noqa: E402
from _common import drop_scratch_database, use_scratch_database  # noqa: E402
from _snapshots import snapshot_text  # noqa: E402

DATABASE = "crashdesk_bench_decade"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--years", type=int, default=10)
    parser.add_argument("--incidents-per-year", type=int, default=100)
    parser.add_argument("--big-per-year", type=int, default=1)
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--sample", type=int, default=200, help="older events drawn at random")
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--smallest", action="store_true", help="a tiny desk, for CI")
    args = parser.parse_args()
    if args.smallest:
        args.years, args.incidents_per_year, args.big_per_year, args.entrants = 2, 5, 1, 200
    # At least the two templates and one copy of each: page_latency copies the rest.
    page_latency.INCIDENTS = max(4, args.years * args.incidents_per_year)
    page_latency.OPEN_INCIDENTS = 2
    use_scratch_database(args.database)
    try:
        started = time.perf_counter()
        page_latency.seed(args.entrants)
        people = _people()
        for number in range(2, args.years * args.big_per_year + 1):
            _big_settlement(people, number, args.entrants)
        print(f"seeded in {time.perf_counter() - started:.1f} s")
        _print_rows()
        from settlements import checkpoints
        from settlements.services.checkpoints import checkpoint_record
        from settlements.services.history_sweep import history_sweep

        # The copied incidents' history versions were written outside the services: the sweep
        # a deployed desk runs (compose's sweeper) seals them, as it would on the real desk.
        history_sweep(reason="copied incidents of the benchmark")
        outcome = _timed("verify_audit --full", lambda: checkpoints.verify(full=True))
        checkpoint_record(outcome=outcome)
        started = time.perf_counter()
        page_latency._open_incident(people, "D")
        took = time.perf_counter() - started
        print(f"a typical day (one incident, four cases) written in {took:.1f} s")
        outcome = _timed(
            f"verify_audit (incremental, {args.sample} sampled)",
            lambda: checkpoints.verify(sample=args.sample),
        )
        if not outcome.verification.ok:
            raise SystemExit(f"the incremental verification failed: {outcome.verification.problem}")
        rows = "every row" if outcome.rows_since is None else "the rows written since"
        print(
            f"  read events {outcome.first} to {outcome.verification.count}, "
            f"{len(outcome.sampled)} older drawn at random and {len(outcome.reread)} sealing "
            f"{rows}, which it looked through for what no event names"
        )
    finally:
        if not args.keep:
            drop_scratch_database(args.database)


def _big_settlement(people, number: int, entrants: int) -> None:
    """Another large outage's settlement, prepared and approved (page_latency's is BIG-1)."""
    from settlements.services import settlements as settlement_services
    from settlements.services.incidents import incident_report
    from settlements.services.snapshots import case_load_snapshot

    incident = incident_report(
        actor=people["operator"], title=f"Large outage {number}", started_at=page_latency._now()
    )
    text = snapshot_text(
        tournament_id=f"BIG-{number}", type="regular", stage="middle", entrants=entrants
    )
    case = case_load_snapshot(actor=people["operator"], snapshot=text, incident=incident)
    settlement = settlement_services.settlement_prepare(case=case, actor=people["operator"])
    settlement = settlement_services.settlement_submit(
        settlement=settlement, actor=people["operator"]
    )
    settlement_services.settlement_approve(
        settlement=settlement, actor=people["manager"], reason="checked"
    )


def _people() -> dict:
    from django.contrib.auth import get_user_model

    names = ("operator", "operator2", "marketing", "manager", "manager2")
    users = get_user_model().objects.filter(username__in=[f"bench-{n}" for n in names])
    return {user.username.removeprefix("bench-"): user for user in users}


def _timed(what: str, run):
    started, used = time.perf_counter(), time.process_time()
    outcome = run()
    if not outcome.verification.ok:
        raise SystemExit(f"{what}: {outcome.verification.problem}")
    print(
        f"{what}: {time.perf_counter() - started:.2f} s, {time.process_time() - used:.2f} s CPU "
        f"in this process (load average {os.getloadavg()[0]:.1f})"
    )
    return outcome


def _print_rows() -> None:
    """Every row of the desk's tables, and the largest tables."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
        cursor.execute(
            "SELECT relname, reltuples::bigint FROM pg_class WHERE relkind = 'r' "
            "AND relname LIKE 'settlements_%%' AND reltuples > 0 ORDER BY reltuples DESC"
        )
        counts = cursor.fetchall()
    total = sum(count for _, count in counts)
    largest = ", ".join(
        f"{name.removeprefix('settlements_')} {count:,}" for name, count in counts[:5]
    )
    print(f"desk: {total:,} rows (estimated by ANALYZE); largest: {largest}")


if __name__ == "__main__":
    main()
