"""GET /api/v1/openapi.json: every route described, nothing described that is not routed, and
what the endpoints really answer holds to the document."""

import ast
import json
from pathlib import Path

import jsonschema_rs
import pytest
import schemathesis
from django.test import Client
from django.urls import URLResolver, get_resolver

from settlements.access import roles
from settlements.api import openapi, urls
from settlements.services.individual_cases import individual_case_open
from settlements.services.tokens import api_token_create
from tests.api.conftest import bearer, post_snapshot
from tests.services.helpers import approved

pytestmark = pytest.mark.django_db

DOCUMENT = "/api/v1/openapi.json"


@pytest.fixture
def document(api):
    response = api.get(DOCUMENT)
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    return response.json()


def _api_routes() -> set[tuple[str, str]]:
    """Every (path, method) that the URL configuration sends to the API, written as OpenAPI
    paths: found from the site's resolver, so a route added anywhere under /api/ counts."""
    found = set()
    for entry in get_resolver().url_patterns:
        if isinstance(entry, URLResolver) and str(entry.pattern) == "api/v1/":
            for pattern in entry.url_patterns:
                path = "/" + str(pattern.pattern)
                for name in ("int", "str", "slug", "uuid", "path"):
                    path = path.replace(f"<{name}:", "{")
                path = path.replace(">", "}").replace("<", "{")
                operation = getattr(pattern.callback, "operation", None)
                methods = operation.methods if operation else ("?",)
                found |= {(path, method.lower()) for method in methods}
    return found


def test_every_route_is_described_and_every_description_is_routed(document):
    described = {(path, method) for path, item in document["paths"].items() for method in item}
    routes = _api_routes()
    assert routes, "the API's routes were not found"
    assert routes - described == set(), "routes the document does not describe"
    assert described - routes == set(), "operations described that no route serves"


def test_every_operation_names_the_roles_it_needs_and_its_refusals(document):
    routed = {openapi.path_of(pattern)[0]: pattern.callback for pattern in urls.urlpatterns}
    for path, item in document["paths"].items():
        for operation in item.values():
            if path == "/openapi.json":
                assert operation["security"] == []
                continue
            view = routed[path]
            assert operation["x-roles"] == list(view.operation.allowed)
            for role in view.operation.allowed:
                assert roles.LABELS[role] in operation["description"]
            assert {"400", "401", "403", "405", "500"} <= set(operation["responses"])
    assert document["security"] == [{"bearer": []}]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_every_answer_goes_out_through_its_declared_type():
    """An endpoint's answer is sent by ``base.answer`` as the type it declares, never as a
    bare dict that the document's types would not check; refusals have their own helpers."""
    for module in Path(openapi.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "json_response":
                pytest.fail(f"{module.name}:{node.lineno} answers a bare dict")


def test_the_document_loads_as_openapi_3_1(document):
    schema = schemathesis.openapi.from_dict(document)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == sum(len(item) for item in document["paths"].values())
    assert document["openapi"] == "3.1.0"


def _check(document: dict, response, path: str, method: str = "get") -> None:
    """``response`` is one the document allows: its status is listed, its body fits."""
    responses = document["paths"][path][method]["responses"]
    assert str(response.status_code) in responses, response.content
    schema = responses[str(response.status_code)]["content"]["application/json"]["schema"]
    validator = jsonschema_rs.validator_for(
        {"$ref": schema["$ref"], "components": document["components"]}
    )
    errors = [str(error) for error in validator.iter_errors(response.json())]
    assert errors == [], f"{method.upper()} {path} {response.status_code}: {errors}"


def test_what_the_endpoints_answer_holds_to_the_document(
    api, document, tokens, desk, snapshot_factory, tournament_manager
):
    operator, auditor = bearer(tokens[roles.OPERATOR]), bearer(tokens[roles.AUDITOR])
    cashier = bearer(tokens[roles.CASHIER])
    marketing = bearer(tokens[roles.MARKETING_MANAGER])
    individual = individual_case_open(
        actor=tournament_manager,
        tournament=desk.case.tournament,
        players=["p000001"],
        description="disconnected at the final table",
    )

    created = post_snapshot(api, tokens[roles.OPERATOR], snapshot_factory(tournament_id="T-9"))
    _check(document, created, "/snapshots", "post")
    again = post_snapshot(api, tokens[roles.OPERATOR], snapshot_factory(tournament_id="T-9"))
    assert again.status_code == 409
    _check(document, again, "/snapshots", "post")

    _check(document, api.get("/api/v1/cases?limit=2", **auditor), "/cases")
    for token in (operator, marketing, cashier):
        _check(document, api.get(f"/api/v1/cases/{desk.case_id}", **token), "/cases/{case_id}")
    _check(document, api.get(f"/api/v1/cases/{individual.pk}", **auditor), "/cases/{case_id}")
    _check(document, api.get("/api/v1/cases/999999", **auditor), "/cases/{case_id}")

    statements = f"/api/v1/settlements/{desk.pk}/statements"
    path = "/settlements/{settlement_id}/statements"
    _check(document, api.get(f"{statements}?limit=2", **auditor), path)
    _check(document, api.get(f"{statements}?player=p000001", **auditor), path)
    _check(document, api.get(f"{statements}?player=nobody", **auditor), path)

    feed = api.get("/api/v1/ledger?limit=2", **cashier)
    _check(document, feed, "/ledger")
    line = feed.json()["lines"][0]
    batch = {
        "confirmations": [
            {
                "idempotency_key": line["idempotency_key"],
                "status": "paid",
                "external_reference": "wal-1",
                "at": "2026-11-30T21:30:00Z",
                "amount": line["amount"],
            },
            {"idempotency_key": "nope", "status": "paid"},
        ]
    }
    confirmed = api.post(
        "/api/v1/ledger/confirmations",
        data=json.dumps(batch),
        content_type="application/json",
        **cashier,
    )
    assert confirmed.json()["refused"] == 1
    _check(document, confirmed, "/ledger/confirmations", "post")

    _check(document, api.get("/api/v1/ledger?limit=0", **cashier), "/ledger")
    _check(document, api.get("/api/v1/ledger"), "/ledger")
    _check(document, api.get("/api/v1/ledger", **auditor), "/ledger")
    _check(document, api.delete("/api/v1/ledger", **cashier), "/ledger")


def test_links_name_operations_and_parameters_that_exist(document):
    operations = {
        operation["operationId"]: operation
        for item in document["paths"].values()
        for operation in item.values()
    }
    links = [
        link
        for item in document["paths"].values()
        for operation in item.values()
        for response in operation["responses"].values()
        for link in response.get("links", {}).values()
    ]
    assert len(links) >= 4
    for link in links:
        names = {p["name"] for p in operations[link["operationId"]]["parameters"]}
        assert set(link["parameters"]) <= names


def test_a_token_sees_the_same_document_as_no_token_and_writes_are_405(api, cashier):
    _, raw = api_token_create(user=cashier, name="wallet")
    assert api.get(DOCUMENT, **bearer(raw)).content == api.get(DOCUMENT).content
    # As a browser would be checked: the CSRF check must not answer first, with a page.
    refused = Client(enforce_csrf_checks=True).post(DOCUMENT)
    assert refused.status_code == 405
    assert refused["Allow"] == "GET, HEAD"
    assert refused.json()["errors"][0]["path"] == "$"


def test_the_examples_are_bodies_the_endpoints_accept(api, document, tokens):
    snapshot = document["paths"]["/snapshots"]["post"]["requestBody"]["content"]
    body = json.dumps(snapshot["application/json"]["example"]).encode()
    created = post_snapshot(api, tokens[roles.OPERATOR], body)
    assert created.status_code == 201, created.content
    _check(document, created, "/snapshots", "post")

    batch = document["paths"]["/ledger/confirmations"]["post"]["requestBody"]["content"]
    answered = api.post(
        "/api/v1/ledger/confirmations",
        data=json.dumps(batch["application/json"]["example"]),
        content_type="application/json",
        **bearer(tokens[roles.CASHIER]),
    )
    # The example's key names no line on this empty desk: refused on its own, at its path.
    assert answered.json()["results"][0]["errors"][0]["path"] == "confirmations[0].idempotency_key"
    _check(document, answered, "/ledger/confirmations", "post")


def test_a_knock_out_desk_answers_as_the_document_says(
    api, document, tokens, operator, tournament_manager, snapshot_factory
):
    """A version 2 (rebuy knock-out) case pays bounties from the bounty money, a line kind and
    a source a version 1 case never shows: its feed, case and statements hold to the document
    too."""
    settlement = approved(
        operator, tournament_manager, snapshot_factory, stage="early", rebuys=True
    )
    auditor, cashier = bearer(tokens[roles.AUDITOR]), bearer(tokens[roles.CASHIER])
    feed = api.get("/api/v1/ledger?limit=500", **cashier)
    _check(document, feed, "/ledger")
    lines = feed.json()["lines"]
    assert "bounty" in {line["kind"] for line in lines}
    assert "bounty" in {line["source"] for line in lines}
    case = f"/api/v1/cases/{settlement.case_id}"
    _check(document, api.get(case, **auditor), "/cases/{case_id}")
    statements = f"/api/v1/settlements/{settlement.pk}/statements"
    _check(document, api.get(statements, **auditor), "/settlements/{settlement_id}/statements")
