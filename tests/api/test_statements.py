"""GET /api/v1/settlements/ID/statements: the players' statements for machines, a page at a time
or one player's, for the roles that may see amounts."""

import json

import pytest

from settlements.access import roles
from settlements.selectors.players import settlement_statements
from settlements.selectors.settlements import settlement_detail
from settlements.services import compensation as compensation_services
from settlements.services.settlements import AdjustmentEntry, settlement_adjust
from tests.api.conftest import bearer
from tests.services.helpers import approved
from tests.statement_helpers import evaluate
from tests.test_statements import arithmetic_holds
from tests.views.conftest import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def settlement(operator, tournament_manager, snapshot_factory):
    return approved(operator, tournament_manager, snapshot_factory, entrants=30)


def url(settlement, **query) -> str:
    from django.utils.http import urlencode

    return f"/api/v1/settlements/{settlement.pk}/statements" + (
        f"?{urlencode(query)}" if query else ""
    )


def test_pages_of_statements_cover_every_entrant_once_as_the_export_does(
    api, tokens, settlement, operator
):
    reader = bearer(tokens[roles.MARKETING_MANAGER])
    seen, next_url = [], url(settlement, limit=7)
    while next_url:
        response = api.get(next_url, **reader)
        assert response.status_code == 200 and response["Cache-Control"] == "no-store, private"
        body = response.json()
        assert body["settlement"] == settlement.pk and body["settlement_status"] == "approved"
        assert len(body["statements"]) <= 7
        seen += body["statements"]
        next_url = body["next"]
    assert [d["player"] for d in seen] == sorted(f"p{n:06d}" for n in range(1, 31))
    # The same documents as the JSON Lines export of the web.
    export = signed_in(operator).get(f"/settlements/{settlement.pk}/statements.jsonl")
    exported = [json.loads(line) for line in b"".join(export.streaming_content).splitlines()]
    assert seen == exported


def test_the_numbers_tie_to_the_ledger_lines(api, tokens, settlement):
    body = api.get(url(settlement), **bearer(tokens[roles.AUDITOR])).json()
    detail = settlement_detail(settlement.pk)
    for document in body["statements"]:
        totals: dict[str, int] = {}
        for line in document["lines"]:
            totals[line["unit"]] = totals.get(line["unit"], 0) + line["amount"]
        assert document["amounts"] == totals
        for step in document["arithmetic"]:
            assert str(evaluate(step["expression"], "USD")) == step["result"]
    paid = {line.player for line in settlement.lines.all()}
    assert paid and paid <= {document["player"] for document in body["statements"]}
    for statement in settlement_statements(detail):
        arithmetic_holds(statement)


def test_one_players_statement_says_what_else_is_on_record(
    api, tokens, settlement, operator, second_manager
):
    compensation = compensation_services.compensation_propose(
        case=settlement.case,
        actor=operator,
        reason="disconnected at the crash",
        entries=[compensation_services.CompensationEntry("p000002", 500)],
    )
    compensation_services.compensation_approve(compensation=compensation, actor=second_manager)
    body = api.get(url(settlement, player="p000002"), **bearer(tokens[roles.OPERATOR])).json()
    (document,) = body["statements"]
    assert document["player"] == "p000002" and body["next"] is None
    assert any(f"Compensation #{compensation.pk}" in words for words in document["also_on_record"])
    missing = api.get(url(settlement, player="nobody"), **bearer(tokens[roles.OPERATOR]))
    assert missing.status_code == 404 and missing.json()["errors"][0]["path"] == "?player"


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ({"limit": "0"}, "?limit"),
        ({"limit": "1001"}, "?limit"),
        ({"player": "p000001", "limit": "5"}, "?player"),
    ],
)
def test_bad_parameters_name_themselves(api, tokens, settlement, query, path):
    response = api.get(url(settlement, **query), **bearer(tokens[roles.AUDITOR]))
    assert response.status_code == 400 and response.json()["errors"][0]["path"] == path


def test_a_refused_query_is_refused_before_the_settlement_is_read(
    api, tokens, settlement, monkeypatch
):
    def unexpected(*args, **kwargs):
        raise AssertionError("the settlement was read")

    monkeypatch.setattr("settlements.api.statements.settlement_detail", unexpected)
    reader = bearer(tokens[roles.AUDITOR])
    response = api.get(url(settlement, limit="1001", after="x" * 10_000), **reader)
    assert response.status_code == 400
    assert response.json() == {"errors": [{"path": "?limit", "message": "must be at most 1000"}]}


def test_an_adjustment_or_an_unknown_settlement_is_a_json_404(api, tokens, settlement, operator):
    adjustment = settlement_adjust(
        settlement=settlement,
        actor=operator,
        reason="missed a refund",
        entries=[AdjustmentEntry("p000003", "refund_fee", "cash", 100, "house")],
    )
    reader = bearer(tokens[roles.AUDITOR])
    response = api.get(url(adjustment), **reader)
    assert (
        response.status_code == 404
        and f"#{settlement.pk}" in response.json()["errors"][0]["message"]
    )
    assert api.get("/api/v1/settlements/999999/statements", **reader).status_code == 404


@pytest.mark.parametrize("kind", list(roles.DESK_ROLES))
def test_every_role_that_sees_amounts_may_read(api, tokens, settlement, kind):
    assert api.get(url(settlement), **bearer(tokens[kind])).status_code == 200


@pytest.mark.parametrize("kind", [roles.CASHIER, "none"])
def test_roles_that_do_not_see_amounts_are_refused(api, tokens, settlement, kind):
    response = api.get(url(settlement), **bearer(tokens[kind]))
    assert response.status_code == 403
    assert response.json()["errors"][0]["path"] == "Authorization"
    assert "statements" not in response.json()


def test_no_token_no_statements(settlement, operator):
    # A session cookie is no credential here.
    response = signed_in(operator).get(url(settlement))
    assert response.status_code == 401 and "statements" not in response.json()


@pytest.mark.parametrize(
    ("query", "status", "path"),
    [
        ("player=p%00", 400, "?player"),
        ("after=%00", 400, "?after"),
        ("limit=%C2%B2", 400, "?limit"),
        ("limit=%D9%A1", 400, "?limit"),
        ("limit=-1", 400, "?limit"),
        ("limit=" + "9" * 40, 400, "?limit"),
        ("player=" + "x" * 10_240, 404, "?player"),
        ("player=p00000%D9%A1", 404, "?player"),  # looks like p000001, is not
        ("player=p%25", 404, "?player"),
        ("player=%ED%A0%80", 404, "?player"),
    ],
)
def test_a_query_no_statement_answers_is_refused_by_name(
    api, tokens, settlement, query, status, path
):
    response = api.get(
        f"/api/v1/settlements/{settlement.pk}/statements?{query}", **bearer(tokens[roles.AUDITOR])
    )
    assert response.status_code == status
    assert [error["path"] for error in response.json()["errors"]] == [path]


@pytest.mark.parametrize(
    ("raw", "after"),
    [
        ("p0000%25", "p0000%"),  # a LIKE wildcard is a character like any other
        ("p00001_", "p00001_"),
        ("%ED%A0%80", "\ufffd"),  # a lone surrogate arrives replaced
        ("%F4%8F%BF%BF", "\U0010ffff"),
        ("x" * 10_240, "x" * 10_240),
    ],
)
def test_any_after_text_gives_the_page_after_it(api, tokens, settlement, raw, after):
    response = api.get(
        f"/api/v1/settlements/{settlement.pk}/statements?after={raw}",
        **bearer(tokens[roles.AUDITOR]),
    )
    assert response.status_code == 200
    players = [statement["player"] for statement in response.json()["statements"]]
    assert players == sorted(player for player in players if player > after)


@pytest.mark.parametrize("number", [str(2**63), "9" * 25])
def test_a_settlement_number_beyond_any_id_is_a_json_404(api, tokens, number):
    response = api.get(f"/api/v1/settlements/{number}/statements", **bearer(tokens[roles.AUDITOR]))
    assert response.status_code == 404 and response.json()["errors"][0]["path"] == "$"
