"""What the metrics cost: CPU per request with the request-metrics middleware and without, and
the time of a /metrics scrape.

    .venv/bin/python benchmarks/metrics_cost.py [--rounds 400] [--cases 40] [--smallest]

On a scratch database (crashdesk_bench_metrics, dropped at the end) with a small desk (--cases
cases loaded, half of them settled and approved, some payments failed), two Django WSGI handlers
run in this one process with production settings: one with every middleware of the settings,
one without settlements.monitoring.RequestMetricsMiddleware. They are asked in turn for the
same URL, request by request (with, without, with, ...), so the load of a shared machine falls
on both alike; each request's CPU time (time.process_time: Python, driver included) is kept.
Then the middleware alone is timed around a view that does nothing, and /metrics is scraped.
``--smallest`` (CI): 4 cases, 3 requests per URL and side after 2 to warm up, 1,000 calls of the
middleware alone, 2 scrapes.
"""

import argparse
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import drop_scratch_database, make_user, use_scratch_database  # noqa: E402

DATABASE = "crashdesk_bench_metrics"
MIDDLEWARE = "settlements.monitoring.RequestMetricsMiddleware"
# Unmeasured requests first, calls of the middleware alone and scrapes timed (--smallest: fewer).
SIZES = {"warmup": 20, "calls": 100_000, "scrapes": 20}
METRICS_TOKEN = "bench-metrics-token-0123456789abcdef"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=400, help="requests per URL and side")
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--smallest", action="store_true", help="a few of everything, for CI")
    args = parser.parse_args()
    if args.smallest:
        args.rounds, args.cases = 3, 4
        SIZES.update(warmup=2, calls=1000, scrapes=2)
    use_scratch_database(DATABASE)
    try:
        run(args)
    finally:
        drop_scratch_database(DATABASE)


def run(args) -> None:
    from django.conf import settings
    from django.core.handlers.wsgi import WSGIHandler
    from django.test import override_settings

    token = _desk(args.cases)
    settings.METRICS_TOKEN = METRICS_TOKEN
    with_metrics = WSGIHandler()
    without = [name for name in settings.MIDDLEWARE if name != MIDDLEWARE]
    with override_settings(MIDDLEWARE=without):
        without_metrics = WSGIHandler()

    urls = {
        "/healthz": {},
        "/api/v1/cases?limit=20": {"HTTP_AUTHORIZATION": f"Bearer {token}"},
        "/api/v1/openapi.json": {},
    }
    print(f"CPU per request, ms, median of {args.rounds} alternated requests each:")
    print(f"{'url':<28} {'without':>8} {'with':>8} {'extra':>8}")
    for url, headers in urls.items():
        costs = {True: [], False: []}
        for round_ in range(args.rounds + SIZES["warmup"]):
            for metrics, handler in ((True, with_metrics), (False, without_metrics)):
                started = time.process_time()
                status = _request(handler, url, headers)
                spent = time.process_time() - started
                assert status == "200 OK", (url, status)
                if round_ >= SIZES["warmup"]:  # the first warm caches and connections
                    costs[metrics].append(spent * 1000)
        # Medians: a garbage collection or a neighbour's burst lands on one request of one side.
        plain, counted = statistics.median(costs[False]), statistics.median(costs[True])
        print(f"{url:<28} {plain:8.3f} {counted:8.3f} {counted - plain:8.3f}")

    _middleware_alone()
    _scrape(with_metrics)


def _middleware_alone() -> None:
    from django.http import HttpResponse
    from django.test import RequestFactory
    from django.urls import resolve

    from settlements.monitoring import RequestMetricsMiddleware

    request = RequestFactory(SERVER_NAME="127.0.0.1").get("/healthz")
    request.resolver_match = resolve("/healthz")
    answer = HttpResponse("ok")
    middleware = RequestMetricsMiddleware(lambda request: answer)
    count = SIZES["calls"]
    started = time.process_time()
    for _ in range(count):
        middleware(request)
    per_call = (time.process_time() - started) / count * 1e6
    print(f"the middleware alone: {per_call:.1f} µs of CPU a request ({count:,} calls)")


def _scrape(handler) -> None:
    from django.db import connection

    headers = {"HTTP_AUTHORIZATION": f"Bearer {METRICS_TOKEN}"}
    queries = []

    def count(execute, sql, params, many, context):
        queries.append(sql)
        return execute(sql, params, many, context)

    # Counted as they run: the request's start clears Django's own query log.
    with connection.execute_wrapper(count):
        assert _request(handler, "/metrics", headers) == "200 OK"
    walls, cpus = [], []
    for _ in range(SIZES["scrapes"]):
        wall, cpu = time.perf_counter(), time.process_time()
        _request(handler, "/metrics", headers)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    print(
        f"/metrics: {len(queries)} queries, "
        f"{statistics.median(walls):.1f} ms wall (median of {SIZES['scrapes']}), "
        f"{statistics.mean(cpus):.1f} ms of Python CPU"
    )


def _request(handler, url: str, headers: dict) -> str:
    from django.test.client import RequestFactory

    environ = RequestFactory(SERVER_NAME="127.0.0.1").get(url, **headers).environ
    status = []
    body = handler(environ, lambda code, _headers, *rest: status.append(code))
    b"".join(body)
    body.close()
    return status[0]


def _desk(cases: int) -> str:
    """A desk of ``cases`` cases, half approved, with some payments failed; an auditor's
    token."""
    from django.utils import timezone

    from settlements.access import roles
    from settlements.demo import snapshot_bytes
    from settlements.selectors.payments.lines import approved_lines
    from settlements.services import settlements as settlement_services
    from settlements.services.payments import ConfirmationEntry, payment_confirm
    from settlements.services.snapshots import case_load_snapshot
    from settlements.services.tokens import api_token_create

    operator = make_user("bench-operator", roles.OPERATOR)
    manager = make_user("bench-manager", roles.TOURNAMENT_MANAGER)
    auditor = make_user("bench-auditor", roles.AUDITOR)
    cashier = make_user("bench-cashier", roles.CASHIER)
    for number in range(cases):
        case = case_load_snapshot(
            actor=operator,
            snapshot=snapshot_bytes(tournament_id=f"M-{number}", stage="early", entrants=30),
        )
        if number % 2:
            continue
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
        settlement_services.settlement_approve(
            settlement=settlement, actor=manager, reason="checked"
        )
    at = timezone.now() - timedelta(minutes=5)
    lines = list(approved_lines(after=0, until=200))
    payment_confirm(
        actor=cashier,
        confirmations=[
            ConfirmationEntry(line.key, "paid" if n % 3 else "failed", f"w{n}", at, line.amount)
            for n, line in enumerate(lines)
        ],
    )
    return api_token_create(user=auditor, name="bench")[1]


if __name__ == "__main__":
    main()
