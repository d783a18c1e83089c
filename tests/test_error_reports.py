"""Error reports to Sentry: nothing without SENTRY_DSN, and no player id, token or amount in
what is sent with it."""

import json

import pytest
import sentry_sdk
from sentry_sdk.transport import Transport

from crashdesk import error_reports
from settlements.services.tokens import api_token_create

PLAYER, TOKEN, AMOUNT = "zz-player-7f3", "cdk_SeCrEtToKeN_0123456789", "987654"


def test_without_a_dsn_nothing_is_started():
    assert not sentry_sdk.get_client().is_active()


def _event() -> dict:
    return {
        "message": f"Line of {PLAYER!r}: {AMOUNT} given",
        "user": {"username": "operator", "ip_address": "10.0.0.1"},
        "request": {
            "method": "POST",
            "url": f"https://desk.example/api/v1/cases?player={PLAYER}",
            "query_string": f"player={PLAYER}",
            "data": {"confirmations": [{"idempotency_key": "42-1", "amount": AMOUNT}]},
            "cookies": {"sessionid": "s3ss10n"},
            "headers": {"Authorization": f"Bearer {TOKEN}", "User-Agent": "wallet/1"},
            "env": {"REMOTE_ADDR": "10.0.0.1"},
        },
        "exception": {
            "values": [
                {
                    "type": "ValueError",
                    "value": f"'{PLAYER}' owes {AMOUNT} cents",
                    "stacktrace": {
                        "frames": [
                            {
                                "filename": "settlements/services/payments.py",
                                "function": "payment_confirm",
                                "lineno": 200,
                                "vars": {"player": PLAYER, "raw": TOKEN},
                            }
                        ]
                    },
                }
            ]
        },
        "logentry": {"message": "Confirming %s", "params": [PLAYER]},
        "breadcrumbs": {
            "values": [
                {
                    "category": "crashdesk.events",
                    "message": f"paid {AMOUNT} to {PLAYER!r}",
                    "data": {"player": PLAYER, "amounts": {"cash": AMOUNT}, "event": "paid"},
                }
            ]
        },
        "extra": {"token": TOKEN, "note": f"seen with Bearer {TOKEN}"},
        "spans": [{"description": f"SELECT 1 WHERE player = '{PLAYER}'", "data": {}}],
        "contexts": {"trace": {"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}},
    }


def test_the_scrubbing_leaves_no_player_token_or_amount():
    scrubbed = error_reports.scrub(_event(), None)
    sent = json.dumps(scrubbed)

    for secret in (PLAYER, TOKEN, AMOUNT, "s3ss10n", "10.0.0.1"):
        assert secret not in sent
    assert "user" not in scrubbed
    assert set(scrubbed["request"]) == {"method", "url", "headers"}
    assert scrubbed["request"]["headers"] == {"User-Agent": "wallet/1"}
    frame = scrubbed["exception"]["values"][0]["stacktrace"]["frames"][0]
    assert frame == {
        "filename": "settlements/services/payments.py",
        "function": "payment_confirm",
        "lineno": 200,
    }
    assert scrubbed["exception"]["values"][0]["type"] == "ValueError"
    assert scrubbed["logentry"] == {"message": "Confirming %s"}
    assert scrubbed["breadcrumbs"]["values"][0]["data"]["event"] == "paid"
    # What finds the fault is kept: the trace, the template, the kinds of things.
    assert scrubbed["contexts"]["trace"]["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Authorization: Bearer abc.def", "Authorization: Bearer [Filtered]"),
        ("The amount differs: 120 given, 100 approved", "The amount differs: # given, # approved"),
        ("'p000017' was not an entrant", "'[Filtered]' was not an entrant"),
        ("token cdk_x1", "token [Filtered]"),
    ],
)
def test_text_is_scrubbed_of_what_could_name_a_player_or_an_amount(text, kept):
    assert error_reports.scrub_text(text) == kept


class _Captured(Transport):
    def __init__(self, options=None):
        super().__init__(options)
        self.envelopes = []

    def capture_envelope(self, envelope):
        self.envelopes.append(envelope)


@pytest.fixture
def reported():
    """The SDK started as settings.py starts it, with what it would send kept here."""
    error_reports.init(
        dsn="https://public@sentry.invalid/1",
        environment="test",
        release="r1",
        traces_sample_rate=1.0,
    )
    captured = _Captured()
    sentry_sdk.get_client().transport = captured
    yield captured.envelopes
    sentry_sdk.get_client().close()
    # Back to no client at all, as without SENTRY_DSN.
    sentry_sdk.get_global_scope().set_client(None)


@pytest.mark.django_db
def test_an_api_error_is_reported_without_the_request_s_secrets(
    reported, client, operator, monkeypatch
):
    _, raw = api_token_create(user=operator, name="game server")

    def broken(*args, **kwargs):
        raise RuntimeError(f"row for {PLAYER!r} holds {AMOUNT}")

    monkeypatch.setattr("settlements.selectors.cases.case_page", broken)
    response = client.get(f"/api/v1/cases?tournament={PLAYER}", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 500
    sentry_sdk.flush()

    items = [item for envelope in reported for item in envelope.items]
    payloads = [item.payload.json for item in items if item.payload.json is not None]
    errors = [payload for payload in payloads if payload.get("exception")]
    assert errors, "the error was not reported"
    assert errors[0]["exception"]["values"][-1]["type"] == "RuntimeError"
    sent = json.dumps(payloads)
    for secret in (PLAYER, raw, AMOUNT):
        assert secret not in sent
