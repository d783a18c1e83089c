"""A 300,000-entrant prepare from the browser: how soon the page answers, how long the worker
takes, against the same prepare in-process.

    .venv/bin/python benchmarks/prepare_background.py [--entrants 300000] [--stage middle]
        [--runs 3] [--keep] [--smallest]

On a scratch PostgreSQL database (crashdesk_bench_prepare_bg, dropped at the end unless --keep),
with gunicorn (crashdesk/gunicorn.conf.py, production settings) and one job worker
(`manage.py run_worker`, production settings, its own process) on 127.0.0.1. Each run loads two
copies of the same regular tournament's snapshot (two tournament ids) through the services,
then, in turn:

- in-process: `settlement_prepare` on the first, timed in this process;
- from the browser: the operator presses "Prepare the settlement" on the second case's page
  (POST /cases/<id>/prepare/); the answer (a redirect to the job's page) is timed, then the
  job's page is opened and polled each second as the browser does until the worker is done.
  "In the background" runs from the press to the job's end as the database records it.

Prints each run and the medians: the answer's time (goal: under 1 s), the background time and
its ratio to the in-process time (goal: within 20 %), with the wait for a worker, and the same
ratio in CPU seconds (gunicorn, the worker and the scratch database's backends against this
process and its backend), which a machine busy with other work disturbs far less.

``--smallest`` (CI): one run of 200 entrants, with PREPARE_INLINE_MAX_ENTRANTS lowered below
that so the page still hands the prepare to the worker.
"""

import argparse
import os
import re
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    Client,
    Gunicorn,
    MachineTime,
    Worker,
    cpu_seconds,
    drop_scratch_database,
    make_user,
    smallest_servers,
    use_scratch_database,
)
from _snapshots import snapshot_text  # noqa: E402

DATABASE = "crashdesk_bench_prepare_bg"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--stage", choices=("pre", "early", "middle", "late"), default="middle")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--smallest", action="store_true", help="one run of 200, for CI")
    args = parser.parse_args()
    if args.smallest:
        args.entrants, args.runs = 200, 1
        os.environ["PREPARE_INLINE_MAX_ENTRANTS"] = "100"
        smallest_servers()

    url = use_scratch_database(DATABASE)
    try:
        run(url, args.entrants, args.stage, args.runs)
    finally:
        if not args.keep:
            drop_scratch_database(DATABASE)


def run(url: str, entrants: int, stage: str, runs: int) -> None:
    from django.conf import settings

    from settlements.access import roles
    from settlements.services.snapshots import case_load_snapshot

    operator = make_user("bench-operator", roles.OPERATOR)
    template = snapshot_text(
        tournament_id="BENCH-ID", type="regular", stage=stage, entrants=entrants
    )
    print(
        f"regular {stage}, {entrants:,} entrants ({len(template) / 1e6:.1f} MB); cases over "
        f"{settings.PREPARE_INLINE_MAX_ENTRANTS:,} entrants are prepared in the background"
    )
    results = []
    with Gunicorn(url) as server, Worker(url) as worker:
        browser = Client(server.base).login(operator.username)
        print(f"gunicorn on {server.base}, one job worker\n")
        groups = {
            "gunicorn": lambda: [server.process.pid, *server.worker_pids()],
            "worker": lambda: [worker.process.pid],
        }
        for attempt in range(1, runs + 1):
            cases = [
                case_load_snapshot(
                    actor=operator,
                    snapshot=template.replace("BENCH-ID", f"BENCH-{attempt}-{copy}", 1).encode(),
                )
                for copy in ("A", "B")
            ]
            print(f"run {attempt} of {runs} (load average {os.getloadavg()[0]:.1f})")
            figures = {**in_process(cases[0], operator), **background(browser, cases[1], groups)}
            figures["ratio"] = figures["background"] / figures["in_process"]
            figures["cpu_ratio"] = figures["background_cpu"] / figures["in_process_cpu"]
            results.append(figures)
            print(
                f"  in-process prepare                  {figures['in_process']:6.2f} s, "
                f"{figures['in_process_cpu']:5.2f} s CPU (this process and its backend)\n"
                f"  the page answered in                {figures['answer']:6.2f} s\n"
                f"  in the background, press to done    {figures['background']:6.2f} s, "
                f"{figures['background_cpu']:5.2f} s CPU (gunicorn, worker, backends): "
                f"{figures['waited']:.2f} s waiting for a worker, {figures['ran']:.2f} s running\n"
                f"  background / in-process             {figures['ratio']:6.2f}x wall, "
                f"{figures['cpu_ratio']:.2f}x CPU",
                flush=True,
            )
    median = {key: statistics.median(r[key] for r in results) for key in results[0]}
    print(
        f"\nmedians of {runs}: answer {median['answer']:.2f} s (goal < 1 s); in the background "
        f"{median['background']:.2f} s against {median['in_process']:.2f} s in-process: "
        f"{median['ratio']:.2f}x wall, {median['cpu_ratio']:.2f}x CPU (goal <= 1.20x); "
        f"{median['waited']:.2f} s waiting for a worker"
    )


def in_process(case, operator) -> dict[str, float]:
    from django.db import connection

    from settlements.services.settlements import settlement_prepare

    connection.ensure_connection()
    backend = connection.connection.info.backend_pid
    cpu, backend_cpu = time.process_time(), cpu_seconds(backend)
    started = time.perf_counter()
    settlement_prepare(case=case, actor=operator)
    return {
        "in_process": time.perf_counter() - started,
        "in_process_cpu": time.process_time() - cpu + cpu_seconds(backend) - backend_cpu,
    }


def background(browser: Client, case, groups) -> dict[str, float]:
    meter = MachineTime(DATABASE, groups)
    meter.start()
    pressed = time.time()
    started = time.perf_counter()
    status, headers, body = browser.post_form(f"/cases/{case.pk}/prepare/", {"note": ""})
    answer = time.perf_counter() - started
    if status != 302 or not re.search(r"/jobs/\d+/$", headers.get("Location", "")):
        raise SystemExit(f"the prepare did not start a job: HTTP {status}\n{body[:800]!r}")
    job_id = int(headers["Location"].rstrip("/").rsplit("/", 1)[1])
    browser.get(f"/jobs/{job_id}/")
    stop = threading.Event()

    def poll():
        watcher = Client(f"{browser.host}:{browser.port}")
        watcher.cookies = dict(browser.cookies)
        while not stop.wait(1.0):
            watcher.request(
                "GET", f"/jobs/{job_id}/", None, {"HX-Request": "true", "HX-Target": "job-progress"}
            )

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        # On the meter's own connection, left out of the figures.
        while True:
            ((state, created, began, finished, done),) = meter.query(
                "SELECT status, extract(epoch FROM created_at), extract(epoch FROM started_at), "
                "extract(epoch FROM finished_at), (SELECT count(*) FROM settlements_jobitem "
                "WHERE job_id = j.id AND status = 'done') FROM settlements_job j WHERE id = %s",
                (job_id,),
            )
            if state in ("done", "failed"):
                break
            time.sleep(0.02)
        meter.stop()
    finally:
        stop.set()
        poller.join()
        meter.close()
    if state != "done" or done != 1:
        raise SystemExit(f"job #{job_id} ended {state}")
    return {
        "answer": answer,
        "background": float(finished) - pressed,
        "background_cpu": meter.total,
        "waited": float(began - created),
        "ran": float(finished - began),
    }


if __name__ == "__main__":
    main()
