"""Page latency under load: gunicorn with its production config, a desk with 1,000 incidents
and one 300,000-entrant settlement, 50 concurrent clients per page.

    .venv/bin/python benchmarks/page_latency.py [--seconds 10] [--connections 50] [--rate 1]
        [--keep | --reuse] [--only PAGE ...] [--database NAME] [--verify-audit]

Seeds a scratch PostgreSQL database (crashdesk_bench_pages, dropped at the end unless --keep;
DATABASE_URL names the server), starts gunicorn on 127.0.0.1 with crashdesk/gunicorn.conf.py
and production settings, signs in (a session cookie, like a browser) as a user holding every
role, checks that each page answers 200 with its content, then for each page:

- alone: one client, one request after another (the page's own latency, nothing queued);
- paced: 50 users, each sending a request about once a second at random (people working);
- flat out: `wrk` with 50 connections sending as fast as they are answered, for --seconds
  (wrk is installed with apt-get when missing and running as root; otherwise a Python load
  generator with 50 threads does the same, bounded in time).

Prints p50, p95 and p99 for each, and the throughput. Seeding is fast: two small incidents
are built through the services (every table, history and event rows included), then copied
with INSERT ... SELECT, shifting ids and dates; the big settlement is loaded and prepared
through the services. The copies' events are numbered and chained again (settlements.audit_log)
as if written one after another. --keep leaves the seeded database; --reuse measures it again
without seeding. --verify-audit times `manage.py verify_audit` on the desk instead of the pages.
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    Client,
    Gunicorn,
    drop_scratch_database,
    make_user,
    smallest_servers,
    use_scratch_database,
)
from _snapshots import snapshot_text  # noqa: E402

DATABASE = "crashdesk_bench_pages"
INCIDENTS = 1000
OPEN_INCIDENTS = 50
STRIDE = 1_000_000  # id shift between copies; a template has far fewer rows than this
# What each page answers within at the 95th percentile, paced as people work (issue 20).
GOAL_P95_MS = 50

WRK_SCRIPT = """
done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format("RESULT %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(95), latency:percentile(99),
    errors.status + errors.connect + errors.read + errors.write + errors.timeout))
end
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10, help="load time per page")
    parser.add_argument("--connections", type=int, default=50, help="clients (and users)")
    parser.add_argument(
        "--rate", type=float, default=1.0, help="requests per second of each paced user"
    )
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument(
        "--smallest",
        action="store_true",
        help="a desk of 20 incidents, 200 entrants, 2 clients, 0.3 s per page alone and paced "
        "(10 requests/s each) and 1 s flat out: a check that the benchmark runs from an empty "
        "database (CI), not a measurement",
    )
    parser.add_argument(
        "--database", default=DATABASE, help="scratch database (one each on a shared server)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument(
        "--reuse", action="store_true", help="measure the database a --keep run left"
    )
    parser.add_argument(
        "--only", action="append", metavar="PAGE", help="measure only this page (repeatable)"
    )
    parser.add_argument(
        "--verify-audit",
        action="store_true",
        help="time manage.py verify_audit on the desk (three runs) instead of the pages",
    )
    args = parser.parse_args()
    if args.smallest:
        global INCIDENTS, OPEN_INCIDENTS
        INCIDENTS, OPEN_INCIDENTS = 20, 5
        args.entrants, args.seconds, args.connections, args.rate = 200, 1, 2, 10
        smallest_servers()

    url = use_scratch_database(args.database, fresh=not args.reuse)
    try:
        pages = _pages() if args.reuse else seed(args.entrants)
        if args.verify_audit:
            time_verify_audit()
        else:
            if args.only:
                pages = {name: path for name, path in pages.items() if name in args.only}
            measure(
                url,
                pages,
                args.seconds,
                args.connections,
                args.rate,
                brief=0.3 if args.smallest else None,
            )
    finally:
        if not (args.keep or args.reuse):
            drop_scratch_database(args.database)


# --- Seeding ---------------------------------------------------------------------------------


def seed(entrants: int) -> dict[str, str]:
    from django.db import connection

    from settlements.access import roles

    started = time.perf_counter()
    people = {
        "operator": make_user("bench-operator", roles.OPERATOR),
        "operator2": make_user("bench-operator2", roles.OPERATOR),
        "marketing": make_user("bench-marketing", roles.MARKETING_MANAGER),
        "manager": make_user("bench-manager", roles.TOURNAMENT_MANAGER),
        "manager2": make_user("bench-manager2", roles.TOURNAMENT_MANAGER),
    }
    make_user("bench-desk", *roles.DESK_ROLES)

    closed_copies = INCIDENTS - OPEN_INCIDENTS  # copies 1..949 and the template: 950
    _closed_incident(people, "A")
    _copy_rows(copies=range(1, closed_copies), after={}, hours=8)
    before = _max_ids()
    _open_incident(people, "B")
    _copy_rows(copies=range(1, OPEN_INCIDENTS - 1), after=before, hours=1)
    print(f"seeded {INCIDENTS - 1:,} incidents by copying in {time.perf_counter() - started:.1f} s")

    started = time.perf_counter()
    big_case, settlement = _big_settlement(people, entrants)
    print(
        f"big case #{big_case.pk}: {settlement.payout_count:,} payouts, "
        f"{settlement.line_count:,} lines, loaded and prepared in "
        f"{time.perf_counter() - started:.1f} s"
    )
    with connection.cursor() as cursor:
        # Sealing the copies reads every table they were copied into: with the statistics of
        # the empty tables the planner joins row by row.
        cursor.execute("ANALYZE")
    _chain_copied_events()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return _pages()


def _chain_copied_events() -> None:
    """Number the events 1, 2, 3, … in id order and chain their hashes, as if each copy had been
    written through the services. A copy sealed what its template sealed (the template's ids,
    times and history versions): it is given its own record's facts, read from its rows."""
    import hashlib
    import json

    from django.db import connection, transaction

    from settlements import audit_log
    from settlements.models import Event

    started = time.perf_counter()
    events = list(Event.objects.order_by("pk"))
    _seal_copies(events)
    rows, previous = [], audit_log.GENESIS
    for seq, event in enumerate(events, start=1):
        event.seq, event.prev_hash = seq, previous
        event.hash = previous = hashlib.sha256(audit_log.canonical(event)).hexdigest()
        rows.append((event.pk, seq, event.prev_hash, event.hash, json.dumps(event.subject_facts)))
    with transaction.atomic(), connection.cursor() as cursor:
        # The seeding superuser passes the write-once trigger for this one rewrite.
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(
            "CREATE TEMPORARY TABLE chain"
            " (id bigint, seq bigint, prev text, hash text, facts jsonb)"
        )
        with cursor.cursor.copy("COPY chain FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute(
            "UPDATE settlements_event AS e SET seq = c.seq, prev_hash = c.prev, hash = c.hash,"
            " subject_facts = c.facts FROM chain AS c WHERE e.id = c.id"
        )
        cursor.execute("DROP TABLE chain")
    print(f"sealed and chained {len(rows):,} events in {time.perf_counter() - started:.1f} s")


def _seal_copies(events) -> None:
    """Copy k of an event (id shifted by k x STRIDE) seals its own record's facts as they are
    now, and the history versions of the copied records (ids shifted the same way)."""
    from settlements import audit_log, seals
    from settlements.models import Event

    wanted: dict[str, set[int]] = {}
    for event in events:
        shift = event.pk // STRIDE * STRIDE
        versions = event.subject_facts.get("history", {})
        if shift and versions:
            event.subject_facts["history"] = {
                f"{label.split(':')[0]}:{int(label.split(':')[1]) + shift}": [version + shift, ""]
                for label, (version, _digest) in versions.items()
            }
        for label, (version, _digest) in event.subject_facts.get("history", {}).items():
            wanted.setdefault(label, set()).add(version)
    facts = audit_log.current_facts(Event.objects.all())
    history = seals.current_history(wanted)
    for event in events:
        if event.pk < STRIDE or not event.subject_facts:
            continue
        current = facts.of(event) or {}
        for key in event.subject_facts:
            if key == "history":
                event.subject_facts[key] = {
                    label: [version, history.get((label, version))]
                    for label, (version, _digest) in event.subject_facts[key].items()
                }
            else:
                event.subject_facts[key] = current.get(key)


def time_verify_audit(runs: int = 3) -> None:
    from django.core.management import call_command

    from settlements.models import Event

    timings, cpu = [], []
    for _ in range(runs):
        started, used = time.perf_counter(), time.process_time()
        call_command("verify_audit")
        timings.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
    print(
        f"verify_audit over {Event.objects.count():,} events: "
        + ", ".join(f"{t:.2f} s" for t in timings)
        + f" (median {sorted(timings)[len(timings) // 2]:.2f} s; CPU in this process "
        + ", ".join(f"{t:.2f} s" for t in cpu)
        + f"; load average {os.getloadavg()[0]:.1f})"
    )


def _pages() -> dict[str, str]:
    from settlements.models import Settlement

    _print_sizes()
    settlement = Settlement.objects.get(case__tournament__operator_id="BIG-1")
    middle = max(1, settlement.payout_count // 50 // 2)
    # A payout in the middle of the big settlement, whatever its size.
    player = settlement.payouts.get(position=settlement.payout_count // 2).player
    return {
        # A signed-in page with next to nothing on it (the empty form reporting a crash): what
        # this machine does at best under the same load, the floor under the other figures.
        "floor": "/incidents/new/",
        "dashboard": "/",
        "case page": f"/cases/{settlement.case_id}/",
        "settlement review": f"/settlements/{settlement.pk}/?page={middle}",
        "history browser": "/history/",
        # One id in every copied incident (about 4,000 cases) and in the big settlement; a
        # prefix that a hundred ids share; a statement in the big settlement.
        "players page": "/players/?q=player-0000001",
        "players page, prefix": "/players/?q=player-00001",
        "player statement": f"/settlements/{settlement.pk}/statement/?player={player}",
    }


def _closed_incident(people, tag: str) -> None:
    """Four crash cases of one incident, settled, one after a rejection; then closed."""
    from settlements.services import settlements as settlement_services
    from settlements.services.incidents import incident_close, incident_report

    incident = incident_report(
        actor=people["operator"], title=f"Outage {tag}", started_at=_now() - timedelta(days=2)
    )
    plans = [
        ("regular", "middle", None),
        ("satellite", "middle", "chip_equity"),
        ("freeroll", "early", "no_reschedule"),
        ("regular", "late", None),
    ]
    for number, (type_, stage, option) in enumerate(plans, start=1):
        case = _load(people, incident, f"{tag}{number}", type_, stage)
        if case.decision_options:
            _decide(people, case, option)
        settlement = settlement_services.settlement_prepare(case=case, actor=people["operator"])
        settlement = settlement_services.settlement_submit(
            settlement=settlement, actor=people["operator"]
        )
        if number == 4:
            settlement_services.settlement_reject(
                settlement=settlement, actor=people["manager"], reason="recount the chips"
            )
            settlement = settlement_services.settlement_prepare(
                case=case, actor=people["operator2"]
            )
            settlement = settlement_services.settlement_submit(
                settlement=settlement, actor=people["operator2"]
            )
        settlement_services.settlement_approve(
            settlement=settlement, actor=people["manager"], reason="checked"
        )
    incident_close(incident=incident, actor=people["operator"], reason="all paid")


def _open_incident(people, tag: str) -> None:
    """Cases at every step: awaiting approval, awaiting a decision, ready, prepared."""
    from settlements.services import settlements as settlement_services
    from settlements.services.incidents import incident_report

    incident = incident_report(
        actor=people["operator"], title=f"Outage {tag}", started_at=_now() - timedelta(hours=3)
    )
    case = _load(people, incident, f"{tag}1", "regular", "middle")
    settlement = settlement_services.settlement_prepare(case=case, actor=people["operator"])
    settlement_services.settlement_submit(settlement=settlement, actor=people["operator"])
    _load(people, incident, f"{tag}2", "satellite", "middle")
    _load(people, incident, f"{tag}3", "regular", "early")
    case = _load(people, incident, f"{tag}4", "freeroll", "middle")
    _decide(people, case, "chip_equity")
    settlement_services.settlement_prepare(case=case, actor=people["operator"])


def _big_settlement(people, entrants: int):
    from settlements.services import settlements as settlement_services
    from settlements.services.incidents import incident_report
    from settlements.services.snapshots import case_load_snapshot

    incident = incident_report(
        actor=people["operator"], title="Main event outage", started_at=_now()
    )
    text = snapshot_text(tournament_id="BIG-1", type="regular", stage="middle", entrants=entrants)
    case = case_load_snapshot(actor=people["operator"], snapshot=text, incident=incident)
    settlement = settlement_services.settlement_prepare(case=case, actor=people["operator"])
    settlement = settlement_services.settlement_submit(
        settlement=settlement, actor=people["operator"]
    )
    return case, settlement


def _load(people, incident, tournament_id: str, type_: str, stage: str):
    from settlements.services.snapshots import case_load_snapshot

    text = snapshot_text(tournament_id=tournament_id, type=type_, stage=stage, entrants=40)
    return case_load_snapshot(actor=people["operator"], snapshot=text, incident=incident)


def _decide(people, case, option: str) -> None:
    from settlements.services.decisions import decision_record

    decision_record(
        case=case, actor=people["marketing"], option=option, reason="as the policy suggests"
    )


def _now():
    from django.utils import timezone

    return timezone.now()


def _settlement_models():
    from django.apps import apps

    from settlements.models import (
        ApiToken,
        Rulebook,
        RulebookVersion,
        SignedInSession,
        Simulation,
        SimulationResult,
    )

    # API tokens are not copied: their hashes are unique and no page here lists them. Sessions
    # belong to the (uncopied) users, and so do the memberships the guards' proxies stand for.
    # Rulebooks are few and keyed by name: every copied case keeps the version it names.
    skipped = (ApiToken, SignedInSession, Rulebook, RulebookVersion, Simulation, SimulationResult)
    return [
        model
        for model in apps.get_app_config("settlements").get_models()
        if model not in skipped
        and getattr(model, "instance_type", None) not in skipped
        and not model._meta.proxy
    ]


def _key_column(model) -> str:
    """The column rows are copied after: the key's, or for a key of (parent, number) (the
    entrants, payouts and lines), the parent's, which copies shift like any key."""
    return model._meta.pk_fields[0].column


def _max_ids() -> dict[str, int]:
    from django.db import connection

    found = {}
    with connection.cursor() as cursor:
        for model in _settlement_models():
            pk = _key_column(model)
            cursor.execute(f"SELECT coalesce(max({pk}), 0) FROM {model._meta.db_table}")
            found[model._meta.db_table] = cursor.fetchone()[0]
    return found


def _copy_rows(*, copies: range, after: dict[str, int], hours: int) -> None:
    """Copy every row of the settlements tables whose key is above `after[table]`, once for
    each k in `copies`: keys and references to copied tables shift by k x STRIDE, dates move
    k x `hours` back, tournament ids get a suffix so they stay unique."""
    import pgtrigger
    from django.core.management.color import no_style
    from django.db import connection, models, transaction

    from settlements import player_ids
    from settlements.models import Event, Job, LedgerRelease, Tournament

    shifted = {model for model in _settlement_models() if not hasattr(model, "instance_type")}
    quote = connection.ops.quote_name
    # Copies of records already through the workflow are inserted approved, released, paid:
    # the guards that make a new record start at the first step would refuse them.
    guards = [
        f"{model._meta.label}:{trigger.name}"
        for model, trigger in pgtrigger.registered()
        if trigger.name in ("follows_workflow", "released_on_approval")
    ]
    with pgtrigger.ignore(*guards), transaction.atomic(), connection.cursor() as cursor:
        for model in _settlement_models():
            original = getattr(model, "instance_type", model)
            columns, values = [], []
            for field in model._meta.concrete_fields:
                column = quote(field.column)
                columns.append(column)
                is_key = field.primary_key or field.name == "id"
                if is_key or (field.is_relation and field.related_model in shifted):
                    values.append(f"{column} + k * {STRIDE}")
                elif original is LedgerRelease and field.name.endswith("_position"):
                    # Places in the ledger feed are unique; shifted like keys, gaps allowed.
                    values.append(f"{column} + k * {STRIDE}")
                elif (original is Tournament and field.name in ("operator_id", "key")) or (
                    model is Job and field.name == "target"
                ):
                    # Unique ids, and one active job per target (an ICM job still sampling).
                    # A tournament's key is made its id's again below, where Python can.
                    values.append(f"{column} || '-' || k")
                elif model is Event and field.name in ("subject_id", "seq"):
                    # NULL stays NULL; the chain is computed again once every copy is in.
                    values.append(f"{column} + k * {STRIDE}")
                elif isinstance(field, models.DateTimeField):
                    values.append(f"{column} - k * interval '{hours} hours'")
                else:
                    values.append(column)
            table, pk = quote(model._meta.db_table), quote(_key_column(model))
            # The benchmark users' role grants happened once; copies of them would be noise.
            only = " AND type <> 'user_access_changed'" if model is Event else ""
            cursor.execute(
                f"INSERT INTO {table} ({', '.join(columns)}) "
                f"SELECT {', '.join(values)} FROM {table}, "
                f"generate_series({copies.start}, {copies.stop - 1}) AS k "
                f"WHERE {pk} > %s{only}",
                [after.get(model._meta.db_table, 0)],
            )
        for statement in connection.ops.sequence_reset_sql(no_style(), _settlement_models()):
            cursor.execute(statement)
        # The copies are the tournaments keyed above STRIDE.
        copied = list(Tournament.objects.filter(pk__gt=STRIDE).only("operator_id"))
        for tournament in copied:
            tournament.key = player_ids.tournament_key(tournament.operator_id)
        Tournament.objects.bulk_update(copied, ["key"], batch_size=5000)


def _print_sizes() -> None:
    from settlements.models import Case, Event, Incident, Settlement, SettlementLine

    history = sum(
        model.objects.count() for model in _settlement_models() if hasattr(model, "instance_type")
    )
    print(
        f"desk: {Incident.objects.count():,} incidents "
        f"({Incident.objects.filter(closed_at__isnull=True).count()} open), "
        f"{Case.objects.count():,} cases, {Settlement.objects.count():,} settlements, "
        f"{SettlementLine.objects.count():,} ledger lines, {Event.objects.count():,} events, "
        f"{history:,} history versions"
    )


# --- Measuring -------------------------------------------------------------------------------


def measure(
    url: str, pages: dict[str, str], seconds: int, connections: int, rate: float, *, brief=None
) -> None:
    """``brief``: seconds alone and paced instead of ``seconds`` (flat out, wrk takes whole
    seconds only)."""
    wrk = _wrk()
    rows = []
    with Gunicorn(url) as server:
        workers = len(server.worker_pids())
        print(f"\ngunicorn on {server.base}: {workers} workers, production config")
        browser = Client(server.base).login("bench-desk")
        for name, path in pages.items():
            status, _, body = browser.get(path)
            if status != 200 or b"<!doctype html>" not in body[:200].lower():
                raise SystemExit(f"{name} ({path}) answered HTTP {status}, not the page")
            print(f"  {name:<18} {path:<34} {len(body) / 1024:6.1f} KiB", flush=True)
        for name, path in pages.items():
            alone = _sequential(browser, path, seconds=brief or min(5, seconds))
            paced = _paced_run(server.base, path, browser, brief or seconds, connections, rate)
            if wrk:
                loaded = _wrk_run(wrk, server.base, path, browser, seconds, connections)
            else:
                loaded = _threads_run(server.base, path, browser, seconds, connections)
            rows.append((name, alone, paced, loaded))
            print(f"  measured {name} (load average {os.getloadavg()[0]:.1f})", flush=True)
    tool = "wrk" if wrk else "Python threads"
    print(
        f"\nLatency in ms. alone: one request after another. paced: {connections} users, each "
        f"sending about {rate:g} request/s (random intervals). flat out: {connections} "
        f"connections sending as fast as answered ({tool}); {seconds} s each."
    )
    print(
        f"{'page':<18} {'alone p50':>9} {'p95':>5} {'p99':>5}  {'paced p50':>9} {'p95':>5} "
        f"{'p99':>5}  {'flat out p50':>12} {'p95':>5} {'p99':>5} {'req/s':>6} {'errors':>6}"
    )
    for name, alone, paced, loaded in rows:
        print(
            f"{name:<18} {alone['p50']:9.0f} {alone['p95']:5.0f} {alone['p99']:5.0f}  "
            f"{paced['p50']:9.0f} {paced['p95']:5.0f} {paced['p99']:5.0f}  "
            f"{loaded['p50']:12.0f} {loaded['p95']:5.0f} {loaded['p99']:5.0f} "
            f"{loaded['rate']:6.0f} {loaded['errors'] + paced['errors']:6d}"
        )
    for name, alone, paced, loaded in rows:
        verdicts = [
            f"{label} p95 {figures['p95']:.0f} ms "
            + ("within" if figures["p95"] <= GOAL_P95_MS else "OVER")
            for label, figures in (("alone", alone), ("paced", paced), ("flat out", loaded))
        ]
        print(f"{name}: " + "; ".join(verdicts) + f" the {GOAL_P95_MS} ms goal")


def _percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)

    def at(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]

    return {"p50": at(50), "p95": at(95), "p99": at(99)}


def _sequential(browser: Client, path: str, *, seconds: float) -> dict:
    """One request after another on fresh connections for `seconds` (at most 500)."""
    samples = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and len(samples) < 500:
        started = time.perf_counter()
        status, _, _ = browser.get(path)
        samples.append((time.perf_counter() - started) * 1000)
        if status != 200:
            raise SystemExit(f"{path}: HTTP {status} during the sequential run")
    return _percentiles(samples)


def _wrk() -> str | None:
    """The wrk binary; installed from Debian's packages when missing and running as root."""
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("wrk is missing; installing it with apt-get (Debian package wrk)")
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "wrk"],
            check=False,
            capture_output=True,
            timeout=300,
        )
        found = shutil.which("wrk")
    if not found:
        print(
            "wrk is not installed and could not be installed (apt-get install wrk, as root); "
            "using the Python load generator instead"
        )
    return found


def _wrk_run(wrk: str, base: str, path: str, browser: Client, seconds, connections) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(WRK_SCRIPT)
        script.flush()
        done = subprocess.run(
            [
                wrk,
                "-t",
                "2",
                "-c",
                str(connections),
                "-d",
                f"{seconds}s",
                "--timeout",
                "10s",
                "-s",
                script.name,
                "-H",
                f"Cookie: {browser.cookie_header()}",
                f"http://{base}{path}",
            ],
            capture_output=True,
            text=True,
            timeout=seconds + 60,
            check=True,
        )
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("RESULT "))
    requests, duration, p50, p95, p99, errors = map(int, line.split()[1:])
    return {
        "p50": p50 / 1000,
        "p95": p95 / 1000,
        "p99": p99 / 1000,
        "rate": requests / (duration / 1e6),
        "errors": errors,
    }


def _paced_run(base: str, path: str, browser: Client, seconds, users: int, rate: float) -> dict:
    """`users` threads, each sending a request at random intervals averaging 1 / `rate` s (a
    person clicking through pages), for `seconds`: latency with the server not saturated."""
    samples: list[float] = []
    errors = [0]
    lock = threading.Lock()
    started = time.monotonic()
    deadline = started + seconds

    def user(seed: int) -> None:
        own = Client(base)
        own.cookies = dict(browser.cookies)
        chance = random.Random(seed)
        due = started + chance.uniform(0, 1 / rate)
        while due < deadline:
            time.sleep(max(0.0, due - time.monotonic()))
            begun = time.perf_counter()
            try:
                status, _, _ = own.get(path)
            except OSError:
                status = 0
            elapsed = (time.perf_counter() - begun) * 1000
            with lock:
                samples.append(elapsed)
                errors[0] += status != 200
            due += chance.expovariate(rate)

    threads = [threading.Thread(target=user, args=(n,)) for n in range(users)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result = _percentiles(samples)
    result.update(rate=len(samples) / seconds, errors=errors[0])
    return result


def _threads_run(base: str, path: str, browser: Client, seconds, connections) -> dict:
    """`connections` threads, each one request after another, for `seconds`."""
    samples: list[float] = []
    errors = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def client() -> None:
        own = Client(base)
        own.cookies = dict(browser.cookies)
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                status, _, _ = own.get(path)
            except OSError:
                status = 0
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                samples.append(elapsed)
                errors[0] += status != 200

    threads = [threading.Thread(target=client) for _ in range(connections)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    result = _percentiles(samples)
    result.update(rate=len(samples) / (time.perf_counter() - started), errors=errors[0])
    return result


if __name__ == "__main__":
    main()
