"""Restoring the statement figures of a large settlement prepared before they were kept, against
preparing it.

    .venv/bin/python benchmarks/restore_bases.py [--entrants 300000] [--keep] [--smallest]

On a scratch PostgreSQL database (crashdesk_bench_restore_bases, dropped at the end unless
--keep), as the tables' owner. For a regular tournament at the middle stage (a chip equity
split) and at the late stage under a chip position policy (whose payouts get their weights and
places back too): the snapshot is loaded and the settlement prepared through the services and
approved, then its figures are removed as migration 0013 found older settlements, and
`settlement_basis_restore` is timed (the engine run again, every stored line and payout read
and compared, the figures written back). Prints the wall and CPU time of each step.
``--smallest`` (CI): 200 entrants.
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import cpu_seconds, drop_scratch_database, make_user, use_scratch_database  # noqa: E402
from _snapshots import snapshot_text  # noqa: E402

DATABASE = "crashdesk_bench_restore_bases"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--smallest", action="store_true", help="200 entrants, for CI")
    args = parser.parse_args()
    if args.smallest:
        args.entrants = 200
    # The late stage split by chip position: the payouts then hold weights and places to restore.
    os.environ["CRASH_POLICY_LATE_FORMULA"] = "chip_position"
    use_scratch_database(DATABASE)
    try:
        run(args.entrants)
    finally:
        if not args.keep:
            drop_scratch_database(DATABASE)


def run(entrants: int) -> None:
    from settlements.access import roles

    operator = make_user("bench-operator", roles.OPERATOR)
    manager = make_user("bench-manager", roles.TOURNAMENT_MANAGER)
    print(f"{entrants:,} entrants, load average {os.getloadavg()[0]:.1f}")
    for stage in ("middle", "late"):
        figures = one(stage, entrants, operator, manager)
        print(
            f"  regular {stage:6} {figures['remedy']:16} {figures['payouts']:>8,} payouts: "
            f"prepare {figures['prepare']:6.2f} s; restore {figures['restore']:6.2f} s, "
            f"{figures['restore_cpu']:5.2f} s CPU (this process and its backend), "
            f"{figures['filled']:,} payouts completed",
            flush=True,
        )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


def one(stage: str, entrants: int, operator, manager) -> dict:
    import pgtrigger
    from django.db import connection

    from settlements.models import Event, Settlement, SettlementPayout
    from settlements.services import settlements as settlement_services
    from settlements.services.bases import settlement_basis_restore
    from settlements.services.snapshots import case_load_snapshot

    text = snapshot_text(tournament_id=f"BENCH-{stage}", stage=stage, entrants=entrants)
    case = case_load_snapshot(actor=operator, snapshot=text.encode())
    started = time.perf_counter()
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    prepare = time.perf_counter() - started
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement = settlement_services.settlement_approve(settlement=settlement, actor=manager)
    with pgtrigger.ignore(
        "settlements.Settlement:final_when_approved", "settlements.SettlementPayout:write_once"
    ):
        Settlement.objects.filter(pk=settlement.pk).update(basis={})
        SettlementPayout.objects.filter(settlement=settlement).update(
            weight="", place_first=None, place_last=None
        )
    connection.ensure_connection()
    backend = connection.connection.info.backend_pid
    cpu, backend_cpu = time.process_time(), cpu_seconds(backend)
    started = time.perf_counter()
    check = settlement_basis_restore(settlement=settlement)
    restore = time.perf_counter() - started
    if not check.matches:
        raise SystemExit(f"not restored: {check.difference}")
    event = Event.objects.filter(type=Event.Type.BASIS_RESTORED).latest("seq")
    return {
        "remedy": settlement.remedy,
        "payouts": settlement.payout_count,
        "prepare": prepare,
        "restore": restore,
        "restore_cpu": time.process_time() - cpu + cpu_seconds(backend) - backend_cpu,
        "filled": event.data["payouts_completed"],
    }


if __name__ == "__main__":
    main()
