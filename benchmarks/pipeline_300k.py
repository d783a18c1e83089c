"""One 300,000-entrant crash from the game server's upload to the cashier's ledger, timed.

    .venv/bin/python benchmarks/pipeline_300k.py [--entrants 300000] [--scenario regular:early]
        [--runs 3] [--keep] [--smallest]

For each scenario (default: a regular tournament crashing in the middle stage, and in the early
stage, which pays three ledger lines to each of 270,000 players) on a scratch PostgreSQL
database (crashdesk_bench_pipeline, dropped at the end; DATABASE_URL names the server):

1. upload: POST /api/v1/snapshots with a bearer token to gunicorn started with
   crashdesk/gunicorn.conf.py and production settings (parse, checks, 300,000 entrant rows);
2. prepare: services.settlement_prepare, in this process so that its persistence step (from the
   first payout row written to the commit) can be timed apart from parsing and settling;
3. submit and approve (services);
4. export: GET the ledger CSV from gunicorn as a Tournament Manager, read as a stream, while
   the workers' resident memory is sampled; and the same CSV generated in this process under
   tracemalloc;
5. the floor, in the same run: json.load of the snapshot plus a plain COPY of every row
   written on the way (the snapshot, the entrants, the payouts, the ledger lines) into scratch
   tables without indexes or constraints; and the same rows COPYed into copies of the real
   tables (keys, indexes, checks; not triggers).

Wall times, and CPU seconds: for upload -> prepared, gunicorn's processes, this process and the
PostgreSQL backends of the scratch database (BENCH_DATABASE, default crashdesk_bench_pipeline);
for the floor, this process and its backend.

Goals (issue 24): upload to prepared settlement under 10 s and at most 4x the floor; the
export's memory flat whatever the number of lines. ``--smallest`` (CI): 200 entrants, one run
of each scenario.
"""

import argparse
import json
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    Client,
    Gunicorn,
    MachineTime,
    RssSampler,
    Stopwatch,
    copy_floor,
    drop_scratch_database,
    make_user,
    own_peak_rss_mb,
    smallest_servers,
    use_scratch_database,
)
from _snapshots import snapshot_text  # noqa: E402

DATABASE = os.environ.get("BENCH_DATABASE", "crashdesk_bench_pipeline")
DEFAULT_SCENARIOS = ("regular:middle", "regular:early")
GOAL_SECONDS = 10
GOAL_RATIO = 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument(
        "--scenario",
        action="append",
        help="TYPE:STAGE, e.g. satellite:middle (repeatable; default: regular middle and early)",
    )
    parser.add_argument(
        "--runs", type=int, default=3, help="runs of each scenario; the medians are reported"
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--smallest", action="store_true", help="200 entrants, one run each")
    args = parser.parse_args()
    if args.smallest:
        args.entrants, args.runs = 200, 1
        smallest_servers()
    scenarios = [tuple(s.split(":")) for s in (args.scenario or DEFAULT_SCENARIOS)]

    url = use_scratch_database(DATABASE)
    try:
        results = run(url, args.entrants, scenarios, args.runs)
    finally:
        if not args.keep:
            drop_scratch_database(DATABASE)
    report(args.entrants, results)


def run(url: str, entrants: int, scenarios, runs: int) -> list[dict]:
    from settlements.access import roles
    from settlements.services.tokens import api_token_create

    operator = make_user("bench-operator", roles.OPERATOR)
    manager = make_user("bench-manager", roles.TOURNAMENT_MANAGER)
    marketing = make_user("bench-marketing", roles.MARKETING_MANAGER)
    _, token = api_token_create(user=operator, name="benchmark game server")

    results = []
    with Gunicorn(url) as server:
        print(f"gunicorn on {server.base}: {len(server.worker_pids())} workers, production config")
        cashier = Client(server.base).login(manager.username)
        for number, (type_, stage) in enumerate(scenarios, start=1):
            body = snapshot_text(
                tournament_id="BENCH-ID", type=type_, stage=stage, entrants=entrants
            ).encode()
            measured = []
            for attempt in range(1, runs + 1):
                print(
                    f"\n{type_} {stage}, {entrants:,} entrants, {len(body) / 1e6:.1f} MB, "
                    f"run {attempt} of {runs} (load average {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
                # A new tournament id each run: one crash case per tournament.
                renamed = body.replace(b'"BENCH-ID"', f'"BENCH-{number}-{attempt}"'.encode(), 1)
                measured.append(
                    scenario_run(server, cashier, renamed, token, operator, manager, marketing)
                )
            result = {key: statistics.median(r[key] for r in measured) for key in measured[0]}
            result.update(scenario=f"{type_} {stage}", runs=runs, all=measured)
            results.append(result)
    return results


def scenario_run(server, cashier, body, token, operator, manager, marketing) -> dict:
    from settlements.models import Case
    from settlements.services import settlements as settlement_services
    from settlements.services.decisions import decision_record

    watch = Stopwatch()
    api = Client(server.base)
    meter = MachineTime(
        DATABASE,
        {
            "gunicorn": lambda: [server.process.pid, *server.worker_pids()],
            "this process": lambda: [os.getpid()],
        },
    ).start()
    upload_memory = RssSampler(server.worker_pids())
    with upload_memory, watch("upload (POST /api/v1/snapshots)"):
        status, _, answer = api.request(
            "POST",
            "/api/v1/snapshots",
            body,
            {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
    upload_groups = meter.so_far()
    cpu_upload = sum(upload_groups.values())
    if status != 201:
        raise SystemExit(f"upload refused: HTTP {status} {answer[:500]!r}")
    case = Case.objects.get(pk=json.loads(answer)["case"])
    print(f"    case #{case.pk}: stage {case.stage}, {case.entrants:,} entrant rows")
    if case.decision_options:
        option = case.decision_options[-1]
        with watch(f"decision ({option})"):
            decision_record(case=case, actor=marketing, option=option, reason="benchmark")

    # The module whose settlement_prepare calls insert_rows is where the timer hooks in.
    persistence = _PersistenceTimer(settlement_services)
    with persistence, watch("prepare (settlement_prepare)"):
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    persisted = persistence.until(time.perf_counter())
    groups = meter.stop()
    meter.close()
    cpu_to_prepared = sum(groups.values())
    print(
        f"    {'of which persistence (first row to commit)':<42} {persisted:8.2f} s: "
        f"{settlement.payout_count:,} payouts, {settlement.line_count:,} lines\n"
        f"    CPU: upload {cpu_upload:.2f} s ("
        + ", ".join(f"{name} {seconds:.2f}" for name, seconds in upload_groups.items())
        + f"), upload to prepared {cpu_to_prepared:.2f} s ("
        + ", ".join(f"{name} {seconds:.2f}" for name, seconds in groups.items())
        + ")"
    )
    export = _review_and_export(server, cashier, settlement, case, watch, operator, manager)

    floor = copy_floor(body, settlement.pk, case)
    upload = watch.figures["upload (POST /api/v1/snapshots)"]
    prepare = watch.figures["prepare (settlement_prepare)"]
    decision = sum(v for k, v in watch.figures.items() if k.startswith("decision"))
    rows_prepare = settlement.payout_count + settlement.line_count
    copy_prepare = floor["payouts"][0] + floor["lines"][0]
    to_prepared = upload + decision + prepare
    return {
        "persist_ratio": persisted / copy_prepare,
        "indexed_prepare": floor["indexed payouts"][0] + floor["indexed lines"][0],
        "indexed_entrants": floor["indexed entrants"][0],
        "upload": upload,
        "upload_worker_mb": upload_memory.largest_growth()[2],
        "prepare": prepare,
        "persistence": persisted,
        "rows_prepare": rows_prepare,
        "copy_prepare": copy_prepare,
        "copy_entrants": floor["entrants"][0],
        "rows_all": rows_prepare + case.entrants,
        "to_prepared": to_prepared,
        "floor": floor["floor"][0],
        "ratio": to_prepared / floor["floor"][0],
        "cpu_upload": cpu_upload,
        "cpu_prepare": cpu_to_prepared - cpu_upload,
        "cpu_to_prepared": cpu_to_prepared,
        "cpu_floor": floor["floor"][1],
        "cpu_ratio": cpu_to_prepared / floor["floor"][1],
        **export,
    }


def _review_and_export(server, cashier, settlement, case, watch, operator, manager) -> dict:
    """Submit and approve the settlement, then download its ledger as the cashier, sampling
    the serving worker's memory, and generate the same CSV here under tracemalloc."""
    from settlements.exports import ledger
    from settlements.models import Case
    from settlements.services import settlements as settlement_services

    with watch("submit"):
        settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    with watch("approve"):
        settlement = settlement_services.settlement_approve(
            settlement=settlement, actor=manager, reason="benchmark"
        )
    path = f"/settlements/{settlement.pk}/ledger.csv"
    with (
        RssSampler(server.worker_pids()) as export_memory,
        watch("export (GET ledger.csv)"),
    ):
        size, rows = _download(cashier, path)
    growth, before, peak = export_memory.largest_growth()
    print(
        f"    {size / 1e6:.1f} MB, {rows:,} rows; serving worker {before:.0f} MB -> "
        f"peak {peak:.0f} MB (+{growth:.1f} MB)"
    )
    settlement.case = Case.objects.select_related("tournament").get(pk=case.pk)
    tracemalloc.start()
    local_size = sum(len(chunk) for chunk in ledger.settlement_ledger_csv(settlement))
    _, traced = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert local_size == size, "the served ledger differs from the one generated here"
    print(f"    in-process CSV generation: peak Python allocation {traced / 1e6:.1f} MB")
    return {
        "submit": watch.figures["submit"],
        "approve": watch.figures["approve"],
        "export": watch.figures["export (GET ledger.csv)"],
        "csv_mb": size / 1e6,
        "lines": rows,
        "export_growth_mb": growth,
        "export_traced_mb": traced / 1e6,
    }


class _PersistenceTimer:
    """Notes when settlement_prepare first writes rows (insert_rows), leaving the
    service itself untouched; the persistence step runs from there to the commit."""

    def __init__(self, module):
        self.module, self.started = module, None

    def __enter__(self):
        original = self.original = self.module.insert_rows

        def timed(*args, **kwargs):
            if self.started is None:
                self.started = time.perf_counter()
            return original(*args, **kwargs)

        self.module.insert_rows = timed
        return self

    def __exit__(self, *exc):
        self.module.insert_rows = self.original

    def until(self, end: float) -> float:
        return end - self.started


def _download(client: Client, path: str) -> tuple[int, int]:
    import http.client

    connection = http.client.HTTPConnection(client.host, client.port, timeout=300)
    try:
        response = client.send(connection, "GET", path)
        if response.status != 200:
            raise SystemExit(f"ledger download: HTTP {response.status}")
        size = rows = 0
        while chunk := response.read(65536):
            size += len(chunk)
            rows += chunk.count(b"\n")
        return size, rows - 1  # the header
    finally:
        connection.close()


def report(entrants: int, results: list[dict]) -> None:
    runs = results[0]["runs"]
    print(
        f"\nSummary, {entrants:,} entrants, PostgreSQL, gunicorn with the production config; "
        f"medians of {runs} run{'s' if runs > 1 else ''}; load average now "
        f"{os.getloadavg()[0]:.1f}"
    )
    print(
        f"{'scenario':<16} {'':>5} {'upload':>7} {'prepare':>8} {'to prepared':>12} "
        f"{'floor':>7} {'ratio':>6}"
    )
    for r in results:
        for kind, prefix in (("wall", ""), ("CPU", "cpu_")):
            print(
                f"{r['scenario'] if kind == 'wall' else '':<16} {kind:>5} "
                f"{r[prefix + 'upload']:6.2f}s {r[prefix + 'prepare']:7.2f}s "
                f"{r[prefix + 'to_prepared']:11.2f}s {r[prefix + 'floor']:6.2f}s "
                f"{r[prefix + 'ratio']:5.1f}x"
            )
    print(
        "to prepared: upload + decision + prepare; floor: json.load of the snapshot plus a plain "
        "COPY of every row written on the way\n(snapshot, entrants, payouts, lines); CPU: "
        "gunicorn, this process and the database's backends (the floor: this process and its "
        "backend)."
    )
    for r in results:
        print(
            f"{r['scenario']}: {r['rows_prepare']:,.0f} rows by prepare, {r['rows_all']:,.0f} in "
            f"all; ledger {r['lines']:,.0f} lines, {r['csv_mb']:.1f} MB, in-process peak "
            f"{r['export_traced_mb']:.1f} MB; upload worker peak {r['upload_worker_mb']:.0f} MB; "
            f"export {r['export']:.2f} s (+{r['export_growth_mb']:.1f} MB)"
        )
        ratios = ", ".join(f"{run['ratio']:.1f}x/{run['cpu_ratio']:.1f}x" for run in r["all"])
        print(f"  upload to prepared / floor in each run (wall/CPU): {ratios}")
        print(
            f"  persistence {r['persistence']:.2f} s, {r['persist_ratio']:.1f}x a plain COPY of "
            f"its rows; the same rows into copies of the real tables {r['indexed_prepare']:.2f} "
            f"s ({r['indexed_prepare'] / r['copy_prepare']:.1f}x); entrants into a copy of the "
            f"real table {r['indexed_entrants']:.2f} s "
            f"({r['indexed_entrants'] / r['copy_entrants']:.1f}x)"
        )
        verdict = [
            f"upload to prepared {r['to_prepared']:.1f} s "
            + ("within" if r["to_prepared"] < GOAL_SECONDS else "OVER")
            + f" the {GOAL_SECONDS} s goal",
            f"{r['ratio']:.1f}x the floor (CPU {r['cpu_ratio']:.1f}x) "
            + ("within" if r["ratio"] <= GOAL_RATIO else "OVER")
            + f" the {GOAL_RATIO}x goal",
        ]
        print("  " + "; ".join(verdict))
    print(f"peak resident memory of this process: {own_peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
