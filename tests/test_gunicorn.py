"""The production entrypoint and gunicorn config, run for real against PostgreSQL.

The Docker image cannot be built on this machine, so this starts what the image would start
(docker/entrypoint.sh -> gunicorn with crashdesk/gunicorn.conf.py) with production settings.
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent
STARTUP_SECONDS = 60

pytestmark = pytest.mark.slow  # gunicorn and its workers start for real


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _database_url() -> str:
    # The test database pytest-django created and migrated, so gunicorn sees the same schema.
    db = connection.settings_dict
    credentials = quote(db["USER"] or "", safe="")
    if db["PASSWORD"]:
        credentials += ":" + quote(db["PASSWORD"], safe="")
    return f"postgres://{credentials}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _docker_healthcheck(env: dict[str, str]) -> int:
    """Exit code of the image's HEALTHCHECK command against the server on env's PORT."""
    probe = subprocess.run(
        [sys.executable, str(ROOT / "docker" / "healthcheck.py")],
        env=env,
        capture_output=True,
        timeout=30,
    )
    return probe.returncode


@pytest.fixture
def production_env(tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("gunicorn must share the test database, which needs PostgreSQL")
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        # Plain HTTP on a loopback port: there is no TLS proxy in front of this test server.
        "SECURE_SSL_REDIRECT": "false",
        "DATABASE_URL": _database_url(),
        "STATIC_ROOT": str(tmp_path / "static"),
    }
    # Production serves hashed static names from the manifest that collectstatic writes.
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=180,
    )
    return env


# A plain django_db mark, so pytest-django creates and migrates the test database; this test's
# own transaction stays empty, so the server never waits on it.
@pytest.mark.django_db
def test_entrypoint_serves_health_and_login_with_gunicorn(production_env, tmp_path):
    port = _free_port()
    env = {
        **production_env,
        "BIND_HOST": "127.0.0.1",
        "PORT": str(port),
        "WEB_CONCURRENCY": "1",
        "RUN_MIGRATIONS": "1",
        "DB_WAIT_SECONDS": "10",
    }
    stdout_path, stderr_path = tmp_path / "stdout.log", tmp_path / "stderr.log"
    with stdout_path.open("wb") as stdout, stderr_path.open("wb") as stderr:
        server = subprocess.Popen(
            ["sh", str(ROOT / "docker" / "entrypoint.sh")],
            cwd=tmp_path,  # the entrypoint must find the project from its own location
            env=env,
            stdout=stdout,
            stderr=stderr,
        )

    def logs() -> str:
        return f"stdout:\n{stdout_path.read_text()}\nstderr:\n{stderr_path.read_text()}"

    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            assert server.poll() is None, "the server exited early\n" + logs()
            try:
                status, body = _get(f"{base}/healthz")
                break
            except OSError:
                assert time.monotonic() < deadline, "the server never answered\n" + logs()
                time.sleep(0.25)

        assert (status, json.loads(body)) == (200, {"status": "ok", "database": "ok"}), logs()
        status, body = _get(f"{base}/accounts/login/")
        assert status == 200, logs()
        assert b"<form" in body
        assert _docker_healthcheck(env) == 0, logs()
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            exit_code = server.wait(timeout=40)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
            raise

    assert exit_code == 0, logs()
    assert _docker_healthcheck(env) == 1
    # stdout also carries migrate's progress report; the access log lines are the JSON ones.
    stdout_lines = stdout_path.read_text().splitlines()
    access = [json.loads(line) for line in stdout_lines if line.startswith("{")]
    health = next(entry for entry in access if entry["path"] == "/healthz")
    assert health["logger"] == "gunicorn.access"
    assert health["method"] == "GET"
    assert health["status"] == 200
    # Server logs are JSON too, so a log shipper needs one parser.
    server_log = [json.loads(line) for line in stderr_path.read_text().splitlines()]
    assert any(e["logger"] == "gunicorn.error" and "Listening" in e["message"] for e in server_log)


@pytest.mark.django_db
def test_entrypoint_refuses_to_start_with_a_bad_setting(production_env, tmp_path):
    env = {**production_env, "CRASH_POLICY_EARLY_PCT": "101", "DB_WAIT_SECONDS": "10"}
    started = subprocess.run(
        ["sh", str(ROOT / "docker" / "entrypoint.sh"), "echo", "server started"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode != 0
    assert "server started" not in started.stdout
    assert "CRASH_POLICY_EARLY_PCT" in started.stderr
