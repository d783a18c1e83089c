"""Development on the embedded SQLite default: two approvals at once never answer 500.

The suite itself runs on PostgreSQL, so the race runs in a child process configured for a
SQLite file (``python -m tests.test_sqlite DB_PATH``), the way `scripts/run` starts the app.
Each approval pauses inside its transaction, after its first read, until the other one has
read too (or a second has passed): with SQLite's default deferred transactions both then hold
a read lock and one of them cannot write ("database is locked"); with immediate transactions
the second waits at BEGIN for the first to commit. The dashboard, which has no row versions to
key its incident entries by on SQLite, must show the approvals at the next view all the same.
"""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAUSE_SECONDS = 1.0


@pytest.mark.slow  # a child process with Django and its own migrated database
def test_two_simultaneous_approvals_on_sqlite_both_succeed(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'race.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "crashdesk.settings",
        "DEBUG": "true",  # as in development; also spares the child a SECRET_KEY
    }
    child = subprocess.run(
        [sys.executable, "-m", "tests.test_sqlite"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0, child.stderr[-5000:]
    result = json.loads(child.stdout.strip().splitlines()[-1])
    assert result["statuses"] == [302, 302], child.stderr[-5000:]
    assert result["approved"] == 2
    # The second approval waited for the first one's commit instead of reading alongside it.
    assert not result["paused_together"]
    assert result["listed"] == [2, 0, 0, 2]


def _race() -> dict:
    """Two managers approve two settlements at the same moment, through the web."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection, connections
    from django.test import Client
    from django.urls import reverse
    from django.utils import timezone

    from settlements.access import roles
    from settlements.demo import snapshot_bytes
    from settlements.models import Settlement
    from settlements.services.incidents import incident_report
    from settlements.services.settlements import settlement_prepare, settlement_submit
    from settlements.services.snapshots import case_load_snapshot
    from tests.conftest import make_user, prove_second_factor
    from tests.races import start_thread

    call_command("migrate", verbosity=0)
    users = get_user_model()
    operator = make_user(users, "operator", roles.OPERATOR)
    managers = [make_user(users, f"manager{n}", roles.TOURNAMENT_MANAGER) for n in (1, 2)]
    incident = incident_report(actor=operator, title="Race", started_at=timezone.now())
    settlements = []
    for number in (1, 2):
        case = case_load_snapshot(
            actor=operator,
            incident=incident,
            snapshot=snapshot_bytes(type="regular", stage="middle", tournament_id=f"T-{number}"),
        )
        settlement = settlement_prepare(case=case, actor=operator)
        settlements.append(settlement_submit(settlement=settlement, actor=operator))
    desk = Client(HTTP_HOST="localhost")
    desk.force_login(operator)
    prove_second_factor(desk)
    listed_before = _incident_list(desk.get(reverse("dashboard")))
    clients = []
    for manager in managers:
        client = Client(raise_request_exception=False, HTTP_HOST="localhost")
        client.force_login(manager)
        clients.append(prove_second_factor(client))
    connection.close()

    both_read = threading.Barrier(2)
    paused_together = []
    statuses = [None, None]

    def approve(index: int) -> None:
        paused = False

        def pause_after_first_read(execute, sql, params, many, context):
            nonlocal paused
            result = execute(sql, params, many, context)
            if not paused and connections["default"].in_atomic_block:
                paused = True
                try:
                    both_read.wait(timeout=PAUSE_SECONDS)
                    paused_together.append(index)
                except threading.BrokenBarrierError:
                    pass
            return result

        with connections["default"].execute_wrapper(pause_after_first_read):
            response = clients[index].post(
                reverse("settlement_approve", args=[settlements[index].pk]),
                {"reason": "Checked"},
            )
        statuses[index] = response.status_code

    threads = [start_thread(lambda index=index: approve(index)) for index in (0, 1)]
    for thread in threads:
        thread.join(timeout=60)
    listed_after = _incident_list(desk.get(reverse("dashboard")))
    return {
        "statuses": statuses,
        "paused_together": bool(paused_together),
        "approved": Settlement.objects.filter(status="approved").count(),
        # SQLite's rows carry no versions: the dashboard keeps no entry, and shows the change.
        "listed": [
            listed.count(f'data-status="{status}"')
            for listed in (listed_before, listed_after)
            for status in ("awaiting_approval", "approved")
        ],
    }


def _incident_list(response) -> str:
    html = response.content.decode()
    return html[html.index('id="incident-list"') :]


if __name__ == "__main__":
    print(json.dumps(_race()))
