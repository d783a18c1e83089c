"""The rulebooks over the API: read by every desk role, proposed and approved by two different
Tournament Managers, every refusal at its path and nothing stored; answers hold to the
OpenAPI document."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from settlements.access import roles
from settlements.models import Event, RulebookVersion
from settlements.rules import DEFAULT_POLICY
from settlements.services import rulebooks
from settlements.services.snapshots import case_load_snapshot
from tests.api.conftest import bearer
from tests.api.test_openapi import DOCUMENT, _check

pytestmark = pytest.mark.django_db

PROPOSAL = {
    "effective_from": "2099-01-01T00:00:00Z",
    "parameters": {"final_table_icm": 9},
    "text": "Final tables of nine or fewer are paid by **ICM**.",
    "reason": "Align with the published policy",
}


def post(api, url, body, token):
    data = body if isinstance(body, bytes) else json.dumps(body)
    return api.post(url, data=data, content_type="application/json", **bearer(token))


@pytest.fixture
def document(api):
    return api.get(DOCUMENT).json()


def test_a_proposal_then_another_managers_approval(api, tokens, document, second_manager):
    manager, second = tokens[roles.TOURNAMENT_MANAGER], tokens["second_manager"]
    created = post(api, "/api/v1/rulebooks/eu-main/versions", PROPOSAL, manager)
    assert created.status_code == 201, created.content
    _check(document, created, "/rulebooks/{key}/versions", "post")
    answer = created.json()
    assert (answer["version"], answer["status"]) == (1, "proposed")
    assert answer["parameters"] == {**DEFAULT_POLICY.parameters, "final_table_icm": 9}

    own = post(api, "/api/v1/rulebooks/eu-main/versions/1/approve", {"reason": "ok"}, manager)
    assert own.status_code == 403
    _check(document, own, "/rulebooks/{key}/versions/{number}/approve", "post")
    # Approving asks for a fresh second factor, which a token never carries: the other
    # manager approves at the desk.
    token = post(api, "/api/v1/rulebooks/eu-main/versions/1/approve", {"reason": "ok"}, second)
    assert token.status_code == 403 and "second factor" in token.content.decode()
    _check(document, token, "/rulebooks/{key}/versions/{number}/approve", "post")
    assert RulebookVersion.objects.get(rulebook__key="eu-main").status == "proposed"
    rulebooks.rulebook_version_approve(
        version=RulebookVersion.objects.get(rulebook__key="eu-main"),
        actor=second_manager,
        reason="ok",
    )
    again = post(api, "/api/v1/rulebooks/eu-main/versions/1/approve", {"reason": "ok"}, second)
    assert again.status_code == 409
    withdrawn = post(
        api, "/api/v1/rulebooks/eu-main/versions/1/withdraw", {"reason": "regulator"}, manager
    )
    assert withdrawn.json()["status"] == "withdrawn"
    _check(document, withdrawn, "/rulebooks/{key}/versions/{number}/withdraw", "post")


@pytest.mark.parametrize(
    "kind",
    [roles.OPERATOR, roles.MARKETING_MANAGER, roles.AUDITOR, roles.TOURNAMENT_MANAGER],
)
def test_every_desk_role_reads(api, tokens, document, kind):
    listed = api.get("/api/v1/rulebooks", **bearer(tokens[kind]))
    assert listed.status_code == 200
    _check(document, listed, "/rulebooks")
    (default,) = listed.json()["results"]
    assert (default["key"], default["in_force"]) == ("default", 1)
    one = api.get("/api/v1/rulebooks/default", **bearer(tokens[kind]))
    _check(document, one, "/rulebooks/{key}")
    missing = api.get("/api/v1/rulebooks/nowhere", **bearer(tokens[kind]))
    assert missing.status_code == 404
    _check(document, missing, "/rulebooks/{key}")


@pytest.mark.parametrize("kind", [roles.OPERATOR, roles.AUDITOR, roles.CASHIER, "none"])
def test_only_tournament_managers_propose(api, tokens, kind):
    refused = post(api, "/api/v1/rulebooks/eu-main/versions", PROPOSAL, tokens[kind])
    assert refused.status_code in (401, 403)
    assert not RulebookVersion.objects.filter(rulebook__key="eu-main").exists()


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({**PROPOSAL, "colour": "red"}, "colour"),
        ({**PROPOSAL, "parameters": {"pre_pct": "5"}}, "parameters.pre_pct"),
        ({**PROPOSAL, "parameters": {"bounty_refund": "all"}}, "parameters.bounty_refund"),
        ({**PROPOSAL, "parameters": {"nonsense": 1}}, "parameters.nonsense"),
        ({**PROPOSAL, "parameters": {"pre_pct": True}}, "parameters.pre_pct"),
        ({**PROPOSAL, "parameters": {"middle_fee_refund": "yes"}}, "parameters.middle_fee_refund"),
        ({**PROPOSAL, "parameters": {"final_table_icm": 1}}, "parameters.final_table_icm"),
        ({**PROPOSAL, "parameters": {"final_table_icm": 11}}, "parameters.final_table_icm"),
        ({**PROPOSAL, "parameters": {"early_pct": 101}}, "parameters.early_pct"),
        ({**PROPOSAL, "text": '<img src="x" onerror="steal()">'}, "text"),
        ({**PROPOSAL, "parameters": []}, "parameters"),
        ({**PROPOSAL, "effective_from": "2020-01-01T00:00:00Z"}, "effective_from"),
        ({**PROPOSAL, "effective_from": "next week"}, "effective_from"),
        ({**PROPOSAL, "text": "<script>alert(1)</script>"}, "text"),
        ({**PROPOSAL, "text": '<a href="#" onclick="x()">x</a>'}, "text"),
        ({**PROPOSAL, "reason": ""}, "reason"),
        ({k: v for k, v in PROPOSAL.items() if k != "text"}, "text"),
        (b"{not json", "$"),
        (b"[1, 2]", "$"),
    ],
)
def test_bad_proposals_are_refused_at_their_path_and_nothing_stored(
    api, tokens, document, body, path
):
    before = Event.objects.count()
    refused = post(api, "/api/v1/rulebooks/eu-main/versions", body, tokens["tournament_manager"])
    assert refused.status_code == 400, refused.content
    _check(document, refused, "/rulebooks/{key}/versions", "post")
    assert refused.json()["errors"][0]["path"] == path
    assert not RulebookVersion.objects.filter(rulebook__key="eu-main").exists()
    assert Event.objects.count() == before


def test_a_bad_key_is_refused(api, tokens):
    refused = post(
        api, "/api/v1/rulebooks/EU%20Main/versions", PROPOSAL, tokens["tournament_manager"]
    )
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["path"] == "key"


def test_the_case_names_its_rulebook_version(api, tokens, operator, snapshot_factory, document):
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory())
    answer = api.get(f"/api/v1/cases/{case.pk}", **bearer(tokens[roles.AUDITOR]))
    _check(document, answer, "/cases/{case_id}")
    assert answer.json()["rulebook"] == {"key": "default", "version": 1}


def test_a_simulation_over_the_api(api, tokens, document, operator, snapshot_factory):
    case = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(stage="late", tournament_id="L")
    )
    manager = tokens[roles.TOURNAMENT_MANAGER]
    post(api, "/api/v1/rulebooks/default/versions", {**PROPOSAL, "parameters": {}}, manager)
    started = post(
        api,
        "/api/v1/rulebooks/default/versions/2/simulations",
        {"rulebook": "default", "crashed_from": "2026-01-01T00:00:00Z"},
        manager,
    )
    assert started.status_code == 201, started.content
    _check(document, started, "/rulebooks/{key}/versions/{number}/simulations", "post")
    answer = api.get(started.json()["url"], **bearer(tokens[roles.AUDITOR]))
    _check(document, answer, "/simulations/{simulation_id}")
    body = answer.json()
    assert body["status"] == "done" and [r["case"] for r in body["results"]] == [case.pk]
    assert body["summary"]["cases"] == 1
    bad = post(
        api,
        "/api/v1/rulebooks/default/versions/2/simulations",
        {"crashed_from": "yesterday"},
        manager,
    )
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "crashed_from"
    none = post(api, "/api/v1/rulebooks/default/versions/2/simulations", {"incident": 999}, manager)
    assert none.status_code == 400
    _check(document, none, "/rulebooks/{key}/versions/{number}/simulations", "post")
    missing = api.get("/api/v1/simulations/999", **bearer(tokens[roles.AUDITOR]))
    assert missing.status_code == 404


def test_an_effective_time_not_after_the_version_approved_is_refused(
    api, tokens, tournament_manager, second_manager
):
    first = rulebooks.rulebook_version_propose(
        key="eu-main",
        parameters={},
        text="One.",
        effective_from=timezone.now() + timedelta(days=7),
        actor=tournament_manager,
        reason="first",
    )
    rulebooks.rulebook_version_approve(version=first, actor=second_manager, reason="ok")
    before = Event.objects.count()
    earlier = {**PROPOSAL, "effective_from": (timezone.now() + timedelta(days=3)).isoformat()}
    refused = post(api, "/api/v1/rulebooks/eu-main/versions", earlier, tokens["tournament_manager"])
    assert refused.status_code == 400, refused.content
    assert refused.json()["errors"][0]["path"] == "effective_from"
    assert RulebookVersion.objects.filter(rulebook__key="eu-main").count() == 1
    assert Event.objects.count() == before


def test_a_withdrawn_version_is_not_approved(api, tokens, tournament_manager):
    version = rulebooks.rulebook_version_propose(
        key="eu-main",
        parameters={},
        text="One.",
        effective_from=timezone.now() + timedelta(days=7),
        actor=tournament_manager,
        reason="first",
    )
    rulebooks.rulebook_version_withdraw(version=version, actor=tournament_manager, reason="no")
    before = Event.objects.count()
    refused = post(
        api,
        "/api/v1/rulebooks/eu-main/versions/1/approve",
        {"reason": "ok"},
        tokens["second_manager"],
    )
    assert refused.status_code == 409 and "withdrawn" in refused.content.decode()
    version.refresh_from_db()
    assert version.status == "withdrawn" and Event.objects.count() == before
