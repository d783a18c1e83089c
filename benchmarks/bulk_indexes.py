"""What each index on the three bulk tables (entrants, payouts, ledger lines) adds to a COPY.

    .venv/bin/python benchmarks/bulk_indexes.py [--entrants 300000] [--runs 3] [--keep]
        [--smallest]

On a scratch PostgreSQL database (BENCH_DATABASE, default crashdesk_bench_indexes; dropped at
the end), for each table: the rows of one 300,000-entrant crash, in the order the services
write them (entrants sorted by player id, payouts and lines in the engine's order: ids in
code-point order; the early stage's three lines per player), COPYed in binary as
services.common.insert_rows does into a copy of the table with its checks and no index, then
with its indexes added one at a time, in the order listed. The entrants also in snapshot order
(shuffled ids) with every index, the order they were written in before. Triggers are left out
(docs/benchmarks.md, "What the record's guards cost"). It prints, per step, the median wall time
and the least CPU seconds of the PostgreSQL backend over the runs, and what the step adds.
``--smallest`` (CI): 1,000 entrants, one run.
"""

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import cpu_seconds, drop_scratch_database, use_scratch_database  # noqa: E402

DATABASE = os.environ.get("BENCH_DATABASE", "crashdesk_bench_indexes")
LINE_KINDS = (("refund_buy_in", "pool"), ("refund_fee", "house"), ("prize", "pool"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--smallest", action="store_true", help="1,000 entrants, one run")
    args = parser.parse_args()
    if args.smallest:
        args.entrants, args.runs = 1000, 1
    use_scratch_database(DATABASE)
    try:
        run(args.entrants, args.runs)
    finally:
        if not args.keep:
            drop_scratch_database(DATABASE)


def rows_of(entrants: int) -> dict[str, list[tuple]]:
    rng = random.Random(0)
    numbers = list(range(entrants))
    rng.shuffle(numbers)
    shuffled = [
        (1, position, f"player-{n:07d}", rng.randint(0, 400) * 500, 1, 0, 0)
        for position, n in enumerate(numbers)
    ]
    ordered = sorted(shuffled, key=lambda row: row[2])
    payouts = [
        (
            1,
            position,
            player,
            chips,
            1000 + position,
            0,
            0,
            0,
            None,
            "3/7",
            "3000/7",
            False,
            1,
            "",
            None,
            None,
        )
        for position, (_, _, player, chips, *_) in enumerate(ordered[: entrants * 9 // 10])
    ]
    lines = [
        (1, 3 * position + k + 1, row[2], kind, "cash", 1000, source, False)
        for position, row in enumerate(payouts)
        for k, (kind, source) in enumerate(LINE_KINDS)
    ]
    return {
        "entrants": ordered,
        "entrants in snapshot order": shuffled,
        "payouts": payouts,
        "lines": lines,
    }


def run(entrants: int, runs: int) -> None:
    from django.db import connection

    from settlements.models import CasePlayer, SettlementLine, SettlementPayout
    from settlements.seals import ENTRANT_FIELDS
    from settlements.services.settlements import SETTLEMENT_PAYOUT_FIELDS

    line_fields = ("settlement", "line_no", "player", "kind", "unit", "amount", "source")
    tables = {
        "entrants": (CasePlayer, ("case", *ENTRANT_FIELDS)),
        "payouts": (SettlementPayout, SETTLEMENT_PAYOUT_FIELDS),
        "lines": (SettlementLine, (*line_fields, "reversal")),
    }
    data = rows_of(entrants)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    print(f"load average {os.getloadavg()[0]:.1f}; medians of wall time, least backend CPU")
    for name, (model, fields) in tables.items():
        table = model._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s "
                "ORDER BY indexname LIKE '%%_pkey' DESC, indexname",
                [table],
            )
            indexes = cursor.fetchall()
        columns = [model._meta.get_field(f) for f in fields]
        steps = [("no index", [])] + [
            (f"+ {index}", indexes[: k + 1]) for k, (index, _) in enumerate(indexes)
        ]
        rows = data[name]
        print(f"\n{name}: {len(rows):,} rows into {table}")
        before = None
        for label, present in steps:
            wall, cpu = measure(connection, backend, table, columns, present, rows, runs)
            added = (
                ""
                if before is None
                else f"  (+{wall - before[0]:.2f} s, +{cpu - before[1]:.2f} CPU s)"
            )
            print(f"  {label:<36} {wall:6.2f} s {cpu:6.2f} CPU s{added}", flush=True)
            before = (wall, cpu)
        if name == "entrants":
            wall, cpu = measure(
                connection,
                backend,
                table,
                columns,
                indexes,
                data["entrants in snapshot order"],
                runs,
            )
            print(f"  {'every index, rows in snapshot order':<36} {wall:6.2f} s {cpu:6.2f} CPU s")


def measure(connection, backend, table, columns, indexes, rows, runs) -> tuple[float, float]:
    """Median wall time and least backend CPU seconds of COPYing ``rows`` into a scratch copy
    of ``table`` with its checks and ``indexes`` (name, definition from pg_indexes)."""
    from django.db import transaction

    quote = connection.ops.quote_name
    names = ", ".join(quote(field.column) for field in columns)
    types = [field.db_type(connection).partition("(")[0] for field in columns]
    walls, cpus = [], []
    for _ in range(runs):
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS bench_indexes")
            cursor.execute(
                f"CREATE TABLE bench_indexes (LIKE {quote(table)} INCLUDING DEFAULTS "
                "INCLUDING CONSTRAINTS INCLUDING IDENTITY)"
            )
            for index, definition in indexes:
                on = definition.index(" ON ")
                using = definition.index(" USING ")
                cursor.execute(
                    definition[:on].replace(index, f"bench_{index}")
                    + " ON bench_indexes"
                    + definition[using:]
                )
        started, cpu = time.perf_counter(), cpu_seconds(backend)
        with (
            transaction.atomic(),
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY bench_indexes ({names}) FROM STDIN (FORMAT BINARY)") as copy,
        ):
            copy.set_types(types)
            for row in rows:
                copy.write_row(row)
        walls.append(time.perf_counter() - started)
        cpus.append(cpu_seconds(backend) - cpu)
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE bench_indexes")
    return statistics.median(walls), min(cpus)


if __name__ == "__main__":
    main()
