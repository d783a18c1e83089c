"""Gunicorn settings for CrashDesk; every knob a deployment may turn is an environment variable.

Used by docker/entrypoint.sh: `gunicorn --config crashdesk/gunicorn.conf.py`.
"""

import logging
import os
import sys
from pathlib import Path

from prometheus_client import multiprocess

# Gunicorn executes this file before it imports the app, so the project root may not be on the
# path yet; the JSON formatter below lives in the project.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from crashdesk.logging import JsonFormatter  # noqa: E402


def _cores() -> int:
    # sched_getaffinity respects CPU pinning (taskset, cpusets); cpu_count() would not.
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


wsgi_app = "crashdesk.wsgi:application"
bind = [f"{os.environ.get('BIND_HOST', '0.0.0.0')}:{os.environ.get('PORT', '8000')}"]

# The usual 2 x cores + 1 processes, capped because each may hold a 300,000-entrant snapshot
# in memory while it is being settled.
workers = int(os.environ.get("WEB_CONCURRENCY", min(2 * _cores() + 1, 8)))
# Threaded workers, although requests are mostly CPU-bound: a sync worker is one request at a
# time, so a client that sends its body a byte a second holds the whole process, and three
# such clients stalled every worker (and /healthz) of a small instance. Here a slow client
# holds one thread; the others go on serving. The real defence is a proxy that buffers whole
# requests before passing them on (docker/nginx.conf); the threads keep the app answering when
# it is reached directly. Each thread holds its own database connection: workers x threads
# connections at most.
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", 4))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", 60))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", 30))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", 5))

# Recycle workers now and then so a slow leak cannot grow forever; the jitter keeps them from
# all restarting at the same moment.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", 1000))
max_requests_jitter = int(os.environ.get("GUNICORN_MAX_REQUESTS_JITTER", 100))

# The heartbeat file is touched constantly; on an overlay or network filesystem that can stall
# workers into timeouts, so keep it in memory when the platform offers a tmpfs.
if os.path.isdir("/dev/shm"):
    worker_tmp_dir = "/dev/shm"

# Only these addresses may tell us, through X-Forwarded-Proto, that the client used HTTPS.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")

# The runtime control socket defaults to a file in $HOME, which a container user may not have
# and which two instances on one machine would share; opt in by giving it a path.
control_socket_disable = "GUNICORN_CONTROL_SOCKET" not in os.environ
if not control_socket_disable:
    control_socket = os.environ["GUNICORN_CONTROL_SOCKET"]

# Request metrics of every worker, summed at each scrape (settlements/monitoring.py): each
# worker writes its counters to files in this folder; it is emptied at start, so figures of a
# previous run are not added in, and a dead worker's live gauges are dropped.
_metrics_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")


def on_starting(server):
    if _metrics_dir:
        Path(_metrics_dir).mkdir(parents=True, exist_ok=True)
        for stale in Path(_metrics_dir).glob("*.db"):
            stale.unlink()


def child_exit(server, worker):
    if _metrics_dir:
        multiprocess.mark_process_dead(worker.pid)


class AccessJsonFormatter(JsonFormatter):
    """One JSON object per request, with the fields one filters access logs on."""

    def format(self, record: logging.LogRecord) -> str:
        # Gunicorn hands its request "atoms" (a mapping) as the record's only argument.
        atoms = record.args
        status = str(atoms["s"])
        fields = {
            "msg": f"{atoms['m']} {atoms['U']} {status}",
            "args": None,
            "method": atoms["m"],
            "path": atoms["U"],
            "query": atoms["q"],
            "status": int(status) if status.isdigit() else status,
            "bytes": atoms["B"],
            "duration_ms": atoms["M"],
            "remote_addr": atoms["h"],
            "user_agent": atoms["a"],
            "request_id": atoms["{x-request-id}i"],
        }
        return super().format(logging.makeLogRecord({**vars(record), **fields}))


# Access log on stdout, everything else on stderr, both one JSON object per line like the app's
# own logs (crashdesk/logging.py), so a log shipper needs a single parser.
loglevel = os.environ.get("LOG_LEVEL", "info").lower()
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "json": {"()": JsonFormatter},
        "access_json": {"()": AccessJsonFormatter},
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "stream": "ext://sys.stderr",
        },
        "stdout_access": {
            "class": "logging.StreamHandler",
            "formatter": "access_json",
            "stream": "ext://sys.stdout",
        },
    },
    "root": {"level": "INFO", "handlers": ["stderr"]},
    "loggers": {
        "gunicorn.error": {"level": loglevel.upper(), "handlers": ["stderr"], "propagate": False},
        "gunicorn.access": {"level": "INFO", "handlers": ["stdout_access"], "propagate": False},
    },
}
