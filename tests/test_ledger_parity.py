"""One answer per role for players' ledger lines: the statements API, the case API, the web
pages and the downloads all follow ``permissions.ledger_read``, and where they show a player's
lines they show the same ones."""

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse

from settlements.access import permissions, roles
from settlements.services.tokens import api_token_create
from tests.services.helpers import approved

pytestmark = pytest.mark.django_db

PLAYER = "p000001"
KINDS = (
    roles.OPERATOR,
    roles.MARKETING_MANAGER,
    roles.TOURNAMENT_MANAGER,
    roles.AUDITOR,
    roles.CASHIER,
    "none",
)


@pytest.fixture
def settlement(operator, tournament_manager, snapshot_factory):
    return approved(operator, tournament_manager, snapshot_factory, stage="late")


def _lines(rows) -> list[tuple]:
    return sorted((row["kind"], row["unit"], int(row["amount"]), row["source"]) for row in rows)


def _statements_api(user, settlement) -> list[tuple] | None:
    raw = api_token_create(user=user, name="parity")[1]
    response = Client().get(
        f"/api/v1/settlements/{settlement.pk}/statements?limit=1000",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    if response.status_code == 403:
        return None
    assert response.status_code == 200, response.content
    [statement] = [s for s in response.json()["statements"] if s["player"] == PLAYER]
    return _lines(statement["lines"])


def _case_api(user, settlement) -> list[tuple] | None:
    raw = api_token_create(user=user, name="parity case")[1]
    response = Client().get(
        f"/api/v1/cases/{settlement.case_id}", HTTP_AUTHORIZATION=f"Bearer {raw}"
    )
    if response.status_code == 403:
        return None
    assert response.status_code == 200, response.content
    lines = response.json()["settlement"]["lines"]
    return _lines(line for line in lines if line["player"] == PLAYER)


def _statement_page(web: Client, settlement) -> bool | None:
    url = reverse("settlement_statement", args=[settlement.pk])
    response = web.get(url, {"player": PLAYER})
    if response.status_code == 403:
        return None
    assert response.status_code == 200
    return f"Ledger lines of {PLAYER}" in response.content.decode()


def _ledger_download(web: Client, settlement) -> list[tuple] | None:
    response = web.get(reverse("settlement_ledger", args=[settlement.pk]))
    if response.status_code == 403:
        return None
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    rows = [row for row in csv.DictReader(io.StringIO(text)) if row["player"] == PLAYER]
    return _lines({**row, "amount": row["amount_minor"]} for row in rows)


def _statements_download(web: Client, settlement) -> bool | None:
    response = web.get(reverse("settlement_statements_csv", args=[settlement.pk]))
    if response.status_code == 403:
        return None
    assert response.status_code == 200
    return PLAYER in b"".join(response.streaming_content).decode()


@pytest.mark.parametrize("kind", KINDS)
def test_every_surface_gives_a_role_the_same_answer_about_ledger_lines(users, settlement, kind):
    user = users[kind]
    may_read = permissions.ledger_read(user=user) is None
    web = Client()
    web.force_login(user)

    by_api = _statements_api(user, settlement)
    by_case = _case_api(user, settlement)
    page = _statement_page(web, settlement)
    download = _ledger_download(web, settlement)
    statements_csv = _statements_download(web, settlement)

    answers = {
        "statements API": by_api,
        "case API": by_case,
        "statement page": page,
        "ledger download": download,
        "statements download": statements_csv,
    }
    assert {name: answer is not None for name, answer in answers.items()} == dict.fromkeys(
        answers, may_read
    )
    if may_read:
        assert by_api and by_api == by_case == download
        assert page and statements_csv


def test_settings_refuse_whoever_every_other_page_refuses(users):
    for kind in KINDS:
        web = Client()
        web.force_login(users[kind])
        settings_page = web.get(reverse("user_settings")).status_code
        dashboard = web.get(reverse("dashboard")).status_code
        assert settings_page == dashboard, kind
        assert settings_page == (200 if roles.has_desk_role(users[kind]) else 403), kind
