"""On the embedded SQLite default, a time beyond what can be stored is a 400, as on PostgreSQL.

Before the bounds, SQLite's adapter converted such a time to UTC and overflowed (a 500). The
suite runs on PostgreSQL, so this runs in a child process configured for a SQLite file
(``python -m tests.test_sqlite_input``), the way `scripts/run` starts the app.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMES = ("0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01")


@pytest.mark.slow  # a child process with Django and its own migrated database
def test_a_time_beyond_the_bounds_is_refused_on_sqlite_too(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'input.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "crashdesk.settings",
        "DEBUG": "true",  # as in development; also spares the child a SECRET_KEY
    }
    child = subprocess.run(
        [sys.executable, "-m", "tests.test_sqlite_input"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0, child.stderr[-5000:]
    result = json.loads(child.stdout.strip().splitlines()[-1])
    for answer in result["answers"]:
        assert answer["status"] == 400, answer
        assert [error["path"] for error in answer["errors"]] == ["crashed_at"]
    assert result["upload_status"] == 422
    assert result["cases"] == 0 and result["incidents"] == 1  # the one the upload went to


def _post_on_sqlite() -> dict:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.utils import timezone

    from settlements.access import roles
    from settlements.demo import build_snapshot
    from settlements.models import Case, Incident
    from settlements.services.incidents import incident_report
    from settlements.services.tokens import api_token_create
    from tests.conftest import make_user

    call_command("migrate", verbosity=0)
    operator = make_user(get_user_model(), "operator", roles.OPERATOR)
    _, token = api_token_create(user=operator, name="sqlite")
    api = Client(raise_request_exception=False, HTTP_HOST="localhost")
    answers = []
    for crashed_at in TIMES:
        body = json.dumps({**build_snapshot(tournament_id="EDGE"), "crashed_at": crashed_at})
        response = api.post(
            "/api/v1/snapshots",
            data=body.encode(),
            content_type="application/json",
            CONTENT_LENGTH=str(len(body)),
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        answers.append({"status": response.status_code, **response.json()})
    incident = incident_report(actor=operator, title="SQLite", started_at=timezone.now())
    web = Client(raise_request_exception=False, HTTP_HOST="localhost")
    web.force_login(operator)
    upload = web.post(
        f"/incidents/{incident.pk}/upload/",
        {"text": json.dumps({**build_snapshot(tournament_id="EDGE"), "crashed_at": TIMES[0]})},
    )
    return {
        "answers": answers,
        "upload_status": upload.status_code,
        "cases": Case.objects.count(),
        "incidents": Incident.objects.count(),
    }


if __name__ == "__main__":
    print(json.dumps(_post_on_sqlite()))
