"""The signed-in floor, old code against new: wall time and CPU of a view that answers "ok".

    .venv/bin/python benchmarks/floor_ab.py [--baseline REV] [--rounds 2000]
        [--database crashdesk_bench_floor] [--profile FILE] [--smallest]

What every page pays before its own work: the middleware, the session cookie, the user and
their roles, the connection's checks. Unlike `page_ab.py` it needs no seeded desk: it migrates
a small scratch database (dropped at the end; DATABASE_URL names the server) holding one user
with every role, then runs `page_ab.py`'s two workers (the code at --baseline and this working
tree, production settings, requests straight into Django's WSGI handler) and asks them in
turn for the floor, request by request.

Prints, per side, the median and 90th percentile wall time of a request, its Python CPU
(trimmed mean), its PostgreSQL backend's CPU (mean of 10 ms ticks) and its queries, with the
load average, since on a shared machine the wall time also measures the neighbours.

--profile FILE skips the comparison: this working tree's application (crashdesk.wsgi, as
gunicorn loads it) answers --rounds requests in this process, and the garbage collector's
collections and pauses among them are printed; then as many more run under cProfile, whose
statistics are written to FILE (`python -m pstats FILE`) and the top of them printed.

--smallest (CI): 20 requests a side after 2 to warm up, HEAD (the committed code) against this
working tree, then the profile of as many into a temporary file.
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import drop_scratch_database, make_user, use_scratch_database  # noqa: E402
from page_ab import FLOOR, USERNAME, _figures, old_and_new  # noqa: E402

DATABASE = "crashdesk_bench_floor"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git revision of the old code")
    parser.add_argument("--rounds", type=int, default=2000, help="requests per side")
    parser.add_argument("--warmup", type=int, default=50, help="unmeasured requests first")
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--profile", metavar="FILE", help="profile this tree's floor instead")
    parser.add_argument(
        "--smallest", action="store_true", help="20 requests, compared then profiled (CI)"
    )
    args = parser.parse_args()
    if args.smallest:
        args.baseline, args.rounds, args.warmup = "HEAD", 20, 2

    static = tempfile.mkdtemp(prefix="crashdesk-floor-static-")
    # Production serves collectstatic's hashed names (the sign-in page links them).
    os.environ["STATIC_ROOT"] = static
    url = use_scratch_database(args.database)
    from settlements.access import roles  # noqa: PLC0415

    make_user(USERNAME, *roles.DESK_ROLES)
    try:
        if not args.profile:
            _compare(url, args)
        if args.smallest:
            args.profile = str(Path(static) / "floor.prof")
        if args.profile:
            _profile(args)
    finally:
        drop_scratch_database(args.database)
        shutil.rmtree(static, ignore_errors=True)


def _compare(url: str, args) -> None:
    with old_and_new(args.baseline, url, args.database) as (revision, old, new):
        print(f"old: {revision} ({args.baseline}); new: this working tree")
        start = os.getloadavg()[0]
        for _ in range(args.warmup):
            old.call({"op": "get", "path": FLOOR})
            new.call({"op": "get", "path": FLOOR})
        samples = {"old": [], "new": []}
        for _ in range(args.rounds):
            samples["old"].append(old.call({"op": "get", "path": FLOOR}))
            samples["new"].append(new.call({"op": "get", "path": FLOOR}))
        end = os.getloadavg()[0]
    print(
        f"\nThe floor, {args.rounds} alternated requests a side; load average {start:.1f} at "
        f"the start, {end:.1f} at the end. Milliseconds a request: wall median and 90th "
        "percentile; py: the worker's CPU (trimmed mean); pg: its PostgreSQL backend's CPU "
        "(mean of 10 ms ticks)."
    )
    print(f"{'side':<5} {'queries':>7} {'wall p50':>9} {'p90':>6} {'py':>6} {'pg':>6} {'cpu':>6}")
    for side, rows in samples.items():
        figures = _figures(rows)
        p90 = statistics.quantiles([row["wall"] for row in rows], n=10)[-1]
        print(
            f"{side:<5} {figures['queries']:>7} {figures['wall']:9.3f} {p90:6.3f} "
            f"{figures['py']:6.3f} {figures['pg']:6.3f} {figures['cpu']:6.3f}"
        )


def _profile(args) -> None:
    """This tree's floor in this process, through crashdesk.wsgi's application as gunicorn
    loads it: first the garbage collector's work over --rounds requests, then cProfile's view
    of as many more (requests only, not the sign-in)."""
    import cProfile  # noqa: PLC0415
    import gc  # noqa: PLC0415
    import pstats  # noqa: PLC0415
    import time  # noqa: PLC0415

    from _common import ROOT, collect_static  # noqa: PLC0415
    from django.conf import settings  # noqa: PLC0415
    from page_ab import _Browser, _mount_floor  # noqa: PLC0415

    # Read when the application and its static storage start, below.
    settings.STATIC_ROOT = str(collect_static(ROOT, Path(settings.STATIC_ROOT), os.environ))
    _mount_floor(settings)
    from crashdesk.wsgi import application  # noqa: PLC0415

    client = _Browser(application)
    client.sign_in()
    for _ in range(args.warmup):
        client.get(FLOOR)

    pauses: dict[int, list[float]] = {}
    started = [0.0]

    def timed(phase, info):
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.setdefault(info["generation"], []).append(time.perf_counter() - started[0])

    gc.callbacks.append(timed)
    cpu = time.process_time()
    for _ in range(args.rounds):
        client.get(FLOOR)
    cpu = time.process_time() - cpu
    gc.callbacks.remove(timed)
    print(
        f"{args.rounds} requests, {cpu / args.rounds * 1000:.3f} ms of Python CPU each "
        f"(load average {os.getloadavg()[0]:.1f}); {gc.get_freeze_count():,} objects frozen"
    )
    for generation, times in sorted(pauses.items()):
        print(
            f"  garbage collection of generation {generation}: {len(times)} times, "
            f"{sum(times) * 1000:.1f} ms in all, longest {max(times) * 1000:.1f} ms"
        )

    profile = cProfile.Profile()
    profile.enable()
    for _ in range(args.rounds):
        client.get(FLOOR)
    profile.disable()
    profile.dump_stats(args.profile)
    pstats.Stats(args.profile).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
