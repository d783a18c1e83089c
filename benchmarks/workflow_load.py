"""Times the audited workflow on one very large crash: load, prepare, submit, approve, export.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/crashdesk \
        .venv/bin/python benchmarks/workflow_load.py [--entrants 300000] [--type regular]
        [--stage middle]

Runs against a scratch database (the configured name plus "_bench", created and migrated
here, dropped at the end), so it never touches real data and includes every commit. Prints
the wall time of each step, the rows written, the peak resident memory of the process, and
the peak Python memory while streaming the ledger CSV (which must not grow with the size).
"""

import argparse
import os
import resource
import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crashdesk.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.models import Group  # noqa: E402
from django.db import connection  # noqa: E402

from settlements.access import roles  # noqa: E402
from settlements.demo import snapshot_bytes  # noqa: E402
from settlements.exports import ledger  # noqa: E402
from settlements.models import CasePlayer, SettlementLine, SettlementPayout  # noqa: E402
from settlements.services import settlements as settlement_services  # noqa: E402
from settlements.services.decisions import decision_record  # noqa: E402
from settlements.services.snapshots import case_load_snapshot  # noqa: E402  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--type", default="regular", choices=["regular", "freeroll", "satellite"])
    parser.add_argument("--stage", default="middle", choices=["pre", "early", "middle", "late"])
    args = parser.parse_args()

    database = settings.DATABASES["default"]
    database.setdefault("TEST", {})["NAME"] = f"{database['NAME']}_bench"
    original = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        run(args)
    finally:
        connection.creation.destroy_test_db(original, verbosity=0)


def run(args) -> None:
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
    user = get_user_model().objects.create_user(username=username)
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
