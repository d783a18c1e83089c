"""Slow clients cannot take the service down: /healthz answers within a second while three
clients send a sign-in body one byte a second.

Started for real on loopback ports with production settings, as tests/test_gunicorn.py
does: gunicorn with crashdesk/gunicorn.conf.py, and nginx with docker/nginx.conf when nginx
is installed. Every loop is bounded in count and time, and every client and server is
stopped at the end.
"""

import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

import pytest

from tests.test_gunicorn import ROOT, STARTUP_SECONDS, _free_port, production_env  # noqa: F401

pytestmark = pytest.mark.slow  # gunicorn (and nginx) start for real and clients trickle for seconds

SLOW_CLIENTS = 3
BODY_BYTES = 64  # the declared length; a slow client never sends all of it
TRICKLE_SECONDS = 10  # the longest a slow client lives
SETTLE_SECONDS = 1.5  # the slow clients are inside the server before the first probe
PROBES = 3
ANSWER_WITHIN = 1.0


def _probe(port: int, timeout: float) -> tuple[int | None, float]:
    """(status or None when it did not answer in time, seconds taken) of GET /healthz."""
    started = time.monotonic()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=timeout) as got:
            status = got.status
    except urllib.error.HTTPError as error:
        status = error.code
    except OSError:  # refused, reset or timed out
        status = None
    return status, time.monotonic() - started


def _wait_until_serving(port: int, process: subprocess.Popen, logs) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while _probe(port, timeout=2)[0] != 200:
        assert process.poll() is None, "the server exited early\n" + logs()
        assert time.monotonic() < deadline, "the server never answered\n" + logs()
        time.sleep(0.25)


def _stop(process: subprocess.Popen, sig=signal.SIGTERM) -> None:
    if process.poll() is None:
        process.send_signal(sig)
    try:
        process.wait(timeout=40)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def _gunicorn(env: dict[str, str], tmp_path: Path, **settings: str) -> Iterator[int]:
    port = _free_port()
    log_path = tmp_path / f"gunicorn-{port}.log"
    with log_path.open("wb") as log:
        # The server the entrypoint ends with; its checks are tests/test_gunicorn.py's business.
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--config", "crashdesk/gunicorn.conf.py"],
            cwd=ROOT,
            env={**env, "BIND_HOST": "127.0.0.1", "PORT": str(port), **settings},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_serving(port, server, log_path.read_text)
        yield port
    finally:
        _stop(server)


@contextmanager
def _nginx(tmp_path: Path, upstream: int) -> Iterator[int]:
    binary = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if binary is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-light)")
    port = _free_port()
    home = tmp_path / "nginx"
    home.mkdir()
    config = (ROOT / "docker" / "nginx.conf").read_text()
    for shipped, local in (
        ("server app:8000;", f"server 127.0.0.1:{upstream};"),
        ("listen 8080;", f"listen 127.0.0.1:{port};"),
        ("/tmp/nginx/", f"{home}/"),
    ):
        assert shipped in config, f"docker/nginx.conf no longer has {shipped!r}"
        config = config.replace(shipped, local)
    (home / "nginx.conf").write_text(config)
    log_path = home / "nginx.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [binary, "-p", str(home), "-c", str(home / "nginx.conf"), "-e", str(log_path)]
            + ["-g", f"pid {home / 'nginx.pid'}; daemon off;"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_serving(port, server, log_path.read_text)
        yield port
    finally:
        _stop(server, signal.SIGQUIT)  # nginx's graceful stop


@contextmanager
def _slow_sign_ins(port: int) -> Iterator[None]:
    """SLOW_CLIENTS connections posting a sign-in form, one byte of body a second."""
    head = (
        "POST /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {BODY_BYTES}\r\n\r\n"
    ).encode()
    stop = threading.Event()
    with ExitStack() as sockets:
        clients = [
            sockets.enter_context(socket.create_connection(("127.0.0.1", port), timeout=5))
            for _ in range(SLOW_CLIENTS)
        ]
        for client in clients:
            client.sendall(head + b"u")

        def trickle():
            for _ in range(min(TRICKLE_SECONDS, BODY_BYTES - 1)):
                if stop.wait(1):
                    return
                for client in clients:
                    with suppress(OSError):  # the server gave up on it: fine
                        client.send(b"s")

        trickler = threading.Thread(target=trickle, daemon=True)
        trickler.start()
        try:
            time.sleep(SETTLE_SECONDS)
            yield
        finally:
            stop.set()
            trickler.join(timeout=5)


def _probes_while_slow_clients_wait(port: int) -> list[tuple[int | None, float]]:
    probes = []
    for _ in range(PROBES):
        probes.append(_probe(port, timeout=3))
        time.sleep(0.5)
    return probes


def _all_answered_in_time(probes) -> bool:
    return all(status == 200 and took < ANSWER_WITHIN for status, took in probes)


# The server must see the test database; this test's own transaction stays empty.
@pytest.mark.django_db
def test_gunicorn_alone_keeps_answering_while_slow_clients_send(production_env, tmp_path):  # noqa: F811
    # One worker process, as on the smallest instance: with the sync workers it had, one slow
    # client stalled it.
    with (
        _gunicorn(production_env, tmp_path, WEB_CONCURRENCY="1") as port,
        _slow_sign_ins(port),
    ):
        probes = _probes_while_slow_clients_wait(port)
    assert _all_answered_in_time(probes), probes


@pytest.mark.django_db
def test_nginx_buffers_slow_clients_so_gunicorn_never_waits_for_them(production_env, tmp_path):  # noqa: F811
    # A single thread in a single worker: only nginx's buffering can keep /healthz answering.
    single = {"WEB_CONCURRENCY": "1", "GUNICORN_THREADS": "1"}
    with (
        _gunicorn(production_env, tmp_path, **single) as upstream,
        _nginx(tmp_path, upstream) as port,
        _slow_sign_ins(port),
    ):
        probes = _probes_while_slow_clients_wait(port)
    assert _all_answered_in_time(probes), probes


@pytest.mark.django_db
def test_slow_clients_do_starve_a_server_without_room_for_them(production_env, tmp_path):  # noqa: F811
    # Guards the two tests above: the slow clients really hold what they reach.
    single = {"WEB_CONCURRENCY": "1", "GUNICORN_THREADS": "1"}
    with _gunicorn(production_env, tmp_path, **single) as port, _slow_sign_ins(port):
        status, took = _probe(port, timeout=ANSWER_WITHIN * 2)
    assert status is None or took >= ANSWER_WITHIN, (status, took)
