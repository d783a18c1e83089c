"""Each player's entries on the case page of a 300,000-entrant rebuy knock-out: what a page of
the list costs, read each way it can be (the snapshot's order, a sort, a search), and what the
list adds to the whole case page.

    BENCH_DATABASE=crashdesk_bench_entrants .venv/bin/python benchmarks/case_entrants.py \
        [--entrants 300000] [--requests 20] [--keep] [--reuse] [--smallest]

A crash-snapshot/2 case (benchmarks/_snapshots.rebuy_text, middle stage) is loaded into a
scratch PostgreSQL database; then, in this process through Django's test client with the
production settings, each URL is asked ``--requests`` times, the kinds of request taking turns
so that all see the same load. It prints the median wall time of a request and its mean CPU
time, this process's and that of the PostgreSQL backend serving it (read from /proc in ticks of
10 ms, hence a mean over every request rather than a median). "case page,
no list" is the same page with the list turned off (what the page cost before the list), so
the two full-page rows compare like with like. ``--smallest`` (CI): 200 entrants, one request
of each kind.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import (  # noqa: E402
    collect_static,
    cpu_seconds,
    drop_scratch_database,
    make_user,
    use_scratch_database,
)
from _snapshots import rebuy_text, snapshot_text  # noqa: E402

DATABASE = os.environ.get("BENCH_DATABASE", "crashdesk_bench_entrants")
HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "case-entrants"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--reuse", action="store_true", help="use a kept database and its case")
    parser.add_argument("--smallest", action="store_true", help="200 entrants, one request each")
    args = parser.parse_args()
    if args.smallest:
        args.entrants, args.requests = 200, 1
    static = tempfile.TemporaryDirectory(prefix="crashdesk-entrants-static-")
    # Production serves collectstatic's hashed names, which every page links.
    os.environ["STATIC_ROOT"] = static.name
    use_scratch_database(DATABASE, fresh=not args.reuse)
    try:
        from django.conf import settings

        # Read when the first page's static storage starts.
        settings.STATIC_ROOT = str(collect_static(ROOT, Path(static.name), os.environ))
        run(args)
    finally:
        if not args.keep:
            drop_scratch_database(DATABASE)
        static.cleanup()


def run(args) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from settlements.access import roles, second_factor
    from settlements.models import Case

    case = Case.objects.filter(entrants=args.entrants).exclude(entrants_digest="").first()
    if case is None:
        case = load(args.entrants)
    reader = get_user_model().objects.filter(username="bench-auditor").first()
    reader = reader or make_user("bench-auditor", roles.AUDITOR)
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(reader)
    # Auditors owe a second factor; what the page costs once it is proved is what is measured.
    session = client.session
    second_factor.stamp_proof(session)
    session.save()
    url = f"/cases/{case.pk}/"
    last = (args.entrants + 49) // 50
    kinds = {
        "case page, no list": (url, {}, {}),
        "case page with the list": (url, {}, {}),
        "list: snapshot order, page 1": (url, {}, HTMX),
        f"list: snapshot order, page {last:,}": (url, {"entrants_page": last}, HTMX),
        "list: by bounty, page 1": (url, {"entrants_sort": "-bounty"}, HTMX),
        f"list: by bounty, page {last:,}": (
            url,
            {"entrants_sort": "-bounty", "entrants_page": last},
            HTMX,
        ),
        "list: by player id, page 1": (url, {"entrants_sort": "player"}, HTMX),
        "list: search by prefix (player-001…, 10,000 ids)": (
            url,
            {"entrants_q": "player-001"},
            HTMX,
        ),
        "list: search by a whole id": (url, {"entrants_q": "player-0123456"}, HTMX),
    }
    times = {name: ([], [], []) for name in kinds}
    # One unmeasured round: the first request of a process loads templates and code.
    for name, (path, query, headers) in kinds.items():
        timed(client, path, query, headers, without_list=name.endswith("no list"))
    for _ in range(args.requests):
        for name, (path, query, headers) in kinds.items():
            figures = timed(client, path, query, headers, without_list=name.endswith("no list"))
            for kept, figure in zip(times[name], figures, strict=True):
                kept.append(figure)
    loads = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"{args.entrants:,} entrants, {args.requests} requests of each kind; load {loads}\n")
    print("| request | wall, median | CPU, mean: Django + PostgreSQL |")
    print("|---|---|---|")
    for name, (walls, own, backend) in times.items():
        django_ms, postgres_ms = statistics.mean(own) * 1000, statistics.mean(backend) * 1000
        print(
            f"| {name} | {statistics.median(walls) * 1000:.1f} ms "
            f"| {django_ms + postgres_ms:.1f} ms ({django_ms:.1f} + {postgres_ms:.1f}) |"
        )


def timed(client, path: str, query: dict, headers: dict, *, without_list: bool):
    from django.db import connection

    from settlements.views import case_entries

    connection.ensure_connection()
    backend = connection.connection.info.backend_pid
    real = case_entries.case_entrants
    if without_list:
        case_entries.case_entrants = lambda request, case: None
    try:
        started, own, theirs = time.perf_counter(), time.process_time(), cpu_seconds(backend)
        response = client.get(path, query, **headers)
        wall = time.perf_counter() - started
        own, theirs = time.process_time() - own, cpu_seconds(backend) - theirs
    finally:
        case_entries.case_entrants = real
    if response.status_code != 200:
        raise SystemExit(f"{path} {query}: {response.status_code}")
    return wall, own, theirs


def load(entrants: int):
    from settlements.access import roles
    from settlements.services.snapshots import case_load_snapshot

    operator = make_user("bench-operator", roles.OPERATOR)
    v1 = snapshot_text(tournament_id="BENCH-KO", type="regular", stage="middle", entrants=entrants)
    started = time.perf_counter()
    case = case_load_snapshot(actor=operator, snapshot=rebuy_text(v1, entrants).encode())
    print(f"loaded case #{case.pk} in {time.perf_counter() - started:.1f} s")
    return case


if __name__ == "__main__":
    main()
