"""CPU per view, old code against new, alternated request by request on one desk.

    .venv/bin/python benchmarks/page_ab.py [--baseline REV] [--rounds 200]
        [--database crashdesk_bench_pages] [--cold [--first-page 1000]] [--desk outage]
        [--smallest]

Measures the desk that `page_latency.py --keep` left (run that once first), or with --desk
outage the one `outage_desk.py` left (a large outage at two moments: every case loaded, every
settlement submitted) and the pages incident_200.py times on it. The code at
--baseline (default: main) is exported with `git archive` into a temporary folder; this
working tree is the new code. Each runs in its own worker process with production settings,
signed in as the benchmark user holding every role; the parent asks them in turn for the same
page, one request at a time (old, new, old, new, ...), so the machine's load, which on a
shared machine changes from second to second, falls on both alike.

A request goes straight into Django's WSGI handler (no server, no sockets). For each the worker
measures its own CPU time (time.process_time: Python, including the driver) and that of its
PostgreSQL backend process (utime + stime from /proc, in clock ticks of 10 ms: a sample, so
only the mean over many requests means anything), and counts the queries. Wall time is printed
too, but on a loaded machine it mostly measures the other processes.

Pages: the dashboard (its first and second page of incidents), the case page of the big
settlement, that settlement's review at a middle page (as it is, with a player's explanation
open, and searched), the history browser (changes and events), the players page, a player's
statement, and the floor: a signed-in view that answers "ok" behind the same role check as every
page (mounted by the workers, not by the app).

Before measuring, the old and new HTML of every page are compared, with the per-request CSRF
tokens masked; the script stops if they differ. Each worker uses its own cache key prefix, so
neither reads entries the other wrote.

Asking for the same page again measures a page seen before: whatever a page keeps in the cache
(the review keeps its table and chart, the dashboard its parts) is read back. --cold measures
first views instead: the settlement review only, each round at the next page number from
--first-page (1000, 1001, ...; the warm-up requests take the pages just before), so neither side
has seen the page before. Both sides get the same page in a round, and every round's old and new
HTML are compared.

--smallest (CI) needs no kept desk: it seeds page_latency.py's desk at its smallest and
outage_desk.py's incidents of 10 tournaments into one scratch database (dropped at the end),
then measures the pages of both desks, 2 rounds each after 1 to warm up, and 2 first views,
HEAD (the committed code) against this working tree.
"""

import argparse
import json
import os
import re
import secrets
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATABASE = "crashdesk_bench_pages"
USERNAME = "bench-desk"
PASSWORD = "benchmark-passphrase-1"
FLOOR = "/_ab/floor/"
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")

# Per-request secrets that differ between any two renders of the same page, and the time of
# the whole verification each side runs on its first history page, a minute apart at times.
_TOKENS = [
    re.compile(rb'(name="csrfmiddlewaretoken" value=")[^"]+'),
    re.compile(rb'("X-CSRFToken": ")[^"]+'),
    re.compile(rb'(nonce=")[^"]+'),
    re.compile(rb"(The whole chain was last recomputed on )[^;]+"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git revision of the old code")
    parser.add_argument("--rounds", type=int, default=200, help="requests per page and side")
    parser.add_argument("--warmup", type=int, default=10, help="unmeasured requests first")
    parser.add_argument("--database", default=DATABASE)
    parser.add_argument("--pages", help="comma-separated subset of the page names")
    parser.add_argument(
        "--html-may-differ",
        action="store_true",
        help="report differing HTML and measure anyway (a baseline from before other changes)",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="first views: the settlement review, a page not seen before each round",
    )
    parser.add_argument("--first-page", type=int, default=1000, help="--cold's first page")
    parser.add_argument(
        "--desk",
        choices=("pages", "outage"),
        default="pages",
        help="whose desk and pages: page_latency.py's (default) or outage_desk.py's",
    )
    parser.add_argument(
        "--smallest",
        action="store_true",
        help="seed a tiny desk of both kinds and measure every page of both, HEAD against this "
        "tree (CI)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(Path(args.worker), args.database)

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if args.smallest:
        return _smallest(args)
    from _common import database_url  # noqa: PLC0415

    _measure(args, database_url(args.database), (args.desk,), cold=args.cold, warm=not args.cold)


def _smallest(args) -> None:
    import outage_desk  # noqa: PLC0415
    import page_latency  # noqa: PLC0415
    from _common import drop_scratch_database, use_scratch_database  # noqa: PLC0415

    # The review of page_latency's smallest settlement has three pages: 1 warms, 2 and 3 count.
    args.baseline, args.rounds, args.warmup, args.first_page = "HEAD", 2, 1, 2
    # Not page_latency's database, which CI may be building at the same time.
    args.database = "crashdesk_bench_page_ab"
    page_latency.INCIDENTS, page_latency.OPEN_INCIDENTS = 20, 5
    url = use_scratch_database(args.database)
    try:
        page_latency.seed(200)
        outage_desk.seed(10, 20)
        _measure(args, url, ("pages", "outage"), cold=True, warm=True)
    finally:
        drop_scratch_database(args.database)


def _measure(args, url: str, desks: tuple[str, ...], *, cold: bool, warm: bool) -> None:
    """First views of the review (``cold``) and pages seen before (``warm``) of ``desks``."""
    with old_and_new(args.baseline, url, args.database) as (revision, old, new):
        pages = {}
        for desk in desks:
            pages |= old.call({"op": "pages", "desk": desk})["pages"]
        pages["floor"] = FLOOR
        if args.pages:
            pages = {name: pages[name] for name in args.pages.split(",")}
        print(f"old: {revision} ({args.baseline}); new: this working tree")
        print(f"load average at start: {os.getloadavg()[0]:.1f}\n")
        results = {}
        if cold:
            results["review, first view"] = _cold(
                old, new, pages["settlement review"], args, may_differ=args.html_may_differ
            )
        if warm:
            _compare(old, new, pages, may_differ=args.html_may_differ)
        for name, path in pages.items() if warm else ():
            for _ in range(args.warmup):
                old.call(_request(path))
                new.call(_request(path))
            samples = {"old": [], "new": []}
            for _ in range(args.rounds):
                samples["old"].append(old.call(_request(path)))
                samples["new"].append(new.call(_request(path)))
            results[name] = samples
            print(f"  measured {name} (load average {os.getloadavg()[0]:.1f})", flush=True)
    _report(results, args.rounds)


def _request(page, **extra) -> dict:
    """The worker's message for ``page``: a path, or {"path", "form" (posted), "htmx"}."""
    return {"op": "get", **({"path": page} if isinstance(page, str) else page), **extra}


@contextmanager
def old_and_new(baseline: str, url: str, database: str):
    """(revision, old, new): a worker on ``baseline`` (exported with git archive) and one on this
    working tree, both on ``database``; stopped on leaving."""
    revision = subprocess.run(
        ["git", "rev-parse", "--short", baseline],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="crashdesk-ab-") as folder:
        archive = subprocess.run(
            ["git", "archive", revision], cwd=ROOT, check=True, capture_output=True
        ).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        env = {**os.environ, "DATABASE_URL": url}
        env.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
        old = Worker("old", Path(folder), env, database, Path(folder) / "_static_old")
        new = Worker("new", ROOT, env, database, Path(folder) / "_static_new")
        try:
            yield revision, old, new
        finally:
            old.close()
            new.close()


def _cold(old: "Worker", new: "Worker", path: str, args, *, may_differ: bool) -> dict:
    """The review's first views: a page neither side has seen, a new one each round."""
    base = re.sub(r"[?&]page=\d+", "", path)
    base += "&" if "?" in base else "?"
    first = args.first_page
    samples = {"old": [], "new": []}
    differing = 0
    for number in range(first - args.warmup, first + args.rounds):
        page = f"{base}page={number}"
        answers = [worker.call({"op": "get", "path": page, "body": True}) for worker in (old, new)]
        if number == first - args.warmup or number >= first:
            bodies = [_masked(answer.pop("body")) for answer in answers]
            if bodies[0] != bodies[1]:
                if not may_differ:
                    _compare(old, new, {"settlement review": page}, may_differ=False)
                differing += 1
        if number >= first:
            samples["old"].append(answers[0])
            samples["new"].append(answers[1])
    print(
        f"  measured first views of {base}page={first}..{first + args.rounds - 1} "
        f"(load average {os.getloadavg()[0]:.1f}); "
        + (f"{differing} pages' HTML DIFFERS" if differing else "every page the same HTML"),
        flush=True,
    )
    return samples


def _report(results: dict, rounds: int) -> None:
    print(
        f"\nPer view, {rounds} alternated requests each. py: the worker's CPU (trimmed mean, "
        "ms); pg: its PostgreSQL backend's CPU (mean of 10 ms ticks); cpu = py + pg; "
        "wall: median and 95th percentile ms, noisy on a shared machine."
    )
    print(
        f"{'page':<18} {'queries':>9}  {'py old':>7} {'new':>6}  {'pg old':>6} {'new':>6}  "
        f"{'cpu old':>7} {'new':>6} {'new/old':>7}  {'wall old':>8} {'new':>6}  "
        f"{'p95 old':>7} {'new':>6}"
    )
    for name, samples in results.items():
        figures = {side: _figures(rows) for side, rows in samples.items()}
        o, n = figures["old"], figures["new"]
        print(
            f"{name:<18} {o['queries']:>4}→{n['queries']:<4}  {o['py']:7.2f} {n['py']:6.2f}  "
            f"{o['pg']:6.2f} {n['pg']:6.2f}  {o['cpu']:7.2f} {n['cpu']:6.2f} "
            f"{n['cpu'] / o['cpu']:7.2f}  {o['wall']:8.2f} {n['wall']:6.2f}  "
            f"{o['p95']:7.2f} {n['p95']:6.2f}"
        )


def _figures(rows: list[dict]) -> dict:
    py = sorted(row["py"] for row in rows)
    cut = len(py) // 10
    trimmed = py[cut : len(py) - cut] or py
    pg = statistics.fmean(row["pg_ticks"] for row in rows) * TICK_MS
    return {
        "py": statistics.fmean(trimmed),
        "pg": pg,
        "cpu": statistics.fmean(trimmed) + pg,
        "wall": statistics.median(row["wall"] for row in rows),
        "p95": statistics.quantiles([row["wall"] for row in rows], n=20)[-1],
        "queries": statistics.mode(row["queries"] for row in rows),
    }


def _compare(old: "Worker", new: "Worker", pages: dict, *, may_differ: bool) -> None:
    for name, path in pages.items():
        bodies = [_masked(worker.call(_request(path, body=True))["body"]) for worker in (old, new)]
        if bodies[0] != bodies[1]:
            import difflib  # noqa: PLC0415

            diff = difflib.unified_diff(
                bodies[0].decode().splitlines(), bodies[1].decode().splitlines(), lineterm="", n=1
            )
            lines = list(diff)
            if may_differ:
                changed = sum(1 for line in lines if line[:1] in "+-") - 2
                print(f"  {name:<18} {_shown(path):<36} HTML DIFFERS ({changed} lines changed)")
                continue
            print("\n".join(lines[:60]))
            raise SystemExit(f"{name}: the new HTML differs from the old")
        print(f"  {name:<18} {_shown(path):<36} same HTML ({len(bodies[0]) / 1024:.1f} KiB)")


def _shown(page) -> str:
    return page if isinstance(page, str) else f"{'POST ' if 'form' in page else ''}{page['path']}"


def _masked(body: str) -> bytes:
    data = body.encode()
    for pattern in _TOKENS:
        data = pattern.sub(rb"\1*", data)
    return data


class Worker:
    """A worker process running the code of `tree`, answering one JSON line per request."""

    def __init__(self, side: str, tree: Path, env: dict, database: str, static: Path):
        self.side = side
        from _common import collect_static  # noqa: PLC0415

        env = {**env, "DEBUG": "false"}
        env["STATIC_ROOT"] = str(collect_static(tree, static, env))
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "--worker",
                str(tree),
                "--database",
                database,
            ],
            cwd=tree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def call(self, message: dict) -> dict:
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.side} worker stopped")
        answer = json.loads(line)
        if "error" in answer:
            raise SystemExit(f"{self.side} worker: {answer['error']}")
        return answer

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


# --- The worker --------------------------------------------------------------------------------


def worker(tree: Path, database: str) -> None:
    """Serve requests for the code in `tree` over stdin/stdout."""
    sys.path.insert(0, str(tree))
    sys.path.insert(1, str(tree / "benchmarks"))
    os.chdir(tree)
    from _common import PRODUCTION_ENV  # noqa: PLC0415

    os.environ.update(PRODUCTION_ENV)
    os.environ["DJANGO_SETTINGS_MODULE"] = "crashdesk.settings"
    from django.conf import settings  # noqa: PLC0415

    # Each side its own cache entries (the dashboard's layout may differ between them).
    settings.CACHES["default"]["KEY_PREFIX"] = f"ab-{secrets.token_hex(4)}"
    import django  # noqa: PLC0415

    django.setup()
    import logging  # noqa: PLC0415

    logging.getLogger("crashdesk.events").setLevel(logging.WARNING)
    _mount_floor(settings)
    from django.core.handlers.wsgi import WSGIHandler  # noqa: PLC0415
    from django.db import connection  # noqa: PLC0415

    client = _Browser(WSGIHandler())
    client.sign_in()
    queries = [0]

    def count(execute, sql, params, many, context):
        queries[0] += 1
        return execute(sql, params, many, context)

    connection.execute_wrappers.append(count)
    out = sys.stdout
    sys.stdout = sys.stderr  # anything the app prints must not break the protocol
    for line in sys.stdin:
        message = json.loads(line)
        try:
            if message["op"] == "pages":
                answer = {"pages": _outage_pages() if message.get("desk") == "outage" else _pages()}
            else:
                queries[0] = 0
                pid_before = _backend_pid(connection)
                ticks_before = _ticks(pid_before)
                wall, cpu = time.perf_counter(), time.process_time()
                status, body = client.get(
                    message["path"], form=message.get("form"), htmx=message.get("htmx", False)
                )
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                pid_after = _backend_pid(connection)
                ticks = _ticks(pid_after) - ticks_before if pid_after == pid_before else 0
                if status != 200:
                    raise RuntimeError(f"{message['path']} answered HTTP {status}")
                answer = {
                    "py": cpu * 1000,
                    "wall": wall * 1000,
                    "pg_ticks": ticks,
                    "queries": queries[0],
                }
                if message.get("body"):
                    answer["body"] = body.decode()
        except Exception as error:  # noqa: BLE001 -- reported to the parent, which stops
            answer = {"error": f"{type(error).__name__}: {error}"}
        out.write(json.dumps(answer) + "\n")
        out.flush()


def _pages() -> dict[str, str]:
    from settlements.models import Settlement  # noqa: PLC0415

    settlement = Settlement.objects.get(case__tournament__operator_id="BIG-1")
    middle = max(1, settlement.payout_count // 50 // 2)
    review = f"/settlements/{settlement.pk}/"
    player = "player-0150000"
    if not settlement.payouts.filter(player=player).exists():
        # A smaller desk's settlement (--smallest): the player of its middle payout.
        player = settlement.payouts.order_by("position")[settlement.payout_count // 2].player
    return {
        "dashboard": "/",
        "dashboard, page 2": "/?page=2",
        "case page": f"/cases/{settlement.case_id}/",
        "settlement review": f"{review}?page={middle}",
        "review, explained": f"{review}?page={middle}&player={player}",
        "review, searched": f"{review}?q=player-00001",
        "history browser": "/history/",
        "history, events": "/history/?view=events",
        "players page": "/players/?q=player-0000001",
        "player statement": f"{review}statement/?player={player}",
    }


def _outage_pages() -> dict:
    """outage_desk.py's incidents: the pages incident_200.py times at each moment, and the
    confirmations of the bulk decision, prepare and submit."""
    from urllib.parse import urlencode  # noqa: PLC0415

    from settlements.models import Case, Incident, Job, Settlement  # noqa: PLC0415

    loaded = Incident.objects.get(title="Outage, every case loaded")
    prepared = Incident.objects.get(title="Outage, every settlement prepared")
    submitted = Incident.objects.get(title="Outage, every settlement submitted")
    load_job = Job.objects.filter(incident=loaded, kind=Job.Kind.UPLOAD).latest("pk").pk
    submit_job = Job.objects.get(incident=submitted, kind=Job.Kind.SUBMIT).pk
    waiting = Settlement.objects.filter(case__incident=submitted, status="awaiting_approval")
    ids = waiting.order_by("case_id", "pk").values_list("pk", flat=True)
    selection = ",".join(map(str, ids))
    a, b = f"/incidents/{loaded.pk}", f"/incidents/{submitted.pk}"
    # The first kind of case waiting for a decision, as the decision page groups them.
    waiting = Case.objects.filter(incident=loaded, status="awaiting_decision").order_by("pk")
    first = waiting.select_related("tournament").first()
    alike = waiting.filter(
        tournament__type=first.tournament.type,
        stage=first.stage,
        decision_options=first.decision_options,
    )
    group = "|".join([first.tournament.type, first.stage, *first.decision_options])
    answer = {
        "selection": ",".join(str(pk) for pk in alike.values_list("pk", flat=True)),
        "option": first.decision_options[0],
        "reason": "policy",
    }
    return {
        "job poll (htmx)": {"path": f"/jobs/{load_job}/", "htmx": True},
        "workbench": f"{a}/tournaments/",
        "workbench, last": f"{a}/tournaments/?cases_page=9999",
        "bulk decisions": f"{a}/decide/",
        "decide confirm": {"path": f"{a}/decide/?{urlencode({'group': group})}", "form": answer},
        "prepare confirm": f"{a}/prepare-ready/",
        "queue: decisions": "/queues/decisions/",
        "queue: to prepare": "/queues/to_prepare/",
        "queue: cases": "/queues/cases/",
        "load job's items": f"/jobs/{load_job}/",
        "load job, last": f"/jobs/{load_job}/?page=9999",
        "submit confirm": f"/incidents/{prepared.pk}/submit-prepared/",
        "approve many": f"{b}/approve/",
        "approve confirm": {"path": f"{b}/approve/", "form": {"selection": selection}},
        "queue: approvals": "/queues/approvals/",
        "workbench, submitted": f"{b}/tournaments/",
        "submit job's items": f"/jobs/{submit_job}/",
    }


def _mount_floor(settings) -> None:
    """The project's URLs plus the floor view, as this worker's URL configuration."""
    import types  # noqa: PLC0415

    from django.http import HttpResponse  # noqa: PLC0415
    from django.urls import path  # noqa: PLC0415

    try:
        from settlements.access import roles  # noqa: PLC0415
        from settlements.access.decorators import role_required  # noqa: PLC0415
    except ImportError:  # a baseline from before settlements/access/ (86415fe and older)
        from settlements import roles  # noqa: PLC0415
        from settlements.views.decorators import role_required  # noqa: PLC0415

    @role_required(*roles.DESK_ROLES)
    def floor(request):
        return HttpResponse("ok")

    project = __import__(settings.ROOT_URLCONF, fromlist=["urlpatterns"])
    module = types.ModuleType("page_ab_urls")
    module.urlpatterns = [path(FLOOR.strip("/") + "/", floor), *project.urlpatterns]
    for name in ("handler404", "handler500"):
        if hasattr(project, name):
            setattr(module, name, getattr(project, name))
    sys.modules[module.__name__] = module
    settings.ROOT_URLCONF = module.__name__


def _backend_pid(connection) -> int | None:
    raw = connection.connection
    return raw.info.backend_pid if raw is not None and not raw.closed else None


def _ticks(pid: int | None) -> int:
    """utime + stime of a process, in clock ticks (0 when unknown)."""
    if pid is None:
        return 0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


class _Browser:
    """Requests straight into a WSGI handler, keeping cookies like a browser."""

    def __init__(self, handler):
        self.handler = handler
        self.cookies: dict[str, str] = {}

    def request(
        self, method: str, path: str, body: bytes = b"", content_type: str = "", headers=None
    ):
        path, _, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "SCRIPT_NAME": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_COOKIE": "; ".join(f"{k}={v}" for k, v in self.cookies.items()),
            "wsgi.input": BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.url_scheme": "http",
            "wsgi.version": (1, 0),
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "CONTENT_LENGTH": str(len(body)),
            "CONTENT_TYPE": content_type,
            **(headers or {}),
        }
        answer = {}

        def start_response(status, headers, exc_info=None):
            answer["status"] = int(status.split()[0])
            answer["headers"] = headers

        response = self.handler(environ, start_response)
        try:
            data = b"".join(response)
        finally:
            if hasattr(response, "close"):
                response.close()
        for name, value in answer["headers"]:
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key.strip()] = rest.split(";", 1)[0]
        return answer["status"], data

    def get(self, path: str, *, form: dict | None = None, htmx: bool = False):
        """GET ``path``, or POST ``form`` to it with the CSRF token, as a browser would."""
        from urllib.parse import urlencode  # noqa: PLC0415

        headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
        if form is None:
            return self.request("GET", path, headers=headers)
        body = urlencode({**form, "csrfmiddlewaretoken": self.cookies["csrftoken"]}).encode()
        return self.request("POST", path, body, "application/x-www-form-urlencoded", headers)

    def sign_in(self) -> None:
        from urllib.parse import urlencode  # noqa: PLC0415

        self.get("/accounts/login/")
        form = urlencode(
            {
                "username": USERNAME,
                "password": PASSWORD,
                "csrfmiddlewaretoken": self.cookies["csrftoken"],
            }
        ).encode()
        status, _ = self.request(
            "POST", "/accounts/login/", form, "application/x-www-form-urlencoded"
        )
        if status != 302:
            raise RuntimeError(f"signing in as {USERNAME} failed (HTTP {status})")
        self._second_factor_proved()

    def _second_factor_proved(self) -> None:
        """Record the second factor as proved in the session, as entering the TOTP code
        would: a code is taken once, and both sides sign in as the same user within seconds
        (the sign-in is not measured)."""
        try:
            from settlements.access.second_factor import stamp_proof  # noqa: PLC0415
        except ImportError:  # a baseline from before the second factor
            return
        from django.contrib.sessions.backends.db import SessionStore  # noqa: PLC0415

        session = SessionStore(self.cookies["sessionid"])
        stamp_proof(session)
        session.save()


if __name__ == "__main__":
    main()
