"""`manage.py api_token`: tokens printed once, stored hashed, revoked at once, audited."""

import subprocess
import sys
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from settlements.models import ApiToken, Event
from tests.api.conftest import bearer
from tests.db.conftest import behind_the_apps_back

pytestmark = pytest.mark.django_db


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("api_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_prints_the_token_alone_and_stores_only_its_hash(operator):
    out, err = run("create", "operator", "--name", "eu-west game server")
    raw = out.strip()
    assert "\n" not in raw and raw.startswith("cdk_") and len(raw) == 56

    token = ApiToken.objects.get()
    assert token.user == operator and token.name == "eu-west game server"
    assert token.token_hash == ApiToken.hash(raw)
    assert token.prefix == raw[4:12]
    stored = [str(value) for value in ApiToken.objects.values().get().values()]
    assert not any(raw in value or raw[13:] in value for value in stored)
    assert "cannot be shown again" in err and raw not in err


def test_the_token_created_works_against_the_api(api, operator):
    raw = run("create", "operator")[0].strip()
    assert api.get("/api/v1/cases", **bearer(raw)).status_code == 200
    assert api.get("/api/v1/cases", **bearer(raw[:-1] + "x")).status_code == 401


def test_issue_and_revoke_are_audited_without_a_user_as_actor(operator):
    raw = run("create", "operator", "--name", "eu-1")[0].strip()
    run("revoke", raw[:12])
    events = list(
        Event.objects.filter(type__startswith="api_token")
        .order_by("id")
        .values_list("type", "actor", "data")
    )
    prefix, token = raw[4:12], ApiToken.objects.get()
    issued = {
        "user": "operator",
        "name": "eu-1",
        "prefix": prefix,
        "scopes": token.scopes,
        "expires_at": token.expires_at.isoformat(),
    }
    assert events == [
        ("api_token_created", None, issued),
        ("api_token_revoked", None, {"user": "operator", "name": "eu-1", "prefix": prefix}),
    ]
    versions = ApiToken.history.order_by("history_id")
    assert [v.history_change_reason for v in versions] == ["Token issued", "Token revoked"]


def test_the_name_defaults_to_the_username(operator):
    run("create", "operator")
    assert ApiToken.objects.get().name == "operator"


@pytest.mark.parametrize("how", ["id", "prefix", "tagged prefix", "whole token"])
def test_revoke_by_id_prefix_or_token_stops_the_token_at_once(api, operator, how):
    raw = run("create", "operator")[0].strip()
    token = ApiToken.objects.get()
    given = {
        "id": str(token.pk),
        "prefix": token.prefix,
        "tagged prefix": "cdk_" + token.prefix,
        "whole token": raw,
    }[how]
    out, _ = run("revoke", given)
    assert f"Revoked token cdk_{token.prefix}" in out
    token.refresh_from_db()
    assert token.revoked_at is not None
    response = api.get("/api/v1/cases", **bearer(raw))
    assert response.status_code == 401
    assert 'error="invalid_token"' in response["WWW-Authenticate"]


def test_a_prefix_of_decimal_digits_is_found_as_a_prefix(operator, monkeypatch):
    # Hex digits are all decimal ones in about one prefix of 43: not an id, then.
    monkeypatch.setattr("settlements.models.accounts.secrets.token_hex", lambda size: "43792373")
    run("create", "operator")
    token = ApiToken.objects.get()
    assert token.prefix == "43792373"
    out, _ = run("revoke", "43792373")
    assert "Revoked token cdk_43792373" in out
    with pytest.raises(CommandError, match="no token with the prefix cdk_12345678"):
        run("revoke", "12345678")


def test_revoking_twice_or_an_unknown_token_is_an_error(operator):
    raw = run("create", "operator")[0].strip()
    run("revoke", raw)
    with pytest.raises(CommandError, match="already revoked"):
        run("revoke", raw)
    with pytest.raises(CommandError, match="no token with id 999"):
        run("revoke", "999")
    with pytest.raises(CommandError, match="no token with the prefix"):
        run("revoke", "cdk_00000000")
    with pytest.raises(CommandError, match="prefix of 8 characters"):
        run("revoke", "abc")
    assert Event.objects.filter(type="api_token_revoked").count() == 1


def test_a_prefix_shared_by_two_active_tokens_asks_for_the_id(operator):
    run("create", "operator", "--name", "a")
    run("create", "operator", "--name", "b")
    # Two random prefixes alike, which the database lets no one write (the tokens' guard).
    behind_the_apps_back("UPDATE settlements_apitoken SET prefix = 'abcdef12'")
    with pytest.raises(CommandError, match="give the id"):
        run("revoke", "abcdef12")
    assert not ApiToken.objects.filter(revoked_at__isnull=False).exists()


def test_unknown_or_deactivated_users_get_no_token(operator):
    with pytest.raises(CommandError, match="no user 'ghost'"):
        run("create", "ghost")
    operator.is_active = False
    operator.save()
    with pytest.raises(CommandError, match="deactivated"):
        run("create", "operator")
    assert not ApiToken.objects.exists()


def test_a_token_for_a_user_who_cannot_post_snapshots_comes_with_a_warning(auditor):
    out, err = run("create", "auditor")
    assert out.strip().startswith("cdk_")
    assert "not an Operator" in err


def test_a_cashiers_token_reads_the_feed(cashier, api):
    out, err = run("create", "wallet", "--name", "wallet system")
    assert "is a Cashier" in err and "not an Operator" not in err
    response = api.get("/api/v1/ledger", HTTP_AUTHORIZATION=f"Bearer {out.strip()}")
    assert response.status_code == 200
    assert api.get("/api/v1/cases", HTTP_AUTHORIZATION=f"Bearer {out.strip()}").status_code == 403


def test_list_shows_prefix_name_and_status_but_never_a_secret(operator, auditor):
    raw_one = run("create", "operator", "--name", "eu-1")[0].strip()
    raw_two = run("create", "operator", "--name", "eu-2")[0].strip()
    run("create", "auditor", "--name", "reports")
    run("revoke", raw_two)

    out, _ = run("list", "operator")
    lines = out.splitlines()
    assert lines[0].split() == [
        "ID",
        "PREFIX",
        "USER",
        "NAME",
        "CREATED",
        "LAST",
        "USED",
        "STATUS",
        "SCOPES",
    ]
    assert len(lines) == 3
    assert raw_one[:12] in lines[1] and "eu-1" in lines[1] and "works until" in lines[1]
    assert "never" in lines[1]
    assert raw_two[:12] in lines[2] and "revoked" in lines[2]
    assert "reports" not in out
    for token in ApiToken.objects.all():
        assert token.token_hash not in out
    assert raw_one[13:] not in out and raw_two[13:] not in out

    assert "reports" in run("list")[0]
    with pytest.raises(CommandError):
        run("list", "ghost")


def test_list_without_tokens_says_so(operator):
    assert run("list", "operator")[0].strip() == "No tokens."


@pytest.mark.slow  # starts manage.py in a fresh interpreter, where the logging is configured
@pytest.mark.django_db(transaction=True)
def test_standard_output_holds_the_token_alone_in_a_real_process(operator):
    from tests.test_gunicorn import _database_url

    created = subprocess.run(
        [sys.executable, "manage.py", "api_token", "create", "operator"],
        cwd=settings.BASE_DIR,
        env={"PATH": "/usr/bin:/bin", "DATABASE_URL": _database_url()},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert created.returncode == 0, created.stderr
    # The audit event's log line and the advice go to standard error; a script reads the token.
    assert created.stdout.count("\n") == 1 and created.stdout.startswith("cdk_")
    assert "api_token_created" in created.stderr
