"""Production settings: what `manage.py check --deploy` sees with a production environment, and
what the environment makes of the database connection and the WSGI application."""

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow  # each test starts manage.py in a fresh interpreter


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # A fresh environment, so nothing from the developer's shell (DEBUG, a local database URL)
    # leaks into what is meant to be production.
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "crashdesk.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "AUDIT_CHECKPOINT_KEY": secrets.token_urlsafe(32),
    "ALLOWED_HOSTS": "crashdesk.example.com",
    "DATABASE_URL": "postgres://crashdesk:secret@db.internal:5432/crashdesk",
}


def test_deploy_check_is_clean_with_production_environment():
    result = manage("check", "--deploy", "--fail-level", "DEBUG", env=PRODUCTION)

    assert result.returncode == 0, result.stderr + result.stdout
    assert "System check identified no issues" in result.stdout
    assert "WARNINGS" not in result.stderr + result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = {key: value for key, value in PRODUCTION.items() if key != "SECRET_KEY"}

    result = manage("check", env=env)

    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_debug_environment_would_fail_the_deploy_check():
    # Guards the test above: the check really does flag a non-production configuration.
    result = manage("check", "--deploy", "--fail-level", "WARNING", env={"DEBUG": "true"})

    assert result.returncode != 0
    assert "security.W018" in result.stderr + result.stdout


def _python(code: str, env: dict[str, str]) -> str:
    base = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**base, "DJANGO_SETTINGS_MODULE": "crashdesk.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _database(env: dict[str, str]) -> dict:
    code = (
        "import json, crashdesk.settings as s;"
        "print(json.dumps({k: s.DATABASES['default'].get(k, {})"
        " for k in ('ENGINE', 'OPTIONS', 'CONN_HEALTH_CHECKS')}))"
    )
    return json.loads(_python(code, env))


def test_postgresql_is_djangos_own_backend_with_its_health_checks_and_prepared_statements():
    off = _database(PRODUCTION)
    on = _database({**PRODUCTION, "DATABASE_PREPARED_STATEMENTS": "true"})

    # Django's defaults: parameters bound on the client, nothing prepared; every connection
    # bounds its waits for locks and its idle transactions.
    bounds = {"options": "-c lock_timeout=10000 -c idle_in_transaction_session_timeout=60000"}
    assert off == {
        "ENGINE": "django.db.backends.postgresql",
        "OPTIONS": bounds,
        "CONN_HEALTH_CHECKS": True,
    }
    assert on == {
        **off,
        "OPTIONS": {**bounds, "server_side_binding": True, "prepare_threshold": 5},
    }


def test_the_wsgi_application_leaves_what_it_loaded_out_of_garbage_collection():
    frozen = _python("import gc, crashdesk.wsgi; print(gc.get_freeze_count())", PRODUCTION)

    assert int(frozen) > 10_000


def test_a_short_metrics_token_is_flagged_by_the_deploy_check():
    short = manage("check", "--deploy", env={**PRODUCTION, "METRICS_TOKEN": "x" * 31})
    assert "settlements.W010" in short.stderr + short.stdout
    long = manage("check", "--deploy", env={**PRODUCTION, "METRICS_TOKEN": "x" * 32})
    assert "settlements.W010" not in long.stderr + long.stdout


def test_a_missing_checkpoint_key_is_flagged_by_the_deploy_check():
    env = {key: value for key, value in PRODUCTION.items() if key != "AUDIT_CHECKPOINT_KEY"}
    unset = manage("check", "--deploy", env=env)
    assert "settlements.W012" in unset.stderr + unset.stdout
