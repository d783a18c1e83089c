"""One outage, 200 tournaments of 2,000 entrants each: loaded and settled together, timed.

    .venv/bin/python benchmarks/incident_200.py [--path bulk|one-by-one] [--tournaments 200]
        [--entrants 2000] [--zip] [--workers 2] [--worker-interval S] [--clients 8] [--keep]
        [--smallest]

On a scratch PostgreSQL database (crashdesk_bench_incident, dropped at the end unless --keep;
DATABASE_URL names the server), with gunicorn started with crashdesk/gunicorn.conf.py and
production settings on 127.0.0.1, the way people and game servers would. The tournaments are
regular, satellite and freeroll, crashed at every stage; 60 of the 200 wait for a decision.

--path bulk (the default), as a desk would settle an outage today:

1. an operator reports the incident (before the clock starts);
2. the operator loads every snapshot at once on "Load many snapshots" (one form post with 200
   files, or one zip with --zip; past ARCHIVE_MAX_FILES, 1,000, one post per thousand); a job
   loads them;
3. a Marketing Manager answers each kind of case waiting for a decision once, on the decision
   page of the incident (one post per kind, each a job recording one decision per case);
4. the operator prepares every ready case, then submits every prepared settlement (two
   buttons, two jobs);
5. a Tournament Manager reviews the approval of all 200 and confirms it with a reason (two
   posts, one job).

The jobs run in real worker processes (--workers of them, 2 by default: `manage.py run_worker`,
production settings, polling the task table every JOB_POLL_MILLISECONDS as deployed, each job
shared by JOB_WORKERS_PER_JOB of them), started beside gunicorn. While a job runs, its page is
polled every second as the browser does; the script itself notices the end of each job from the
database (every 50 ms) and goes on at once, as a person would not.

--path one-by-one: the same outage a request per tournament and step (the API upload, the
prepare, submit and approve buttons), --clients at a time; decisions through the services.

Along the way it times the pages a desk opens (the incident workbench, the queues, the bulk
decision and approval pages and the approval's confirmation, the job pages and their polls)
at two moments: every case loaded, and every settlement submitted (benchmarks/_pages.py).

Prints each step's wall time and machine time (CPU seconds of gunicorn, the job workers and the
PostgreSQL backends of the scratch database, read from /proc), the totals from the first upload
to the last approval, the human actions counted, and the load average before and after.

--smallest (CI): 10 tournaments of 40 entrants (one of each kind in the mix), on the path asked
for, gunicorn with two workers.
"""

import argparse
import io
import json
import os
import re
import statistics
import sys
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    Client,
    Gunicorn,
    MachineTime,
    RssSampler,
    Worker,
    drop_scratch_database,
    make_user,
    own_peak_rss_mb,
    smallest_servers,
    use_scratch_database,
)
from _pages import PageCheck  # noqa: E402
from _snapshots import rebuy_text, snapshot_text  # noqa: E402

# BENCH_DATABASE: a scratch name of ones own when several people share one PostgreSQL server.
DATABASE = os.environ.get("BENCH_DATABASE", "crashdesk_bench_incident")
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
    parser.add_argument("--path", choices=("bulk", "one-by-one"), default="bulk")
    parser.add_argument("--zip", action="store_true", help="bulk: one zip, not 200 files")
    parser.add_argument(
        "--worker-interval",
        type=float,
        default=None,
        help="bulk: seconds the idle worker waits between looks at the task table "
        "(default: JOB_POLL_MILLISECONDS, as deployed)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="bulk: job workers (run_worker processes), each job shared by JOB_WORKERS_PER_JOB",
    )
    parser.add_argument(
        "--clients", type=int, default=8, help="one-by-one: requests in flight at once"
    )
    parser.add_argument(
        "--rebuys",
        action="store_true",
        help="the regular tournaments are rebuy knock-outs (crash-snapshot/2, RULES.md §8)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--smallest", action="store_true", help="10 tournaments of 40, for CI")
    args = parser.parse_args()
    if args.smallest:
        args.tournaments, args.entrants = len(MIX), 40
        smallest_servers()

    url = use_scratch_database(DATABASE)
    print(f"load average before: {_load()}")
    try:
        if args.path == "bulk":
            run_bulk(
                url,
                args.tournaments,
                args.entrants,
                args.zip,
                args.worker_interval,
                args.workers,
                rebuys=args.rebuys,
            )
        else:
            run(url, args.tournaments, args.entrants, args.clients, rebuys=args.rebuys)
    finally:
        print(f"load average after: {_load()}")
        if not args.keep:
            drop_scratch_database(DATABASE)


def _load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def _snapshots(tournaments: int, entrants: int, *, rebuys: bool) -> list[bytes]:
    snapshots = []
    for number in range(tournaments):
        type_, stage, _ = MIX[number % len(MIX)]
        text = snapshot_text(
            tournament_id=f"T{number:04d}", type=type_, stage=stage, entrants=entrants, seed=number
        )
        if rebuys and type_ == "regular":
            text = rebuy_text(text, entrants)
        snapshots.append(text.encode())
    return snapshots


# --- The bulk path ----------------------------------------------------------------------------


class Desk:
    """The people at their browsers: what each does, counted, and the machine time of each
    step (from the start of its first request to the end of the job it started)."""

    def __init__(self, meter: MachineTime, base: str):
        self.meter, self.base = meter, base
        self.actions: list[tuple[str, str, bool]] = []  # (who, what, a decision?)
        self.steps: list[tuple[str, float, float, float]] = []  # (name, wall, job run, CPU)
        self._step_start: tuple[float, dict[str, float]] = (0.0, {})
        self.polls: list[float] = []  # ms of each poll of a job's progress

    def act(self, who: str, what: str, *, decision: bool = False) -> None:
        self.actions.append((who, what, decision))

    def begin(self) -> None:
        self._step_start = (time.perf_counter(), self.meter.so_far())

    def end(self, name: str, job_run: float) -> None:
        started, before = self._step_start
        wall = time.perf_counter() - started
        by_group = {group: cpu - before[group] for group, cpu in self.meter.so_far().items()}
        used = sum(by_group.values())
        self.steps.append((name, wall, job_run, used))
        split = ", ".join(f"{group} {cpu:.2f}" for group, cpu in by_group.items())
        print(
            f"  {name:<40} {wall:6.2f} s wall  {job_run:6.2f} s running  {used:6.2f} s CPU"
            f" ({split})",
            flush=True,
        )

    def wait(self, browser: Client, job_id: int) -> float:
        """Until the job ends, its page polled each second as the browser does; returns how
        long the workers ran it."""
        stop = threading.Event()

        def poll():
            while not stop.wait(1.0):
                started = time.perf_counter()
                _as(browser).request("GET", f"/jobs/{job_id}/", None, {"HX-Request": "true"})
                self.polls.append((time.perf_counter() - started) * 1000)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        try:
            while True:
                ((status, run, failed),) = self.meter.query(
                    "SELECT status, extract(epoch FROM finished_at - started_at), "
                    "(SELECT count(*) FROM settlements_jobitem WHERE job_id = j.id "
                    "AND status = 'failed') FROM settlements_job j WHERE id = %s",
                    (job_id,),
                )
                if status in ("done", "failed"):
                    break
                time.sleep(0.05)
        finally:
            stop.set()
            poller.join()
        if status != "done" or failed:
            raise SystemExit(f"job #{job_id} {status} with {failed} failed items")
        return float(run or 0)


def _job_of(status: int, headers, body: bytes, what: str) -> int:
    expect(status, 302, what, body)
    match = re.search(r"/jobs/(\d+)/$", headers["Location"])
    if not match:
        raise SystemExit(f"{what}: went to {headers['Location']}, not to a job")
    return int(match.group(1))


def _confirmed(client, path: str, fields: dict, what: str) -> int:
    """Post a bulk form, then confirm what it restates (the selection it shows): the job."""
    status, _, page = client.post_form(path, fields)
    expect(status, 200, f"{what} (restated)", page)
    confirm = {**fields, "selection": _selection(page), "step": "confirm"}
    return _job_of(*client.post_form(path, confirm), what)


def _selection(body: bytes) -> str:
    match = re.search(rb'name="selection" value="([\d,]*)"', body)
    if not match:
        raise SystemExit(f"no selection on the page:\n{body[:800]!r}")
    return match.group(1).decode()


def run_bulk(
    url: str,
    tournaments: int,
    entrants: int,
    as_zip: bool,
    interval: float | None,
    workers: int,
    *,
    rebuys: bool = False,
) -> None:
    from django.conf import settings

    from settlements.access import roles
    from settlements.models import Settlement
    from settlements.services.incidents import incident_report

    operator = make_user("bench-operator", roles.OPERATOR)
    marketing = make_user("bench-marketing", roles.MARKETING_MANAGER)
    manager = make_user("bench-manager", roles.TOURNAMENT_MANAGER)
    snapshots = _snapshots(tournaments, entrants, rebuys=rebuys)
    files = [(f"T{number:04d}.json", body) for number, body in enumerate(snapshots)]
    # One upload takes at most ARCHIVE_MAX_FILES files (loose or in a zip): more are loaded in
    # as many uploads, one after the other (one load job at a time per incident).
    most = settings.ARCHIVE_MAX_FILES
    uploads = [files[start : start + most] for start in range(0, len(files), most)]
    if as_zip:
        uploads = [[(f"snapshots-{n}.zip", _zipped(part))] for n, part in enumerate(uploads)]
    size = sum(len(body) for part in uploads for _, body in part)
    print(
        f"{tournaments} tournaments of {entrants:,} entrants: {sum(map(len, uploads))} file"
        f"{'s' if len(files) > 1 else ''}, {size / 1e6:.1f} MB in {len(uploads)} upload(s)"
    )
    options = {(type_, stage): option for type_, stage, option in MIX if option}

    with Gunicorn(url) as server, ExitStack() as stack:
        started = [stack.enter_context(Worker(url, interval=interval)) for _ in range(workers)]
        print(
            f"gunicorn on {server.base}: {len(server.worker_pids())} workers, production config; "
            f"{workers} job worker{'s' if workers > 1 else ''}"
            f"{'' if interval is None else f' (polling every {interval:g} s)'}\n"
        )
        incident = incident_report(actor=operator, title="Cluster outage", started_at=_now())
        desk_client = Client(server.base).login(operator.username)
        mm_client = Client(server.base).login(marketing.username)
        tm_client = Client(server.base).login(manager.username)
        meter = MachineTime(
            DATABASE,
            {
                "gunicorn": lambda: [server.process.pid, *server.worker_pids()],
                "job workers": lambda: [worker.process.pid for worker in started],
            },
        )
        pages = PageCheck(meter)
        try:
            desk, kinds = _settle(
                meter,
                pages,
                incident,
                tournaments,
                uploads,
                options,
                desk_client,
                mm_client,
                tm_client,
            )
        finally:
            meter.close()

    approved = Settlement.objects.filter(case__incident=incident, status="approved").count()
    others = [a for a in desk.actions if not a[2]]
    decisions = [a for a in desk.actions if a[2]]
    print(f"\n{approved} of {tournaments} settlements approved")
    print(f"first upload to last approval: {meter.wall:.1f} s wall, {meter.line()}")
    steps_cpu = {group: cpu - pages.cpu.get(group, 0.0) for group, cpu in meter.figures.items()}
    print(
        f"  without the page checks: {sum(steps_cpu.values()):.1f} s of CPU ("
        + ", ".join(f"{group} {cpu:.1f} s" for group, cpu in steps_cpu.items())
        + f"), {sum(steps_cpu.values()) / tournaments * 1000:.0f} ms a tournament"
    )
    pages.report()
    print(f"the jobs ran {sum(step[2] for step in desk.steps):.1f} s on the workers")
    print(f"human actions besides decisions: {len(others)}")
    for who, what, _ in others:
        print(f"  {who}: {what}")
    print(f"decisions: {len(decisions)} (one per kind of case, {kinds} kinds)")
    for who, what, _ in decisions:
        print(f"  {who}: {what}")


def _settle(meter, pages, incident, tournaments, uploads, options, *clients):
    """From the first upload to the last approval; returns the desk's record and the number
    of kinds of case decided. The pages on the way are timed at two moments (``pages``)."""
    desk_client, mm_client, tm_client = clients
    desk = Desk(meter, "")
    base = f"/incidents/{incident.pk}"
    meter.start()
    for part in uploads:
        desk.begin()
        desk_client.get(f"{base}/upload-many/")
        job = _job_of(
            *desk_client.post_files(
                f"{base}/upload-many/", {}, [("files", name, body) for name, body in part]
            ),
            "upload many",
        )
        desk.act("operator", f"load {len(part)} file{'s' if len(part) > 1 else ''} at once")
        desk.end(f"load {len(part)} files", desk.wait(desk_client, job))
    pages.add("loading", "job progress (htmx poll)", desk.polls)
    pages.check(
        f"{tournaments:,} loaded",
        [
            ("incident workbench", desk_client, f"{base}/tournaments/"),
            ("incident workbench, last page", desk_client, f"{base}/tournaments/?cases_page=9999"),
            ("decisions to make (bulk)", mm_client, f"{base}/decide/"),
            ("queue: decisions", mm_client, "/queues/decisions/"),
            ("queue: to prepare", desk_client, "/queues/to_prepare/"),
            ("queue: every case", desk_client, "/queues/cases/"),
            ("load job's items", desk_client, f"/jobs/{job}/"),
            ("load job's items, last page", desk_client, f"/jobs/{job}/?page=9999"),
        ],
    )

    kinds = 0
    while True:
        desk.begin()
        status, _, page = mm_client.get(f"{base}/decide/")
        expect(status, 200, "decision page", page)
        key = re.search(rb'action="/incidents/\d+/decide/\?group=([^"]+)"', page)
        if key is None:
            break
        group = _unquote(key.group(1).decode())
        type_, stage = group.split("|")[:2]
        chosen = _selection(page)
        answer = {"selection": chosen, "option": options[type_, stage], "reason": "policy"}
        job = _confirmed(mm_client, f"{base}/decide/?group={_quote(group)}", answer, "decide")
        desk.act("marketing manager", f"{type_} {stage}: {options[type_, stage]}", decision=True)
        desk.act("marketing manager", "confirm the answer", decision=True)
        kinds += 1
        count = chosen.count(",") + 1
        desk.end(f"decide {count} {type_} {stage} cases", desk.wait(mm_client, job))

    desk.begin()
    desk_client.get(f"{base}/tournaments/")
    job = _confirmed(desk_client, f"{base}/prepare-ready/", {}, "prepare ready")
    desk.act("operator", "prepare every ready case")
    desk.act("operator", "confirm the prepare")
    desk.end(f"prepare {tournaments} settlements", desk.wait(desk_client, job))

    desk.begin()
    job = _confirmed(desk_client, f"{base}/submit-prepared/", {}, "submit prepared")
    desk.act("operator", "submit every prepared settlement")
    desk.act("operator", "confirm the submit")
    desk.end(f"submit {tournaments} settlements", desk.wait(desk_client, job))

    pages.check(
        f"{tournaments:,} submitted",
        [
            ("approve many (choice)", tm_client, f"{base}/approve/"),
            ("queue: approvals", tm_client, "/queues/approvals/"),
            ("incident workbench", desk_client, f"{base}/tournaments/"),
            ("submit job's items", desk_client, f"/jobs/{job}/"),
        ],
    )
    desk.begin()
    status, _, page = tm_client.get(f"{base}/approve/")
    expect(status, 200, "approval page", page)
    started = time.perf_counter()
    status, _, page = tm_client.post_form(f"{base}/approve/", {"selection": _selection(page)})
    confirming = (time.perf_counter() - started) * 1000
    expect(status, 200, "approval review", page)
    pages.add(f"{tournaments:,} submitted", "approval confirmation (POST)", [confirming], len(page))
    desk.act("tournament manager", "review the approval of all")
    if f"Approve {tournaments} settlements".encode() not in page:
        raise SystemExit(f"the confirmation does not restate {tournaments}:\n{page[:800]!r}")
    job = _job_of(
        *tm_client.post_form(
            f"{base}/approve/",
            {"selection": _selection(page), "reason": "outage checked", "step": "confirm"},
        ),
        "approve",
    )
    desk.act("tournament manager", "confirm: approve all, with one reason")
    desk.end(f"approve {tournaments} settlements", desk.wait(tm_client, job))
    meter.stop()
    return desk, kinds


def _zipped(files: list[tuple[str, bytes]]) -> bytes:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, body in files:
            zipped.writestr(name, body)
    return archive.getvalue()


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="")


def _unquote(value: str) -> str:
    from html import unescape
    from urllib.parse import unquote

    return unquote(unescape(value))


# --- One request per tournament and step -----------------------------------------------------


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


def run(url: str, tournaments: int, entrants: int, clients: int, *, rebuys: bool = False) -> None:
    from settlements.access import roles
    from settlements.models import Case, Settlement
    from settlements.services.decisions import decision_record
    from settlements.services.incidents import incident_close, incident_report
    from settlements.services.tokens import api_token_create
    from settlements.workflow import CaseStatus

    operator = make_user("bench-operator", roles.OPERATOR)
    marketing = make_user("bench-marketing", roles.MARKETING_MANAGER)
    manager = make_user("bench-manager", roles.TOURNAMENT_MANAGER)
    _, token = api_token_create(user=operator, name="benchmark game servers")

    snapshots = _snapshots(tournaments, entrants, rebuys=rebuys)
    size = sum(map(len, snapshots))
    print(
        f"{tournaments} tournaments of {entrants:,} entrants ({size / 1e6:.0f} MB of snapshots), "
        f"{clients} requests in flight at once"
    )

    with Gunicorn(url) as server:
        workers = server.worker_pids()
        print(f"gunicorn on {server.base}: {len(workers)} workers, production config\n")
        incident = incident_report(actor=operator, title="Cluster outage", started_at=_now())
        desk = Client(server.base).login(operator.username)
        approver = Client(server.base).login(manager.username)
        steps = []
        meter = MachineTime(DATABASE, {"gunicorn": lambda: [server.process.pid, *workers]})
        with RssSampler(workers) as memory:
            started = time.perf_counter()
            meter.start()

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
                decision_record(
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
            meter.stop()
            meter.close()

            export = Step("download ledgers (web)", clients)
            sizes = []

            def download(pk: int) -> None:
                status, _, body = _as(approver).request("GET", f"/settlements/{pk}/ledger.csv")
                expect(status, 200, f"ledger of settlement #{pk}", body)
                sizes.append(len(body))

            export.run(settlements, download)
            steps.append(export)
            print(export.line(), flush=True)
            incident_close(incident=incident, actor=operator, reason="all paid")

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
        f"({settled / tournaments * 1000:.0f} ms per tournament on average), {meter.line()}"
    )
    print(
        f"posts by people: {tournaments * 3} (a prepare, a submit and an approval per "
        f"tournament; the snapshots came through the API); decisions: {len(waiting)}"
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
