"""A restore that proves itself (docs/operations.md): a seeded desk dumped with pg_dump in the
custom format, restored with pg_restore into a new database of its own, verified there by
`verify_audit` against the head exported before the dump, and every role's pages rendered
from the restored copy (full pages and htmx partials)."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection
from django.urls import reverse

from settlements.access import roles
from tests.db.conftest import postgresql_only
from tests.services.helpers import every_record

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True), postgresql_only]

ROOT = Path(settings.BASE_DIR)

# Run in the restored database: every role signs in and opens its pages, as a page and as an
# htmx partial; prints what did not answer 200.
RENDER = """
import json, sys
import django
django.setup()
from django.test.utils import setup_test_environment
setup_test_environment()
from django.contrib.auth import get_user_model
from django.test import Client
from tests.conftest import prove_second_factor
failures = []
for username, urls in json.loads(sys.argv[1]).items():
    client = Client()
    client.force_login(get_user_model().objects.get(username=username))
    prove_second_factor(client)
    for url in urls:
        for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
            status = client.get(url, **headers).status_code
            if status != 200:
                failures.append(f"{username} {url} {headers}: {status}")
print(json.dumps(failures))
"""


def database_url(name: str) -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    return f"postgres://{db['USER']}{password}@{host}:{port}/{name}"


def run(command: list[str], **env: str) -> str:
    done = subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{command[:3]}: {done.stdout}\n{done.stderr}"
    return done.stdout


def role_pages(users, records) -> dict[str, list[str]]:
    settlement, compensation = records["settlement"], records["compensation"]
    everyone = [
        reverse("dashboard"),
        reverse("case_queue"),
        reverse("incident_queue"),
        reverse("case_detail", args=[settlement.case_id]),
        reverse("settlement_review", args=[settlement.pk]),
        reverse("players") + "?q=p000001",
    ]
    payments = [reverse("payments"), reverse("payments_audit"), reverse("compensation_list")]
    return {
        users[roles.OPERATOR].username: [
            *everyone,
            *payments,
            reverse("individual_case_list"),
            reverse("compensation_detail", args=[compensation.pk]),
        ],
        users[roles.MARKETING_MANAGER].username: everyone,
        users[roles.TOURNAMENT_MANAGER].username: [*everyone, *payments],
        users[roles.AUDITOR].username: [
            *everyone,
            *payments,
            reverse("history"),
            reverse("history") + "?view=events",
            reverse("history_record", args=["settlement", settlement.pk]),
            reverse("audit_head"),
        ],
    }


def test_a_restored_dump_verifies_against_the_kept_head_and_serves_every_role(
    users, snapshot_factory, tmp_path
):
    records = every_record(users, snapshot_factory)
    head, dump = tmp_path / "head.json", tmp_path / "desk.dump"
    call_command("verify_audit", export_head=str(head))
    source = connection.settings_dict["NAME"]
    run(["pg_dump", "--format=custom", "--no-owner", f"--file={dump}", database_url(source)])
    restored = f"{source}_restored_{uuid.uuid4().hex[:8]}"
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{restored}"')
    try:
        run(
            [
                "pg_restore",
                "--no-owner",
                "--exit-on-error",
                f"--dbname={database_url(restored)}",
                str(dump),
            ]
        )
        there = {"DATABASE_URL": database_url(restored)}
        verified = run([sys.executable, "manage.py", "verify_audit", f"--head={head}"], **there)
        kept = json.loads(head.read_text())
        assert f"{kept['events']} events verified; head {kept['head']}" in verified
        pages = role_pages(users, records)
        failures = json.loads(run([sys.executable, "-c", RENDER, json.dumps(pages)], **there))
        assert failures == []
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{restored}" WITH (FORCE)')
