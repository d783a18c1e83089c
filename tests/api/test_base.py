"""What every endpoint shares (settlements/api/base.py): bearer-token authentication, roles,
methods, and JSON for errors, shown through POST /api/v1/snapshots."""

import json

import msgspec
import pytest
from django.test import Client, RequestFactory

from settlements.access import roles
from settlements.api import base as api_module
from settlements.api.answers import CaseCreated
from settlements.api.base import answer
from settlements.models import ApiToken, Case
from settlements.services.tokens import api_token_revoke
from tests.api.conftest import bearer, post_snapshot
from tests.services.helpers import row_counts

pytestmark = pytest.mark.django_db

URL = "/api/v1/snapshots"


# --- Authentication and permission -----------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "challenge_error"),
    [
        (None, False),
        ("", False),
        ("Token abc", False),
        ("Bearer", False),
        ("Basic b3BlcmF0b3I6Y3Jhc2hkZXNrLXRlc3Q=", False),
        ("Bearer cdk_00000000_nonsense", True),
        ("Bearer not-our-format", True),
        ("Bearer " + "x" * 300, False),
    ],
)
def test_no_valid_token_is_401_with_a_challenge(api, snapshot_factory, header, challenge_error):
    extra = {} if header is None else {"HTTP_AUTHORIZATION": header}
    before = row_counts()
    response = api.post(URL, snapshot_factory(), content_type="application/json", **extra)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith('Bearer realm="crashdesk"')
    assert ('error="invalid_token"' in response["WWW-Authenticate"]) is challenge_error
    assert response.json()["errors"][0]["path"] == "Authorization"
    assert row_counts() == before


def test_the_scheme_is_case_insensitive(api, operator_token, snapshot_factory):
    response = api.post(
        URL,
        snapshot_factory(),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"bearer  {operator_token} ",
    )
    assert response.status_code == 201


def test_a_signed_in_session_is_not_an_api_credential(operator, snapshot_factory):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    response = client.post(URL, snapshot_factory(), content_type="application/json")
    assert response.status_code == 401
    assert not Case.objects.exists()


def test_revoked_tokens_and_deactivated_users_are_refused(
    api, operator, operator_token, snapshot_factory
):
    token = ApiToken.objects.get(token_hash=ApiToken.hash(operator_token))
    operator.is_active = False
    operator.save()
    assert post_snapshot(api, operator_token, snapshot_factory()).status_code == 401
    operator.is_active = True
    operator.save()
    api_token_revoke(token=token)
    assert post_snapshot(api, operator_token, snapshot_factory()).status_code == 401
    assert not Case.objects.exists()


def test_a_token_works_only_with_its_own_secret(api, operator_token, snapshot_factory):
    tampered = operator_token[:-4] + ("AAAA" if not operator_token.endswith("AAAA") else "BBBB")
    assert post_snapshot(api, tampered, snapshot_factory()).status_code == 401


@pytest.mark.parametrize(
    "kind", [roles.MARKETING_MANAGER, roles.TOURNAMENT_MANAGER, roles.AUDITOR, "none"]
)
def test_users_who_may_not_report_crashes_get_403(api, tokens, snapshot_factory, kind):
    before = row_counts()
    response = post_snapshot(api, tokens[kind], snapshot_factory())
    assert response.status_code == 403
    assert "Operator" in response.json()["errors"][0]["message"]
    assert row_counts() == before


def test_the_time_of_last_use_is_kept(api, operator_token, snapshot_factory):
    token = ApiToken.objects.get(token_hash=ApiToken.hash(operator_token))
    assert token.last_used_at is None
    post_snapshot(api, operator_token, snapshot_factory())
    token.refresh_from_db()
    assert token.last_used_at is not None
    # Routine use leaves no history version.
    assert token.history.count() == 1


@pytest.mark.parametrize("method", ["get", "put", "patch", "delete"])
def test_other_methods_are_405_with_allow(api, operator_token, method):
    response = getattr(api, method)(URL, **bearer(operator_token))
    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert response.json()["errors"][0]["message"]


# --- Server errors ---------------------------------------------------------------------------


def test_an_unexpected_error_is_a_json_500(api, operator_token, snapshot_factory, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("settlements.api.snapshots.case_load_snapshot", broken)
    response = post_snapshot(api, operator_token, snapshot_factory())
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert "boom" not in response.content.decode()
    assert response.json()["errors"][0]["path"] == "$"


def test_the_site_error_handlers_answer_json_under_api_only():
    factory = RequestFactory()
    api_error = api_module.server_error(factory.get("/api/v1/cases"))
    assert api_error.status_code == 500 and api_error["Content-Type"] == "application/json"
    page_error = api_module.server_error(factory.get("/cases/1/"))
    assert page_error.status_code == 500 and "text/html" in page_error["Content-Type"]


def test_an_unknown_api_path_is_a_json_404(api, operator_token):
    response = api.get("/api/v1/nothing-here", **bearer(operator_token))
    assert response.status_code == 404
    assert response.json()["errors"][0]["path"] == "$"
    assert "text/html" in Client().get("/no-such-page/").headers["Content-Type"]


def test_an_answer_unlike_its_declared_type_is_not_sent():
    created = {
        "case": 1,
        "url": "http://testserver/api/v1/cases/1",
        "incident": None,
        "stage": "early",
        "status": "ready",
        "decision_options": [],
    }
    assert json.loads(answer(created, CaseCreated, status=201).content) == created
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        answer({**created, "secret": 1}, CaseCreated)
    with pytest.raises(msgspec.ValidationError, match="missing required field"):
        answer({key: value for key, value in created.items() if key != "stage"}, CaseCreated)


def test_a_query_parameter_given_twice_is_refused(api, operator_token):
    response = api.get("/api/v1/cases?incident=1&incident=2", **bearer(operator_token))
    assert response.status_code == 400
    assert "?incident" in response.content.decode()
    assert "given once" in response.content.decode()
