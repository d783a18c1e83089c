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
- "Submitted": an incident of as many tournaments that need no decision, every settlement
  prepared and submitted by an operator, waiting for a Tournament Manager.

The pages read cases and settlements, not their entrants, so --entrants is small by default
(the snapshot of 500 entrants incident_200 uses changes the figures little, see
docs/benchmarks.md). `bench-desk`, holding every role, is the user page_ab.py signs in as.
"""

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import make_user, use_scratch_database  # noqa: E402
from _snapshots import snapshot_text  # noqa: E402

DATABASE = os.environ.get("BENCH_DATABASE", "crashdesk_bench_outage")
# incident_200's mix: (type, stage), 3 in 10 waiting for a Marketing Manager's decision.
LOADED_MIX = (
    ("regular", "middle"), ("regular", "late"), ("regular", "early"), ("satellite", "middle"),
    ("regular", "middle"), ("freeroll", "middle"), ("regular", "pre"), ("satellite", "late"),
    ("freeroll", "early"), ("regular", "late"),
)  # fmt: skip
# Only kinds that need no decision, so that every case is prepared and submitted.
SUBMITTED_MIX = (
    ("regular", "middle"), ("regular", "late"), ("regular", "early"),
    ("satellite", "late"), ("regular", "pre"),
)  # fmt: skip
TITLES = {"loaded": "Outage, every case loaded", "submitted": "Outage, every settlement submitted"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=2000)
    parser.add_argument("--entrants", type=int, default=200)
    args = parser.parse_args()
    use_scratch_database(DATABASE)
    print(f"load average before: {os.getloadavg()}")
    seed(args.tournaments, args.entrants)
    print(f"load average after: {os.getloadavg()}; kept {DATABASE}")


def seed(tournaments: int, entrants: int) -> None:
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from settlements import services
    from settlements.access import roles
    from settlements.models import Case, Job, Settlement
    from settlements.services import jobs
    from settlements.tasks import run_job

    # Jobs are run here, one after the other; anything they queue (ICM valuations) stays queued.
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    operator = make_user("bench-operator", roles.OPERATOR)
    make_user("bench-desk", *roles.ALL_ROLES)

    def run(kind, actor, incident, items, params=None) -> None:
        started = time.perf_counter()
        job = jobs.job_start(
            kind=kind, actor=actor, target=f"incident:{incident.pk}", items=items,
            incident=incident, params=params,
        )  # fmt: skip
        outcome = run_job.call(job_id=job.pk, token=job.run_token)
        if outcome.get("done") != len(items):
            raise SystemExit(f"{kind}: {outcome}")
        print(f"  {kind} {len(items)}: {time.perf_counter() - started:.0f} s", flush=True)

    def loaded(tag: str, mix) -> object:
        incident = services.incident_report(
            actor=operator, title=TITLES[tag], started_at=timezone.now()
        )
        snapshots = [
            jobs.NewItem(
                key=f"{tag}-T{n:04d}.json", label=f"{tag}-T{n:04d}",
                payload=snapshot_text(
                    tournament_id=f"{tag}-T{n:04d}", type=mix[n % len(mix)][0],
                    stage=mix[n % len(mix)][1], entrants=entrants, seed=n,
                ).encode(),
            )
            for n in range(tournaments)
        ]  # fmt: skip
        most = settings.ARCHIVE_MAX_FILES  # one load job per upload of at most this many
        for start in range(0, len(snapshots), most):
            run(Job.Kind.UPLOAD, operator, incident, snapshots[start : start + most])
        return incident

    print(f"{tournaments:,} tournaments of {entrants} entrants an incident")
    loaded("loaded", LOADED_MIX)
    incident = loaded("submitted", SUBMITTED_MIX)
    cases = Case.objects.filter(incident=incident).order_by("pk")
    run(Job.Kind.PREPARE, operator, incident, [jobs.NewItem(str(c.pk), str(c)) for c in cases])
    settled = Settlement.objects.filter(case__incident=incident).order_by("pk")
    run(Job.Kind.SUBMIT, operator, incident, [jobs.NewItem(str(s.pk), str(s)) for s in settled])
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


if __name__ == "__main__":
    main()
