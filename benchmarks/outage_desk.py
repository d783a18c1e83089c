"""A desk in the middle of a large outage, seeded once and kept, for timing its pages again.

    BENCH_DATABASE=crashdesk_bench_outage .venv/bin/python benchmarks/outage_desk.py \
        [--tournaments 2000] [--entrants 200]

`incident_200.py --tournaments 2000` times the outage's pages too, but only after half an hour
of uploads and jobs through gunicorn and real workers, and only three views each. This script
builds the desk at incident_200's two moments in one scratch database (BENCH_DATABASE, kept
for `page_ab.py --desk outage`), in this process, by the same jobs a desk starts (each run by
the task the workers run, as `bulk_ab.py` does):

- "Loaded": an incident with every snapshot loaded and nothing decided (incident_200's mix of
  regular, satellite and freeroll tournaments at every stage, so 3 in 10 wait for a decision);
- "Prepared": an incident of as many tournaments that need no decision, every settlement
  prepared, for the bulk submit's confirmation;
- "Submitted": another such incident, every settlement prepared and submitted by an operator,
  waiting for a Tournament Manager.

--add keeps the database and seeds only the incidents it lacks.

The pages read cases and settlements, not their entrants, so --entrants is small by default
(the snapshot of 500 entrants incident_200 uses changes the figures little, see
docs/benchmarks.md). `bench-desk`, holding every role, is the user page_ab.py signs in as.

    .venv/bin/python benchmarks/outage_desk.py --time 20 [--baseline main]

seeds nothing: on the desk kept, it serves the code at --baseline (exported with git archive)
and this working tree, each with its own gunicorn (production settings, 2 workers), and asks
both for each page in turn (old, new, old, new, ...) --time times over HTTP, as incident_200.py
does once: the median and 95th percentile of each side's wall times, and the CPU its gunicorn
spent a request (the PostgreSQL backends' is page_ab.py's to measure).

    .venv/bin/python benchmarks/outage_desk.py --smallest

(CI) seeds incidents of 10 tournaments of 20 entrants, times their pages 2 times, HEAD (the
committed code) against this working tree, and drops the database.
"""

import argparse
import io
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    ROOT,
    Client,
    Gunicorn,
    cpu_seconds,
    drop_scratch_database,
    make_user,
    use_scratch_database,
)
from _snapshots import outage_snapshots  # noqa: E402

DATABASE = os.environ.get("BENCH_DATABASE", "crashdesk_bench_outage")
# incident_200's mix: (type, stage), 3 in 10 waiting for a Marketing Manager's decision.
LOADED_MIX = (
    ("regular", "middle"),
    ("regular", "late"),
    ("regular", "early"),
    ("satellite", "middle"),
    ("regular", "middle"),
    ("freeroll", "middle"),
    ("regular", "pre"),
    ("satellite", "late"),
    ("freeroll", "early"),
    ("regular", "late"),
)
# Only kinds that need no decision, so that every case is prepared and submitted.
SUBMITTED_MIX = (
    ("regular", "middle"),
    ("regular", "late"),
    ("regular", "early"),
    ("satellite", "late"),
    ("regular", "pre"),
)
TITLES = {
    "loaded": "Outage, every case loaded",
    "prepared": "Outage, every settlement prepared",
    "submitted": "Outage, every settlement submitted",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=2000)
    parser.add_argument("--entrants", type=int, default=200)
    parser.add_argument("--add", action="store_true", help="seed only the incidents missing")
    parser.add_argument("--time", type=int, metavar="N", help="time the pages of the desk kept")
    parser.add_argument("--baseline", default="main", help="--time: the old code's revision")
    parser.add_argument(
        "--smallest", action="store_true", help="seed 10 × 20, time 2, drop it (CI)"
    )
    args = parser.parse_args()
    if args.time:
        return time_pages(args.time, args.baseline)
    use_scratch_database(DATABASE, fresh=not args.add)
    print(f"load average before: {os.getloadavg()}")
    if args.smallest:
        try:
            seed(10, 20)
            time_pages(2, "HEAD")
        finally:
            drop_scratch_database(DATABASE)
        return None
    seed(args.tournaments, args.entrants)
    print(f"load average after: {os.getloadavg()}; kept {DATABASE}")


def seed(tournaments: int, entrants: int) -> None:
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from settlements.access import roles
    from settlements.models import Case, Incident, Job, Settlement
    from settlements.services import jobs
    from settlements.services.incidents import incident_report
    from settlements.tasks import run_job

    # Jobs are run here, one after the other; anything they queue (ICM valuations) stays queued.
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    from django.contrib.auth import get_user_model

    if not get_user_model().objects.filter(username="bench-desk").exists():
        make_user("bench-operator", roles.OPERATOR)
        make_user("bench-desk", *roles.DESK_ROLES)
    operator = get_user_model().objects.get(username="bench-operator")

    def run(kind, actor, incident, items, params=None) -> None:
        started = time.perf_counter()
        job = jobs.job_start(
            kind=kind,
            actor=actor,
            target=f"incident:{incident.pk}",
            items=items,
            incident=incident,
            params=params,
        )
        outcome = run_job.call(job_id=job.pk)
        if outcome.get("done") != len(items):
            raise SystemExit(f"{kind}: {outcome}")
        print(f"  {kind} {len(items)}: {time.perf_counter() - started:.0f} s", flush=True)

    def loaded(tag: str, mix) -> object:
        incident = incident_report(actor=operator, title=TITLES[tag], started_at=timezone.now())
        snapshots = [
            jobs.NewItem(key=f"{name}.json", label=name, payload=payload)
            for name, payload in outage_snapshots(
                f"{tag}-", tournaments, entrants=entrants, mix=mix
            )
        ]
        most = settings.ARCHIVE_MAX_FILES  # one load job per upload of at most this many
        for start in range(0, len(snapshots), most):
            run(Job.Kind.UPLOAD, operator, incident, snapshots[start : start + most])
        return incident

    print(f"{tournaments:,} tournaments of {entrants} entrants an incident")
    for tag, mix, steps in (
        ("loaded", LOADED_MIX, ()),
        ("prepared", SUBMITTED_MIX, (Job.Kind.PREPARE,)),
        ("submitted", SUBMITTED_MIX, (Job.Kind.PREPARE, Job.Kind.SUBMIT)),
    ):
        if Incident.objects.filter(title=TITLES[tag]).exists():
            continue
        incident = loaded(tag, mix)
        for kind in steps:
            if kind == Job.Kind.PREPARE:
                records = Case.objects.filter(incident=incident).order_by("pk")
            else:
                records = Settlement.objects.filter(case__incident=incident).order_by("pk")
            run(kind, operator, incident, [jobs.NewItem(str(r.pk), str(r)) for r in records])
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def time_pages(times: int, baseline: str) -> None:
    from django.contrib.auth import get_user_model
    from page_ab import _outage_pages

    from settlements.access import roles

    url = use_scratch_database(DATABASE, fresh=False)
    pages = _outage_pages()
    # The new side signs in as a second desk user: a TOTP code is taken once, and the old side
    # has just taken this half-minute's code of bench-desk.
    if not get_user_model().objects.filter(username="bench-desk-2").exists():
        make_user("bench-desk-2", *roles.DESK_ROLES)
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="crashdesk-outage-") as folder:
        archive = subprocess.run(
            ["git", "archive", baseline], cwd=ROOT, check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        with Gunicorn(url, workers=2, tree=Path(folder)) as old, Gunicorn(url, workers=2) as new:
            sides = {"old": old, "new": new}
            clients = {
                "old": Client(old.base).login("bench-desk"),
                "new": Client(new.base).login("bench-desk-2"),
            }
            print(
                f"{'page':<22} {'median old':>10} {'new':>6}  {'p95 old':>7} {'new':>6}  "
                f"{'CPU old':>7} {'new':>6}  (ms; gunicorn's CPU a request)"
            )
            for name, page in pages.items():
                walls = {side: [] for side in sides}
                cpu = dict.fromkeys(sides, 0.0)
                for number in range(times + 2):  # the first two warm each side up
                    for side, server in sides.items():
                        used = _cpu(server)
                        started = time.perf_counter()
                        status = _get(clients[side], page)
                        if number >= 2:
                            walls[side].append((time.perf_counter() - started) * 1000)
                            cpu[side] += _cpu(server) - used
                        if status != 200:
                            raise SystemExit(f"{name}, {side}: HTTP {status}")
                median = {side: statistics.median(walls[side]) for side in sides}
                p95 = {side: statistics.quantiles(walls[side], n=20)[-1] for side in sides}
                print(
                    f"{name:<22} {median['old']:10.0f} {median['new']:6.0f}  {p95['old']:7.0f} "
                    f"{p95['new']:6.0f}  {cpu['old'] * 1000 / times:7.1f} "
                    f"{cpu['new'] * 1000 / times:6.1f}",
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()}")


def _get(client: Client, page) -> int:
    if isinstance(page, str):
        return client.get(page)[0]
    if "form" in page:
        return client.post_form(page["path"], page["form"])[0]
    return client.request("GET", page["path"], None, {"HX-Request": "true"})[0]


def _cpu(server: Gunicorn) -> float:
    return sum(cpu_seconds(pid) for pid in [server.process.pid, *server.worker_pids()])


if __name__ == "__main__":
    main()
