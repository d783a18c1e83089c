"""What the database benchmarks share: a scratch PostgreSQL database, gunicorn started with
the production config, a small HTTP client that signs in like a browser, memory readings.

Import this module before anything from Django: ``use_scratch_database`` points Django at the
scratch database and sets it up. Nothing here touches a database other than the scratch one
(and the template below), and the servers it starts listen on 127.0.0.1 only.

A scratch database starts empty and is migrated, as a newcomer's would be. CI runs every
benchmark at ``--smallest``, one after the other, and migrating each from nothing would take
most of its time: with ``BENCH_TEMPLATE_DATABASE`` set (.ci/run sets it), the first benchmark
migrates one database named after it and a digest of the migrations and uv.lock, and every
scratch database after is ``CREATE DATABASE ... TEMPLATE`` of it. The digest keeps a template
from outliving the schema it holds; building a new one drops the older ones of that name.
"""

import gc
import hashlib
import http.client
import json
import logging
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_SERVER = "postgres://postgres@127.0.0.1:5432/crashdesk"
PASSWORD = "benchmark-passphrase-1"
# The TOTP secret (base32) of the benchmark users who must prove a second factor.
TOTP_SECRET = "KRSXG5DTMVRXEZLUKNSWG4TFOQ2DAMBR"
STARTUP_SECONDS = 60
# gunicorn's pause once every worker has booted, before anything is measured.
SETTLE_SECONDS = [1.0]

# The benchmark process and the servers it starts run with production settings: DEBUG off
# (Django then keeps no query log), plain HTTP on the loopback (no TLS proxy here), and no
# business-event log lines on the terminal.
PRODUCTION_ENV = {
    "DEBUG": "false",
    "SECURE_SSL_REDIRECT": "false",
    "ALLOWED_HOSTS": "127.0.0.1",
    "LOG_LEVEL": "WARNING",
}


def database_url(name: str) -> str:
    """The server of DATABASE_URL (default: the local PostgreSQL) with database `name`."""
    parts = urlsplit(os.environ.get("DATABASE_URL", DEFAULT_SERVER))
    if not parts.scheme.startswith("postgres"):
        raise SystemExit("The benchmarks run on PostgreSQL; point DATABASE_URL at a server.")
    return urlunsplit(parts._replace(path="/" + quote(name)))


def use_scratch_database(name: str, *, fresh: bool = True) -> str:
    """Create database `name` afresh (dropping a leftover one; `fresh` False keeps one, or
    creates it when missing), point this process's Django at it, set Django up and migrate (or
    copy the migrated template, see above). Returns the URL for children."""
    url = database_url(name)
    os.environ.update(PRODUCTION_ENV)
    os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crashdesk.settings")
    if fresh:
        _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    exists = not fresh and _admin("SELECT 1 FROM pg_database WHERE datname = %s", [name])
    template = None if exists else migrated_template()
    if not exists:
        _admin(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))

    import django

    django.setup()
    from django.core.management import call_command

    # Business events would print one JSON line per step; the figures are what matters here.
    logging.getLogger("crashdesk.events").setLevel(logging.WARNING)

    if not template:
        call_command("migrate", verbosity=0)
    return url


def migrated_template() -> str | None:
    """The migrated template database of BENCH_TEMPLATE_DATABASE (built when missing), or
    None when that is unset."""
    prefix = os.environ.get("BENCH_TEMPLATE_DATABASE")
    if not prefix:
        return None
    digest = hashlib.sha256()
    for path in [*sorted(ROOT.glob("*/migrations/*.py")), ROOT / "uv.lock"]:
        digest.update(path.read_bytes())
    name = f"{prefix}_{digest.hexdigest()[:12]}"
    # One process builds it; another asking meanwhile (bulk_ab's two sides) waits for it.
    with _admin_connection() as admin:
        admin.execute("SELECT pg_advisory_lock(hashtext(%s))", [prefix])
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchall():
            return name
        for (older,) in admin.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE %s",
            [prefix.replace("_", r"\_") + r"\_%"],
        ).fetchall():
            admin.execute(f'DROP DATABASE "{older}" WITH (FORCE)')
        # Built under another name and renamed once migrated: a failed build leaves no template.
        building = f"{name}_building"
        admin.execute(f'CREATE DATABASE "{building}"')
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--verbosity", "0"],
            cwd=ROOT,
            env={**os.environ, "DATABASE_URL": database_url(building)},
            check=True,
        )
        admin.execute(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
    return name


def drop_scratch_database(name: str) -> None:
    from django.db import connections

    connections.close_all()
    _admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _admin(sql: str, params=()) -> list[tuple]:
    with _admin_connection() as connection:
        cursor = connection.execute(sql, params)
        return cursor.fetchall() if cursor.description else []


def _admin_connection():
    import psycopg

    parts = urlsplit(database_url("postgres"))
    return psycopg.connect(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 5432,
        user=parts.username or None,
        password=parts.password or None,
        dbname="postgres",
        autocommit=True,
    )


_password_hash: list[str] = []


def make_user(username: str, *role_names: str):
    """A user holding `role_names`, with the benchmark password (hashed once, reused)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group

    if not _password_hash:
        _password_hash.append(make_password(PASSWORD))
    from settlements.access import second_factor

    user = get_user_model().objects.create(username=username, password=_password_hash[0])
    user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in role_names))
    if second_factor.second_factor_required(user):
        second_factor.set_totp_secret(user=user, secret=TOTP_SECRET)
    return user


# --- Time and memory -------------------------------------------------------------------------


class Stopwatch:
    """`with watch("label"):` times a step; the figures are kept in order and printed."""

    def __init__(self):
        self.figures: dict[str, float] = {}

    @contextmanager
    def __call__(self, label: str, *, quiet: bool = False):
        started = time.perf_counter()
        yield
        self.figures[label] = time.perf_counter() - started
        if not quiet:
            print(f"  {label:<44} {self.figures[label]:8.2f} s", flush=True)


def own_peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb(pid: int) -> float:
    """Current resident memory of a process (0 if it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    match = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(match.group(1)) / 1024 if match else 0.0


class RssSampler:
    """Samples the resident memory of some processes every few milliseconds in a thread;
    `peaks` and `starts` are per process, in MB."""

    def __init__(self, pids: list[int], interval: float = 0.01):
        self.pids, self.interval = pids, interval
        self.starts = {pid: rss_mb(pid) for pid in pids}
        self.peaks = dict(self.starts)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for pid in self.pids:
                self.peaks[pid] = max(self.peaks[pid], rss_mb(pid))
            self._stop.wait(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def largest_growth(self) -> tuple[float, float, float]:
        """(growth, rss before, peak) of the process whose memory grew most."""
        pid = max(self.pids, key=lambda p: self.peaks[p] - self.starts[p])
        return self.peaks[pid] - self.starts[pid], self.starts[pid], self.peaks[pid]


# --- gunicorn ----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def smallest_servers() -> None:
    """For --smallest: gunicorn with two workers when a benchmark names no number, not the
    config's 2 × cores + 1, each of which boots Django on its own, and no pause once they have
    (a check, not a measure)."""
    os.environ["WEB_CONCURRENCY"] = "2"
    SETTLE_SECONDS[0] = 0.0


def collect_static(tree: Path, folder: Path, env: dict[str, str]) -> Path:
    """Where the static files of the code in ``tree`` are collected (production serves the
    hashed names of collectstatic's manifest): ``folder``, or with BENCH_STATIC_ROOT set
    (.ci/run sets it to a new folder) a folder in it named by what collectstatic reads (the
    project's static files, its settings, uv.lock for the apps'), collected by the first
    benchmark and read by every one after, whichever tree it serves."""
    shared = os.environ.get("BENCH_STATIC_ROOT")
    if shared:
        digest = hashlib.sha256()
        for path in sorted((tree / "static").rglob("*")):
            if path.is_file():
                digest.update(str(path.relative_to(tree)).encode() + b"\0" + path.read_bytes())
        for path in (tree / "crashdesk" / "settings.py", tree / "uv.lock"):
            digest.update(path.read_bytes())
        folder = Path(shared) / digest.hexdigest()[:12]
        if folder.exists():
            return folder
    # Collected beside the folder and renamed into place whole: a benchmark running at the same
    # time never reads half a collection, and the second to finish keeps the first's.
    collecting = folder.with_name(f"{folder.name}.{os.getpid()}")
    done = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=tree,
        env={**env, **PRODUCTION_ENV, "STATIC_ROOT": str(collecting)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode:
        raise SystemExit(f"collectstatic in {tree} failed:\n{done.stderr[-3000:]}")
    try:
        collecting.rename(folder)
    except OSError:  # another collected it first
        shutil.rmtree(collecting)
    return folder


class Gunicorn:
    """gunicorn with crashdesk/gunicorn.conf.py and production settings on a loopback port.

    Static files are collected first (collect_static). `workers` None keeps the config's
    default.
    """

    def __init__(self, database: str, *, workers: int | None = None, tree: Path = ROOT):
        """``tree``: the code to serve (another revision's, exported)."""
        self.database, self.workers, self.tree = database, workers, tree
        self.port = free_port()
        self.base = f"127.0.0.1:{self.port}"
        self._folder = tempfile.TemporaryDirectory(prefix="crashdesk-bench-")
        self.process: subprocess.Popen | None = None

    def env(self) -> dict[str, str]:
        env = {
            **os.environ,
            **PRODUCTION_ENV,
            "DATABASE_URL": self.database,
            "BIND_HOST": "127.0.0.1",
            "PORT": str(self.port),
        }
        if self.workers is not None:
            env["WEB_CONCURRENCY"] = str(self.workers)
        return env

    def __enter__(self):
        env = self.env()
        static = collect_static(self.tree, Path(self._folder.name) / "static", env)
        env["STATIC_ROOT"] = str(static)
        self._log = open(Path(self._folder.name) / "gunicorn.log", "wb")  # noqa: SIM115
        gunicorn = Path(sys.executable).parent / "gunicorn"
        self.process = subprocess.Popen(
            [str(gunicorn), "--config", "crashdesk/gunicorn.conf.py"],
            cwd=self.tree,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if self.process.poll() is not None:
                raise SystemExit("gunicorn exited:\n" + self.log())
            try:
                if Client(self.base).get("/healthz")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("gunicorn never answered:\n" + self.log())
            time.sleep(0.2)
        # Wait until every worker has booted, so the first measurements pay no start-up.
        expected = self.workers or int(self._config_workers())
        while len(self.worker_pids()) < expected and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(SETTLE_SECONDS[0])
        return self

    def _config_workers(self) -> int:
        return int(os.environ.get("WEB_CONCURRENCY", min(2 * len(os.sched_getaffinity(0)) + 1, 8)))

    def worker_pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            return [int(pid) for pid in children.read_text().split()]
        except OSError:
            return []

    def log(self) -> str:
        self._log.flush()
        return (Path(self._folder.name) / "gunicorn.log").read_text(errors="replace")[-4000:]

    def __exit__(self, *exc):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()
        self._folder.cleanup()


# --- The background worker ---------------------------------------------------------------------


class Worker:
    """``manage.py run_worker`` with production settings, as its own process (as compose.yaml
    runs it): started, waited for until it polls the task table, stopped with SIGTERM."""

    def __init__(self, database: str, *, interval: float | None = None):
        self.database, self.interval = database, interval
        self._log = tempfile.NamedTemporaryFile(prefix="crashdesk-worker-", suffix=".log")  # noqa: SIM115
        self.process: subprocess.Popen | None = None

    def __enter__(self):
        env = {
            **os.environ,
            **PRODUCTION_ENV,
            "DATABASE_URL": self.database,
            # The worker says "Starting worker" at INFO once it is ready to take tasks.
            "LOG_LEVEL": "INFO",
        }
        interval = [] if self.interval is None else ["--interval", str(self.interval)]
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "run_worker", "--no-startup-delay", *interval],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while b"Starting worker" not in Path(self._log.name).read_bytes():
            if self.process.poll() is not None:
                raise SystemExit("the worker exited:\n" + self.log())
            if time.monotonic() > deadline:
                raise SystemExit("the worker never started:\n" + self.log())
            time.sleep(0.1)
        return self

    def log(self) -> str:
        return Path(self._log.name).read_text(errors="replace")[-4000:]

    def __exit__(self, *exc):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()


# --- Machine time ------------------------------------------------------------------------------

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a live process has used so far, all its threads included (0 if
    it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICKS


class MachineTime:
    """CPU seconds the system under test spends between `start()` and `stop()`: the processes of
    each group (gunicorn's master and workers, the job worker; a callable gives the group's
    current pids) and the PostgreSQL backends serving the scratch database. They are sampled
    every few milliseconds, so a process that comes and goes (a recycled gunicorn worker, a
    backend of a closed connection) is counted up to its last sample. PostgreSQL's shared
    processes (WAL writer, checkpointer) serve every database on the server, other people's
    too, and are left out."""

    def __init__(self, database: str, groups: dict, interval: float = 0.05):
        import psycopg

        parts = urlsplit(database_url(database))
        self._connection = psycopg.connect(
            host=parts.hostname or "127.0.0.1",
            port=parts.port or 5432,
            user=parts.username or None,
            password=parts.password or None,
            dbname=database,
            autocommit=True,
        )
        self.database, self.interval = database, interval
        self.groups = {**groups, "PostgreSQL": self._backend_pids}
        self._own = self._connection.info.backend_pid
        # group -> pid -> [CPU at start (0 for a process born since), latest CPU]
        self._seen: dict[str, dict[int, list[float]]] = {name: {} for name in self.groups}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self.figures: dict[str, float] = {}

    def _backend_pids(self) -> list[int]:
        rows = self._connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> %s",
            (self.database, self._own),
        ).fetchall()
        return [pid for (pid,) in rows]

    def _read(self, *, born_since: bool) -> None:
        with self._lock:
            for name, pids in self.groups.items():
                seen = self._seen[name]
                for pid in pids():
                    used = cpu_seconds(pid)
                    if used == 0.0:
                        continue
                    entry = seen.setdefault(pid, [0.0 if born_since else used, used])
                    entry[1] = max(entry[1], used)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._read(born_since=True)
            except Exception:
                # The run failed and its database is going away; the figures are void anyway.
                return

    def start(self) -> "MachineTime":
        self._read(born_since=False)
        self.started = time.perf_counter()
        self._thread.start()
        return self

    def stop(self) -> dict[str, float]:
        self.wall = time.perf_counter() - self.started
        self._stop.set()
        self._thread.join()
        self._read(born_since=True)
        self.figures = {
            name: sum(last - first for first, last in seen.values())
            for name, seen in self._seen.items()
        }
        return self.figures

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self._connection.close()

    def so_far(self) -> dict[str, float]:
        """CPU seconds by group from `start()` to now (for the steps of a run)."""
        self._read(born_since=True)
        with self._lock:
            return {
                name: sum(last - first for first, last in seen.values())
                for name, seen in self._seen.items()
            }

    @property
    def total(self) -> float:
        return sum(self.figures.values())

    def line(self) -> str:
        parts = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in self.figures.items())
        return f"{self.total:.1f} s of CPU ({parts})"

    def query(self, sql: str, params=()):
        """A read on the sampler's own connection, which is left out of the figures."""
        with self._lock:
            return self._connection.execute(sql, params).fetchall()


# --- HTTP --------------------------------------------------------------------------------------


class Client:
    """A minimal browser over http.client: keeps cookies (including the Secure ones that
    production sets, which urllib would not send over plain HTTP) and answers CSRF."""

    def __init__(self, base: str):
        self.host, _, port = base.partition(":")
        self.port = int(port)
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: bytes | None = None, headers=None):
        """(status, headers, body) of one request on a fresh connection."""
        connection = http.client.HTTPConnection(self.host, self.port, timeout=120)
        try:
            response = self.send(connection, method, path, body, headers)
            return response.status, response.headers, response.read()
        finally:
            connection.close()

    def send(self, connection, method: str, path: str, body=None, headers=None):
        """Send a request and return the response unread (for streaming)."""
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        for header in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        return response

    def get(self, path: str):
        return self.request("GET", path)

    def post_form(self, path: str, fields: dict[str, str]):
        if "csrftoken" not in self.cookies:
            self.get("/accounts/login/")
        data = urlencode({**fields, "csrfmiddlewaretoken": self.cookies["csrftoken"]}).encode()
        return self.request(
            "POST", path, data, {"Content-Type": "application/x-www-form-urlencoded"}
        )

    def post_files(self, path: str, fields: dict[str, str], files: list[tuple[str, str, bytes]]):
        """A multipart/form-data POST, as a browser sends a form with file inputs: `files` as
        (field name, file name, content)."""
        if "csrftoken" not in self.cookies:
            self.get("/accounts/login/")
        boundary = f"----crashdesk{secrets.token_hex(12)}"
        parts = []
        for name, value in {**fields, "csrfmiddlewaretoken": self.cookies["csrftoken"]}.items():
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                f"{value}\r\n".encode()
            )
        for name, filename, content in files:
            parts.append(
                f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'.encode()
                + content
                + b"\r\n"
            )
        parts.append(f"--{boundary}--\r\n".encode())
        return self.request(
            "POST",
            path,
            b"".join(parts),
            {"Content-Type": f"multipart/form-data; boundary={boundary}"},
        )

    def login(self, username: str, password: str = PASSWORD) -> "Client":
        status, headers, _ = self.post_form(
            "/accounts/login/", {"username": username, "password": password}
        )
        if status != 302 or "sessionid" not in self.cookies:
            raise SystemExit(f"signing in as {username} failed (HTTP {status})")
        self._prove_second_factor(username)
        return self

    def _prove_second_factor(self, username: str) -> None:
        """Enter the TOTP code when the desk asks for one (make_user gave the user a factor)."""
        from django.urls import reverse

        from settlements.access import second_factor

        status, headers, _ = self.get("/")
        page = headers.get("Location", "")
        if status != 302 or not page.startswith(reverse("mfa_reauthenticate")):
            return
        for _attempt in range(2):
            status, _, _ = self.post_form(page, {"code": second_factor.totp_code(TOTP_SECRET)})
            if status == 302:
                return
            # A code is taken once: a second sign-in within its 30 s waits for the next one.
            time.sleep(30 - time.time() % 30 + 1)
        raise SystemExit(f"the second factor of {username} was refused (HTTP {status})")

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())


def copy_floor(
    body: bytes, settlement_id: int, case, *, indexed: bool = True
) -> dict[str, tuple[float, float]]:
    """(wall, CPU seconds) of the floor's parts and their sum under "floor": json.load of the
    snapshot, then each table's rows COPYed into a plain table (same column types; no index,
    key or constraint) in its own committed transaction, like the service's writes. CPU is
    this process's and its PostgreSQL backend's. Also, with `indexed`, under "indexed <name>"
    and not in the floor, the same rows COPYed into a copy of the real table with its keys,
    indexes and checks (not its triggers): what the database itself must do for these rows."""
    from django.db import connection, transaction

    from settlements.models import CasePlayer, SettlementLine, SettlementPayout, Snapshot
    from settlements.seals import ENTRANT_FIELDS
    from settlements.services.settlements import SETTLEMENT_PAYOUT_FIELDS

    line_fields = ("settlement", "line_no", "player", "kind", "unit", "amount", "source")

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]

    def clock() -> tuple[float, float]:
        return time.perf_counter(), time.process_time() + cpu_seconds(backend)

    # What the step before left for the cycle collector (a prepare holds it off) would
    # otherwise be collected during json.loads, up to twice its time: not the floor's work.
    gc.collect()
    started = clock()
    json.loads(body)
    ended = clock()
    figures = {"json.load": (ended[0] - started[0], ended[1] - started[1])}
    plan = {
        "snapshot": (
            Snapshot,
            ("text", "sha256", "size_bytes", "received_by", "received_at"),
            "id",
            case.snapshot_id,
        ),
        "entrants": (CasePlayer, ("case", *ENTRANT_FIELDS), "case_id", case.pk),
        "payouts": (SettlementPayout, SETTLEMENT_PAYOUT_FIELDS, "settlement_id", settlement_id),
        "lines": (SettlementLine, (*line_fields, "reversal"), "settlement_id", settlement_id),
    }
    quote = connection.ops.quote_name
    for name, (model, fields, key, value) in plan.items():
        columns = ", ".join(quote(model._meta.get_field(f).column) for f in fields)
        table = quote(model._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {columns} FROM {table} WHERE {key} = %s", [value])
            rows = cursor.fetchall()
        shapes = {name: f"AS SELECT {columns} FROM {table} WITH NO DATA"}
        if indexed and name != "snapshot":
            shapes[f"indexed {name}"] = f"(LIKE {table} INCLUDING ALL)"
        for label, shape in shapes.items():
            scratch = quote("bench_copy_" + label.replace(" ", "_"))
            with connection.cursor() as cursor:
                cursor.execute(f"DROP TABLE IF EXISTS {scratch}")
                cursor.execute(f"CREATE TABLE {scratch} {shape}")
                _compress_like(cursor, scratch, model._meta.db_table)
            started = clock()
            with (
                transaction.atomic(),
                connection.cursor() as cursor,
                cursor.cursor.copy(f"COPY {scratch} ({columns}) FROM STDIN") as copy,
            ):
                for row in rows:
                    copy.write_row(row)
            ended = clock()
            figures[label] = (ended[0] - started[0], ended[1] - started[1])
            with connection.cursor() as cursor:
                cursor.execute(f"DROP TABLE {scratch}")
            print(
                f"  COPY of {len(rows):>9,} rows, {label:<16} {figures[label][0]:8.2f} s, "
                f"{figures[label][1]:.2f} CPU s"
            )
    parts = ("json.load", *plan)
    figures["floor"] = tuple(sum(figures[part][i] for part in parts) for i in (0, 1))
    print(
        f"  floor (json.load {figures['json.load'][0]:.2f} s + plain COPYs): "
        f"{figures['floor'][0]:.2f} s, {figures['floor'][1]:.2f} CPU s"
    )
    return figures


def _compress_like(cursor, scratch: str, table: str) -> None:
    """Give the floor's plain table the compression of each column of the real one (the
    snapshot's text is LZ4, migration 0038), which CREATE TABLE AS does not copy: the floor
    then compresses what the real table compresses, the same way."""
    cursor.execute(
        "SELECT attname, attcompression FROM pg_attribute"
        " WHERE attrelid = %s::regclass AND attcompression <> ''",
        [table],
    )
    for column, method in cursor.fetchall():
        compression = "lz4" if method == "l" else "pglz"
        cursor.execute(
            f'ALTER TABLE {scratch} ALTER COLUMN "{column}" SET COMPRESSION {compression}'
        )
