"""Bad proofs of identity: each refused clearly, logged as one line naming its kind, counted in
/metrics (``crashdesk_access_refusals_total``), never a server error. The sign-on callback's
refusals are tested against a real provider in tests/sso/."""

import logging

import pytest
from allauth.mfa.recovery_codes.internal.auth import RecoveryCodes
from django.test import Client
from django.urls import reverse
from prometheus_client.parser import text_string_to_metric_families

from settlements.access import refusals, roles, second_factor
from settlements.models import TokenScope
from settlements.services.tokens import api_token_create
from tests.api.conftest import bearer
from tests.conftest import DEMO_PASSWORD, TEST_TOTP_SECRET, make_user
from tests.db.conftest import behind_the_apps_back

pytestmark = pytest.mark.django_db

METRICS_TOKEN = "scraper-secret-0123456789"


@pytest.fixture
def counted(settings):
    """The refusals of each kind counted so far, as /metrics shows them."""
    settings.METRICS_TOKEN = METRICS_TOKEN

    def read() -> dict[str, float]:
        page = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {METRICS_TOKEN}")
        return {
            sample.labels["kind"]: sample.value
            for family in text_string_to_metric_families(page.content.decode())
            for sample in family.samples
            if sample.name == "crashdesk_access_refusals_total"
        }

    return read


@pytest.fixture
def boss(django_user_model):
    user = make_user(django_user_model, "boss", roles.TOURNAMENT_MANAGER)
    second_factor.set_totp_secret(user=user, secret=TEST_TOTP_SECRET)
    return user


def signed_in_with_password() -> Client:
    client = Client()
    answer = client.post(reverse("login"), {"username": "boss", "password": DEMO_PASSWORD})
    assert answer.status_code == 302
    return client


def refusal_lines(caplog) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == "crashdesk.access"]


def test_every_kind_is_on_the_metrics_page_from_the_start(counted):
    assert set(counted()) >= set(refusals.KINDS)


def test_a_wrong_code_is_refused_logged_and_counted(boss, counted, caplog):
    before = counted()
    right = second_factor.totp_code(TEST_TOTP_SECRET)
    wrong = f"{(int(right) + 1) % 1_000_000:06d}"

    with caplog.at_level(logging.WARNING, logger="crashdesk.access"):
        answer = signed_in_with_password().post(reverse("mfa_reauthenticate"), {"code": wrong})

    assert answer.status_code == 200
    assert "Incorrect code" in answer.content.decode()
    (line,) = refusal_lines(caplog)
    assert line.refusal == refusals.SECOND_FACTOR_WRONG
    assert line.user == "boss"
    assert "\n" not in line.getMessage()
    assert counted()[refusals.SECOND_FACTOR_WRONG] == before[refusals.SECOND_FACTOR_WRONG] + 1


def test_a_replayed_code_is_told_apart(boss, counted, caplog):
    code = second_factor.totp_code(TEST_TOTP_SECRET)
    assert signed_in_with_password().post(reverse("mfa_reauthenticate"), {"code": code})["Location"]
    before = counted()

    with caplog.at_level(logging.WARNING, logger="crashdesk.access"):
        answer = signed_in_with_password().post(reverse("mfa_reauthenticate"), {"code": code})

    assert answer.status_code == 200
    assert [line.refusal for line in refusal_lines(caplog)] == [refusals.TOTP_REPLAYED]
    assert counted()[refusals.TOTP_REPLAYED] == before[refusals.TOTP_REPLAYED] + 1


def test_a_reused_recovery_code_is_told_apart(boss, counted, caplog):
    code = RecoveryCodes.activate(boss).get_unused_codes()[0]
    assert signed_in_with_password().post(reverse("mfa_reauthenticate"), {"code": code})["Location"]
    before = counted()

    with caplog.at_level(logging.WARNING, logger="crashdesk.access"):
        answer = signed_in_with_password().post(reverse("mfa_reauthenticate"), {"code": code})

    assert answer.status_code == 200
    assert [line.refusal for line in refusal_lines(caplog)] == [refusals.RECOVERY_CODE_REUSED]
    assert counted()[refusals.RECOVERY_CODE_REUSED] == before[refusals.RECOVERY_CODE_REUSED] + 1


@pytest.mark.parametrize("code", ["", "abc", "1" * 200, "12 34 56\x00"])
def test_garbage_is_never_a_server_error(boss, code):
    answer = signed_in_with_password().post(reverse("mfa_reauthenticate"), {"code": code})
    assert answer.status_code == 200


def test_an_expired_token_is_refused_logged_and_counted(django_user_model, counted, caplog):
    operator = make_user(django_user_model, "op", roles.OPERATOR)
    token, raw = api_token_create(user=operator, name="eu-1", days=1)
    behind_the_apps_back(
        "UPDATE settlements_apitoken SET expires_at = now() - interval '1 second' WHERE id = %s",
        [token.pk],
    )
    before = counted()

    with caplog.at_level(logging.WARNING, logger="crashdesk.access"):
        answer = Client().get("/api/v1/cases", **bearer(raw))

    assert answer.status_code == 401
    assert "expired" in answer.json()["errors"][0]["message"]
    assert [line.refusal for line in refusal_lines(caplog)] == [refusals.API_TOKEN_INVALID]
    assert counted()[refusals.API_TOKEN_INVALID] == before[refusals.API_TOKEN_INVALID] + 1


def test_an_out_of_scope_token_is_refused_logged_and_counted(django_user_model, counted, caplog):
    operator = make_user(django_user_model, "op", roles.OPERATOR)
    _, raw = api_token_create(user=operator, name="eu-1", scopes=[TokenScope.SNAPSHOTS_WRITE])
    before = counted()

    with caplog.at_level(logging.WARNING, logger="crashdesk.access"):
        answer = Client().get("/api/v1/cases", **bearer(raw))

    assert answer.status_code == 403
    assert "cases:read" in answer.json()["errors"][0]["message"]
    (line,) = refusal_lines(caplog)
    assert (line.refusal, line.scope) == (refusals.API_TOKEN_OUT_OF_SCOPE, "cases:read")
    assert counted()[refusals.API_TOKEN_OUT_OF_SCOPE] == before[refusals.API_TOKEN_OUT_OF_SCOPE] + 1
