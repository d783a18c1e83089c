"""Times the audited workflow on one very large crash: load, prepare, submit, approve, export.

    .venv/bin/python benchmarks/workflow_load.py [--entrants 300000] [--type regular]
        [--stage middle] [--smallest]

Runs against a scratch PostgreSQL database (BENCH_DATABASE, default crashdesk_bench_workflow,
created and migrated here with production settings, dropped at the end; DATABASE_URL names the
server), so it never touches real data and includes every commit. Prints the wall time of each
step, the rows written, the peak resident memory of the process, and the peak Python memory
while streaming the ledger CSV (which must not grow with the size). ``--smallest`` (CI): 200
entrants.
"""

import argparse
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import drop_scratch_database, use_scratch_database  # noqa: E402

DATABASE = os.environ.get("BENCH_DATABASE", "crashdesk_bench_workflow")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--type", default="regular", choices=["regular", "freeroll", "satellite"])
    parser.add_argument("--stage", default="middle", choices=["pre", "early", "middle", "late"])
    parser.add_argument("--smallest", action="store_true", help="200 entrants, for CI")
    args = parser.parse_args()
    if args.smallest:
        args.entrants = 200

    use_scratch_database(DATABASE)
    try:
        run(args)
    finally:
        drop_scratch_database(DATABASE)


def run(args) -> None:
    from django.db import connection

    from settlements.access import roles
    from settlements.demo import snapshot_bytes
    from settlements.exports import ledger
    from settlements.models import CasePlayer, SettlementLine, SettlementPayout
    from settlements.services import settlements as settlement_services
    from settlements.services.decisions import decision_record
    from settlements.services.snapshots import case_load_snapshot

    print(f"database: {connection.vendor} ({connection.settings_dict['NAME']})")
    operator = _user("bench-operator", roles.OPERATOR)
    manager = _user("bench-manager", roles.TOURNAMENT_MANAGER)
    marketing = _user("bench-marketing", roles.MARKETING_MANAGER)

    started = time.perf_counter()
    data = snapshot_bytes(
        type=args.type, stage=args.stage, entrants=args.entrants, tournament_id="BENCH-1"
    )
    print(
        f"snapshot: {args.entrants:,} entrants, {args.type} {args.stage}, "
        f"{len(data) / 1e6:.1f} MB (built in {time.perf_counter() - started:.2f} s)"
    )

    case = _timed("load snapshot", lambda: case_load_snapshot(actor=operator, snapshot=data))
    print(f"    {CasePlayer.objects.filter(case=case).count():,} entrant rows; stage {case.stage}")
    if case.decision_options:
        option = case.decision_options[-1]
        _timed(
            f"record decision ({option})",
            lambda: decision_record(case=case, actor=marketing, option=option, reason="benchmark"),
        )
    settlement = _timed(
        "prepare settlement",
        lambda: settlement_services.settlement_prepare(case=case, actor=operator),
    )
    payouts = SettlementPayout.objects.filter(settlement=settlement).count()
    lines = SettlementLine.objects.filter(settlement=settlement).count()
    print(f"    {payouts:,} payout rows, {lines:,} ledger lines; remedy {settlement.remedy}")
    settlement = _timed(
        "submit",
        lambda: settlement_services.settlement_submit(settlement=settlement, actor=operator),
    )
    settlement = _timed(
        "approve",
        lambda: settlement_services.settlement_approve(settlement=settlement, actor=manager),
    )

    def export() -> int:
        return sum(len(chunk) for chunk in ledger.settlement_ledger_csv(settlement))

    size = _timed("ledger CSV export", export)
    print(f"    {size / 1e6:.1f} MB of CSV")
    tracemalloc.start()
    export()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"peak Python memory while streaming the ledger: {peak / 1e6:.1f} MB")
    print(f"peak resident memory of the process: {_max_rss_mb():.0f} MB")


def _timed(label: str, step):
    started = time.perf_counter()
    result = step()
    print(f"{label:>28}: {time.perf_counter() - started:7.2f} s")
    return result


def _user(username: str, role: str):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user(username=username)
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
