"""The cashier's side at full size: the ledger feed of an 810,000-line settlement read page by
page over HTTP, and 100,000 payment confirmations posted in batches, timed.

    .venv/bin/python benchmarks/cashier_feed.py [--entrants 300000] [--limit 10000]
        [--confirm 100000] [--batch 1000] [--keep | --reuse] [--smallest]

On a scratch PostgreSQL database (crashdesk_bench_cashier, dropped at the end; DATABASE_URL
names the server): a regular tournament of 300,000 entrants crashes in the early stage (each of
the 270,000 players left is refunded buy-in and fee and gets an even share: 810,000 ledger
lines), is prepared and approved through the services; then, against gunicorn started with
crashdesk/gunicorn.conf.py and production settings, a cashier token (the settlement's ledger
CSV is also generated in this process, timed, for comparison with the other benchmarks)

1. reads the whole feed (GET /api/v1/ledger, ``--limit`` lines a page) on one keep-alive
   connection, as a wallet system would, while the workers' resident memory is sampled;
2. confirms the first ``--confirm`` lines as paid (POST /api/v1/ledger/confirmations,
   ``--batch`` a request), then sends one batch again (a repeat, which writes nothing).

Goals: the feed at a steady pace with flat server memory; 100,000 confirmations in batches of
1,000 recorded in under 10 s.

``--reuse`` keeps the database and, when it already holds the approved settlement (from an
earlier ``--keep`` or ``--reuse`` run), skips building it and confirms the next ``--confirm``
lines not yet confirmed: the 810,000 lines serve eight runs of 100,000 without rebuilding.
``--smallest`` (CI): 200 entrants (540 lines), pages of 100, 200 confirmed in batches of 50.
"""

import argparse
import http.client
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    Gunicorn,
    MachineTime,
    RssSampler,
    Stopwatch,
    drop_scratch_database,
    make_user,
    own_peak_rss_mb,
    smallest_servers,
    use_scratch_database,
)
from _snapshots import snapshot_text  # noqa: E402

DATABASE = "crashdesk_bench_cashier"
GOAL_CONFIRM_SECONDS = 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--limit", type=int, default=10_000, help="lines per feed page")
    parser.add_argument("--confirm", type=int, default=100_000, help="lines to confirm")
    parser.add_argument("--batch", type=int, default=1000, help="confirmations per request")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument(
        "--reuse", action="store_true", help="keep the database and the settlement it holds"
    )
    parser.add_argument("--smallest", action="store_true", help="540 lines, for CI")
    args = parser.parse_args()
    if args.smallest:
        args.entrants, args.limit, args.confirm, args.batch = 200, 100, 200, 50
        smallest_servers()

    url = use_scratch_database(DATABASE, fresh=not args.reuse)
    try:
        run(url, args)
    finally:
        if not (args.keep or args.reuse):
            drop_scratch_database(DATABASE)


def run(url: str, args) -> None:
    from django.contrib.auth import get_user_model

    from settlements.models import PaymentConfirmation, Settlement
    from settlements.services.tokens import api_token_create

    settlement = Settlement.objects.filter(status="approved").first() if args.reuse else None
    if settlement is None:
        settlement = build(args)
        confirmed = 0
    else:
        confirmed = PaymentConfirmation.objects.count()
        print(
            f"reusing the approved settlement: {settlement.line_count:,} lines, "
            f"{confirmed:,} already confirmed"
        )
    if confirmed + args.confirm > settlement.line_count:
        raise SystemExit("not enough unconfirmed lines left: run without --reuse")
    wallet = get_user_model().objects.get(username="bench-wallet")
    _, token = api_token_create(user=wallet, name="benchmark wallet")

    headers = {"Authorization": f"Bearer {token}"}
    with Gunicorn(url) as server:
        host, _, port = server.base.partition(":")
        print(f"gunicorn on {server.base}: {len(server.worker_pids())} workers, production config")
        feed = read_feed(
            server,
            host,
            int(port),
            headers,
            args.limit,
            settlement.line_count,
            confirmed,
            args.confirm,
        )
        answers = confirm(server, host, int(port), headers, feed.pop("first_lines"), args.batch)
    report(feed, answers, args)


def build(args):
    """The approved settlement of the benchmark's crash, through the services."""
    from settlements.access import roles
    from settlements.exports import ledger
    from settlements.services import settlements as settlement_services
    from settlements.services.snapshots import case_load_snapshot

    watch = Stopwatch()
    operator = make_user("bench-operator", roles.OPERATOR)
    manager = make_user("bench-manager", roles.TOURNAMENT_MANAGER)
    make_user("bench-wallet", roles.CASHIER)
    text = snapshot_text(
        tournament_id="BENCH-CASHIER", type="regular", stage="early", entrants=args.entrants
    )
    with watch("load the snapshot (services)"):
        case = case_load_snapshot(actor=operator, snapshot=text)
    with watch("prepare"):
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    with watch("approve (releases the lines)"):
        settlement = settlement_services.settlement_approve(settlement=settlement, actor=manager)
    print(f"  {settlement.line_count:,} approved lines")
    settlement.case = case
    with watch("its ledger CSV, generated in this process"):
        size = sum(len(chunk) for chunk in ledger.settlement_ledger_csv(settlement))
    print(f"  {size / 1e6:.0f} MB of CSV\n")
    return settlement


def read_feed(
    server, host: str, port: int, headers: dict, limit: int, expected: int, skip: int, wanted: int
) -> dict:
    """Every page of the feed; keeps ``wanted`` lines after the first ``skip`` (confirmed by
    an earlier run) for the confirmations."""
    connection = http.client.HTTPConnection(host, port, timeout=120)
    cursor, seen, sequence_ok = None, 0, True
    first_lines: list[dict] = []
    page_seconds: list[float] = []
    page_growth: list[float] = []
    started = time.perf_counter()
    with RssSampler(server.worker_pids()) as memory:
        while True:
            path = f"/api/v1/ledger?limit={limit}" + (f"&after={cursor}" if cursor else "")
            begun = time.perf_counter()
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            body = response.read()
            page_seconds.append(time.perf_counter() - begun)
            if response.status != 200:
                raise SystemExit(f"feed: HTTP {response.status} {body[:300]!r}")
            page = json.loads(body)
            lines = page["lines"]
            if lines and lines[0]["sequence"] != seen + 1:
                sequence_ok = False
            seen += len(lines)
            if len(first_lines) < wanted and seen > skip:
                first_lines += lines[max(0, len(lines) - (seen - skip)) :][
                    : wanted - len(first_lines)
                ]
            page_growth.append(max(memory.peaks[p] - memory.starts[p] for p in memory.pids))
            cursor = page["cursor"]
            if not page["more"]:
                break
    seconds = time.perf_counter() - started
    connection.close()
    growth, before, peak = memory.largest_growth()
    if seen != expected or not sequence_ok:
        raise SystemExit(f"feed: read {seen:,} lines, expected {expected:,} in sequence")
    return {
        "lines": seen,
        "pages": len(page_seconds),
        "seconds": seconds,
        "page_p50": statistics.median(page_seconds),
        "page_p95": sorted(page_seconds)[int(0.95 * (len(page_seconds) - 1))],
        "page_max": max(page_seconds),
        "first_pages": statistics.mean(page_seconds[:10]),
        "last_pages": statistics.mean(page_seconds[-10:]),
        "growth": growth,
        "rss_before": before,
        "rss_peak": peak,
        "growth_after_first_tenth": page_growth[max(0, len(page_growth) // 10 - 1)],
        "first_lines": first_lines,
        "limit": limit,
    }


def confirm(server, host: str, port: int, headers: dict, lines: list[dict], batch: int) -> dict:
    at = datetime.now(UTC).isoformat()
    items = [
        {
            "idempotency_key": line["idempotency_key"],
            "status": "paid",
            "external_reference": f"wal-{line['sequence']:07d}",
            "at": at,
            "amount": line["amount"],
        }
        for line in lines
    ]
    bodies = [
        json.dumps({"confirmations": items[start : start + batch]}).encode()
        for start in range(0, len(items), batch)
    ]
    connection = http.client.HTTPConnection(host, port, timeout=120)
    send = {**headers, "Content-Type": "application/json"}
    seconds: list[float] = []
    recorded = 0
    meter = MachineTime(DATABASE, {"gunicorn": lambda: [server.process.pid, *server.worker_pids()]})
    meter.start()
    started = time.perf_counter()
    for body in bodies:
        begun = time.perf_counter()
        connection.request("POST", "/api/v1/ledger/confirmations", body=body, headers=send)
        response = connection.getresponse()
        answer = json.loads(response.read())
        seconds.append(time.perf_counter() - begun)
        if response.status != 200 or answer["refused"]:
            raise SystemExit(f"confirmations: HTTP {response.status}, {answer}")
        recorded += answer["recorded"]
    total = time.perf_counter() - started
    cpu = meter.stop()
    meter.close()
    begun = time.perf_counter()
    connection.request("POST", "/api/v1/ledger/confirmations", body=bodies[0], headers=send)
    response = connection.getresponse()
    repeat = json.loads(response.read())
    repeat_seconds = time.perf_counter() - begun
    connection.close()
    return {
        "items": len(items),
        "batches": len(bodies),
        "recorded": recorded,
        "seconds": total,
        "cpu": cpu,
        "batch_p50": statistics.median(seconds),
        "batch_p95": sorted(seconds)[int(0.95 * (len(seconds) - 1))],
        "repeat_seconds": repeat_seconds,
        "repeat_already": repeat["already_recorded"],
    }


def report(feed: dict, confirmed: dict, args) -> None:
    from settlements.models import LedgerRelease, PaymentConfirmation
    from settlements.selectors.payments.reconciliation import reconciliation

    stored = PaymentConfirmation.objects.count()
    summary = reconciliation(LedgerRelease.objects.all())
    print(
        f"\nFeed: {feed['lines']:,} lines in {feed['pages']} pages of {feed['limit']:,}: "
        f"{feed['seconds']:.1f} s ({feed['lines'] / feed['seconds']:,.0f} lines/s)"
    )
    print(
        f"  each page p50 {feed['page_p50'] * 1000:.0f} ms, p95 {feed['page_p95'] * 1000:.0f} ms,"
        f" max {feed['page_max'] * 1000:.0f} ms; first 10 pages {feed['first_pages'] * 1000:.0f}"
        f" ms on average, last 10 {feed['last_pages'] * 1000:.0f} ms"
    )
    print(
        f"  serving worker {feed['rss_before']:.0f} MB -> peak {feed['rss_peak']:.0f} MB "
        f"(+{feed['growth']:.1f} MB; +{feed['growth_after_first_tenth']:.1f} MB after the "
        f"first tenth of the pages)"
    )
    verdict = "within" if confirmed["seconds"] < GOAL_CONFIRM_SECONDS else "OVER"
    print(
        f"Confirmations: {confirmed['items']:,} in {confirmed['batches']} batches of "
        f"{args.batch:,}: {confirmed['seconds']:.1f} s, {verdict} the {GOAL_CONFIRM_SECONDS} s "
        f"goal; each batch p50 {confirmed['batch_p50'] * 1000:.0f} ms, "
        f"p95 {confirmed['batch_p95'] * 1000:.0f} ms"
    )
    per_batch = {name: seconds / confirmed["batches"] for name, seconds in confirmed["cpu"].items()}
    print(
        "  CPU per batch: "
        + ", ".join(f"{name} {seconds * 1000:.1f} ms" for name, seconds in per_batch.items())
        + f"; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the end"
    )
    print(
        f"  {confirmed['recorded']:,} recorded, {stored:,} rows stored; one batch sent again: "
        f"{confirmed['repeat_already']:,} already recorded in "
        f"{confirmed['repeat_seconds'] * 1000:.0f} ms, nothing written"
    )
    print(
        f"  reconciliation: {summary.paid_lines:,} paid, {summary.unconfirmed_lines:,} "
        f"not yet confirmed of {summary.lines:,}"
    )
    print(f"peak resident memory of this process: {own_peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
