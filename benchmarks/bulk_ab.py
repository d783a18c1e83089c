"""CPU per tournament of the bulk path, old code against new, alternated round by round.

    .venv/bin/python benchmarks/bulk_ab.py [--baseline REV] [--rounds 4]
        [--tournaments 40] [--entrants 500] [--smallest]

The code at --baseline (default: main) is exported with ``git archive`` into a temporary
folder; this working tree is the new code. Each side runs in its own process on its own scratch
database (crashdesk_bench_ab_old / _new, or BENCH_DATABASE with those suffixes), production
settings. Each round, old then new, settles one outage of --tournaments tournaments (regular
and satellite, every stage that needs no decision) through the jobs a desk starts: load the
snapshots, prepare every case, submit and approve every settlement. A job is run in the side's
own process by the task the workers run (``settlements.tasks.run_job``), so what is measured is
the step code itself: the process's CPU time (Python and the driver) and that of its
PostgreSQL backend (/proc), with no web server, worker polling or page in between. Alternating
round by round lets the load of a shared machine fall on both alike.

Prints, for each step, the median over the rounds of CPU milliseconds per tournament (Python +
PostgreSQL) for old and new, and their ratio. ``--smallest`` (CI): one round of 5 tournaments of
40 entrants, HEAD (the committed code) against this working tree.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIX = (
    ("regular", "middle"),
    ("regular", "late"),
    ("regular", "early"),
    ("satellite", "late"),
    ("regular", "pre"),
)
STEPS = ("load", "prepare", "submit", "approve")


def child(database: str, tournaments: int, entrants: int) -> None:
    """One side: answer each line on stdin (a round number) with that round's figures."""
    sys.path.insert(0, str(Path.cwd() / "benchmarks"))
    from _common import cpu_seconds, drop_scratch_database, make_user, use_scratch_database
    from _snapshots import outage_snapshots

    os.environ["DATABASE_CONN_MAX_AGE"] = "86400"  # one backend to measure, kept throughout
    use_scratch_database(database)
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from settlements.access import roles
    from settlements.models import Case, Job, Settlement
    from settlements.services import jobs
    from settlements.services.incidents import incident_report
    from settlements.tasks import run_job

    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    operator = make_user("ab-operator", roles.OPERATOR)
    manager = make_user("ab-manager", roles.TOURNAMENT_MANAGER)

    def measured(kind, actor, incident, items, params=None) -> float:
        job = jobs.job_start(
            kind=kind,
            actor=actor,
            target=f"incident:{incident.pk}",
            items=items,
            incident=incident,
            params=params,
        )
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]
        python, postgres = time.process_time(), cpu_seconds(backend)
        outcome = run_job.call(job_id=job.pk)
        used = time.process_time() - python + cpu_seconds(backend) - postgres
        if outcome.get("done") != len(items):
            raise SystemExit(f"{kind}: {outcome}")
        return used * 1000 / len(items)

    for line in sys.stdin:
        number = int(line)
        incident = incident_report(
            actor=operator, title=f"round {number}", started_at=timezone.now()
        )
        snapshots = [
            jobs.NewItem(key=f"{name}.json", label=name, payload=payload)
            for name, payload in outage_snapshots(
                f"R{number}", tournaments, entrants=entrants, mix=MIX
            )
        ]
        figures = {"load": measured(Job.Kind.UPLOAD, operator, incident, snapshots)}
        cases = Case.objects.filter(incident=incident).order_by("pk")
        figures["prepare"] = measured(
            Job.Kind.PREPARE,
            operator,
            incident,
            [jobs.NewItem(str(case.pk), str(case)) for case in cases],
        )
        settled = Settlement.objects.filter(case__incident=incident).order_by("pk")
        items = [jobs.NewItem(str(s.pk), str(s)) for s in settled]
        figures["submit"] = measured(Job.Kind.SUBMIT, operator, incident, items)
        figures["approve"] = measured(
            Job.Kind.APPROVE, manager, incident, items, {"reason": "outage checked"}
        )
        print(json.dumps(figures), flush=True)
    drop_scratch_database(database)


def start(folder: Path, database: str, args) -> subprocess.Popen:
    command = [
        sys.executable,
        str(folder / "benchmarks" / "bulk_ab.py"),
        "--child",
        database,
        "--tournaments",
        str(args.tournaments),
        "--entrants",
        str(args.entrants),
    ]
    script = ROOT / "benchmarks" / "bulk_ab.py"
    if not (folder / "benchmarks" / "bulk_ab.py").exists():
        command[1] = str(script)  # the baseline predates this script: run ours on its code
    env = {**os.environ, "PYTHONPATH": str(folder)}
    return subprocess.Popen(
        command, cwd=folder, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def export(revision: str, into: Path) -> None:
    archive = into / "baseline.tar"
    with open(archive, "wb") as handle:
        subprocess.run(["git", "archive", revision], cwd=ROOT, stdout=handle, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "old", filter="data")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--tournaments", type=int, default=40)
    parser.add_argument("--entrants", type=int, default=500)
    parser.add_argument("--smallest", action="store_true", help="one round of 5 × 40, for CI")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.smallest:
        args.baseline, args.rounds, args.tournaments, args.entrants = "HEAD", 1, len(MIX), 40
    if args.child:
        child(args.child, args.tournaments, args.entrants)
        return
    name = os.environ.get("BENCH_DATABASE", "crashdesk_bench_ab")
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as folder:
        export(args.baseline, Path(folder))
        sides = {
            "old": start(Path(folder) / "old", f"{name}_old", args),
            "new": start(ROOT, f"{name}_new", args),
        }
        results: dict[str, list[dict]] = {"old": [], "new": []}
        for number in range(args.rounds):
            for side, process in sides.items():
                process.stdin.write(f"{number}\n")
                process.stdin.flush()
                answer = process.stdout.readline()
                if not answer:
                    raise SystemExit(f"the {side} side stopped")
                results[side].append(json.loads(answer))
        for process in sides.values():
            process.stdin.close()
            process.wait()
    print(
        f"{args.tournaments} tournaments of {args.entrants} entrants a round, {args.rounds} "
        f"rounds alternated; CPU ms per tournament (Python + PostgreSQL), median of rounds"
    )
    total = {"old": 0.0, "new": 0.0}
    for step in STEPS:
        old, new = (statistics.median(r[step] for r in results[side]) for side in ("old", "new"))
        total["old"] += old
        total["new"] += new
        print(f"  {step:<8} old {old:6.1f}  new {new:6.1f}  new/old {new / old:5.2f}")
    print(
        f"  {'all':<8} old {total['old']:6.1f}  new {total['new']:6.1f}  "
        f"new/old {total['new'] / total['old']:5.2f}"
    )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
