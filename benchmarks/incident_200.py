"""One outage, 200 tournaments of 2,000 entrants each: loaded and settled together, timed.

    .venv/bin/python benchmarks/incident_200.py [--tournaments 200] [--entrants 2000]
        [--clients 8] [--keep]

On a scratch PostgreSQL database (crashdesk_bench_incident, dropped at the end unless --keep;
DATABASE_URL names the server), with gunicorn started with crashdesk/gunicorn.conf.py and
production settings on 127.0.0.1, the way the people and game servers would:

1. an operator reports the incident;
2. the game servers post the 200 snapshots to POST /api/v1/snapshots?incident=ID, --clients
   at a time (regular, satellite and freeroll tournaments, crashed at every stage);
3. a Marketing Manager records the decisions the rules ask for (in this process, through the
   services: the decision page is not what is measured here);
4. operators prepare every settlement (POST /cases/ID/prepare/), then submit them, and
   Tournament Managers approve them (POST /settlements/ID/approve/), --clients at a time;
5. the cashier downloads every ledger CSV; the incident is closed.

Prints each step's wall time and throughput, each tournament's request times (p50, p95,
max), the time from the first upload to the last approval, and peak memory (this process and
the gunicorn workers).
"""

import argparse
import json
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    Client,
    Gunicorn,
    RssSampler,
    drop_scratch_database,
    make_user,
    own_peak_rss_mb,
    use_scratch_database,
)
from _snapshots import snapshot_text  # noqa: E402

DATABASE = "crashdesk_bench_incident"
# (type, stage, decision the Marketing Manager takes if the rules ask for one), in turn.
MIX = (
    ("regular", "middle", None),
    ("regular", "late", None),
    ("regular", "early", None),
    ("satellite", "middle", "chip_equity"),
    ("regular", "middle", None),
    ("freeroll", "middle", "chip_equity"),
    ("regular", "pre", None),
    ("satellite", "late", None),
    ("freeroll", "early", "no_reschedule"),
    ("regular", "late", None),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tournaments", type=int, default=200)
    parser.add_argument("--entrants", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8, help="requests in flight at once")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    args = parser.parse_args()

    url = use_scratch_database(DATABASE)
    try:
        run(url, args.tournaments, args.entrants, args.clients)
    finally:
        if not args.keep:
            drop_scratch_database(DATABASE)


class Step:
    """Runs one request per item on `clients` threads; keeps each request's time."""

    def __init__(self, name: str, clients: int):
        self.name, self.clients = name, clients
        self.times: list[float] = []
        self._lock = threading.Lock()

    def run(self, items, request) -> float:
        def timed(item):
            started = time.perf_counter()
            request(item)
            elapsed = time.perf_counter() - started
            with self._lock:
                self.times.append(elapsed)

        started = time.perf_counter()
        with ThreadPoolExecutor(self.clients) as pool:
            list(pool.map(timed, items))
        self.wall = time.perf_counter() - started
        return self.wall

    def line(self) -> str:
        ordered = sorted(self.times)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return (
            f"  {self.name:<30} {self.wall:7.2f} s  {len(self.times) / self.wall:6.1f}/s   "
            f"each: p50 {statistics.median(ordered) * 1000:6.0f} ms  p95 {p95 * 1000:6.0f} ms"
            f"  max {ordered[-1] * 1000:6.0f} ms"
        )


def expect(status: int, wanted: int, what: str, body: bytes = b"") -> None:
    if status != wanted:
        raise SystemExit(f"{what}: HTTP {status}, expected {wanted}\n{body[:800]!r}")


def run(url: str, tournaments: int, entrants: int, clients: int) -> None:
    from settlements import roles, services
    from settlements.models import Case, Settlement
    from settlements.workflow import CaseStatus

    operator = make_user("bench-operator", roles.OPERATOR)
    marketing = make_user("bench-marketing", roles.MARKETING_MANAGER)
    manager = make_user("bench-manager", roles.TOURNAMENT_MANAGER)
    _, token = services.api_token_create(user=operator, name="benchmark game servers")

    snapshots = []
    for number in range(tournaments):
        type_, stage, _ = MIX[number % len(MIX)]
        text = snapshot_text(
            tournament_id=f"T{number:04d}", type=type_, stage=stage, entrants=entrants, seed=number
        )
        snapshots.append(text.encode())
    size = sum(map(len, snapshots))
    print(
        f"{tournaments} tournaments of {entrants:,} entrants ({size / 1e6:.0f} MB of snapshots), "
        f"{clients} requests in flight at once"
    )

    with Gunicorn(url) as server:
        workers = server.worker_pids()
        print(f"gunicorn on {server.base}: {len(workers)} workers, production config\n")
        incident = services.incident_report(
            actor=operator, title="Cluster outage", started_at=_now()
        )
        desk = Client(server.base).login(operator.username)
        approver = Client(server.base).login(manager.username)
        steps = []
        with RssSampler(workers) as memory:
            started = time.perf_counter()

            upload = Step("upload snapshots (API)", clients)
            cases: list[int] = []

            def post(body: bytes) -> None:
                status, _, answer = Client(server.base).request(
                    "POST",
                    f"/api/v1/snapshots?incident={incident.pk}",
                    body,
                    {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                )
                expect(status, 201, "upload", answer)
                cases.append(json.loads(answer)["case"])

            upload.run(snapshots, post)
            steps.append(upload)
            print(upload.line(), flush=True)

            decide = Step("record decisions (services)", 1)
            waiting = list(
                Case.objects.filter(
                    incident=incident, status=CaseStatus.AWAITING_DECISION
                ).select_related("tournament")
            )
            options = {f"T{n:04d}": MIX[n % len(MIX)][2] for n in range(tournaments)}

            def record(case) -> None:
                services.decision_record(
                    case=case,
                    actor=marketing,
                    option=options[case.tournament.operator_id],
                    reason="as the policy suggests",
                )

            decide.run(waiting, record)
            steps.append(decide)
            print(decide.line(), flush=True)

            prepare = Step("prepare settlements (web)", clients)

            def prepare_case(case_id: int) -> None:
                status, _, body = _as(desk).post_form(
                    f"/cases/{case_id}/prepare/", {"note": "outage"}
                )
                expect(status, 302, f"prepare case #{case_id}", body)

            prepare.run(cases, prepare_case)
            steps.append(prepare)
            print(prepare.line(), flush=True)

            settlements = list(
                Settlement.objects.filter(case__incident=incident).values_list("pk", flat=True)
            )
            submit = Step("submit settlements (web)", clients)

            def submit_one(pk: int) -> None:
                status, _, body = _as(desk).post_form(f"/settlements/{pk}/submit/", {})
                expect(status, 302, f"submit settlement #{pk}", body)

            submit.run(settlements, submit_one)
            steps.append(submit)
            print(submit.line(), flush=True)

            approve = Step("approve settlements (web)", clients)

            def approve_one(pk: int) -> None:
                status, _, body = _as(approver).post_form(
                    f"/settlements/{pk}/approve/", {"reason": "checked against the snapshot"}
                )
                expect(status, 302, f"approve settlement #{pk}", body)

            approve.run(settlements, approve_one)
            steps.append(approve)
            print(approve.line(), flush=True)
            settled = time.perf_counter() - started

            export = Step("download ledgers (web)", clients)
            sizes = []

            def download(pk: int) -> None:
                status, _, body = _as(approver).request("GET", f"/settlements/{pk}/ledger.csv")
                expect(status, 200, f"ledger of settlement #{pk}", body)
                sizes.append(len(body))

            export.run(settlements, download)
            steps.append(export)
            print(export.line(), flush=True)
            services.incident_close(incident=incident, actor=operator, reason="all paid")

        approved = Settlement.objects.filter(case__incident=incident, status="approved").count()
        lines = sum(
            Settlement.objects.filter(case__incident=incident).values_list("line_count", flat=True)
        )
        worker_peak = max(memory.peaks.values())

    print(
        f"\n{approved} of {tournaments} settlements approved, {lines:,} ledger lines, "
        f"{sum(sizes) / 1e6:.1f} MB of CSV"
    )
    print(
        f"first upload to last approval: {settled:.1f} s "
        f"({settled / tournaments * 1000:.0f} ms per tournament on average)"
    )
    per_tournament = sum(statistics.median(step.times) for step in steps[:5] if step.times)
    print(
        f"one tournament's own requests (medians of upload, decision, prepare, submit, "
        f"approve): {per_tournament * 1000:.0f} ms"
    )
    print(
        f"peak resident memory: gunicorn worker {worker_peak:.0f} MB, this process "
        f"{own_peak_rss_mb():.0f} MB"
    )


def _as(signed_in: Client) -> Client:
    """A client of its own for one request thread, sharing the signed-in session."""
    clone = Client(f"{signed_in.host}:{signed_in.port}")
    clone.cookies = dict(signed_in.cookies)
    return clone


def _now():
    from django.utils import timezone

    return timezone.now()


if __name__ == "__main__":
    main()
