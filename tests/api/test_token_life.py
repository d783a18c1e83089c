"""API tokens with a life and a scope: every token ends (90 days unless said), calls outside
its scopes are refused whatever its user's roles, a rotation gives a new token while the old
one works a few days more, and each of these is an event the record accounts for."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from settlements.errors import DomainError
from settlements.models import ApiToken, Event, TokenScope
from settlements.services import tokens
from tests.api.conftest import bearer
from tests.db.conftest import behind_the_apps_back

pytestmark = pytest.mark.django_db

CASES = "/api/v1/cases"


def test_a_token_works_for_the_default_life_and_every_scope(operator, settings):
    token, _raw = tokens.api_token_create(user=operator, name="eu-1")
    life = token.expires_at - timezone.now()
    assert timedelta(days=settings.API_TOKEN_DAYS - 1) < life <= timedelta(days=90)
    assert token.scopes == sorted(TokenScope.values) or set(token.scopes) == set(TokenScope.values)
    event = Event.objects.get(type=Event.Type.API_TOKEN_CREATED, subject_id=token.pk)
    assert event.data["scopes"] == token.scopes
    assert event.data["expires_at"] == token.expires_at.isoformat()


@pytest.mark.parametrize(
    ("scopes", "days", "words"),
    [
        (["cases:write"], None, "Unknown scope cases:write"),
        ([], None, "at least one scope"),
        (None, 0, "from 1 to 366 days"),
        (None, 367, "from 1 to 366 days"),
    ],
)
def test_a_bad_scope_or_life_is_refused_and_nothing_is_issued(operator, scopes, days, words):
    with pytest.raises(DomainError, match=words):
        tokens.api_token_create(user=operator, name="eu-1", scopes=scopes, days=days)
    assert not ApiToken.objects.exists()


def test_an_expired_token_is_refused_saying_so(client, operator):
    token, raw = tokens.api_token_create(user=operator, name="eu-1", days=1)
    assert client.get(CASES, **bearer(raw)).status_code == 200
    # A day later, as the clock would make it: the end moved back behind the app's back.
    behind_the_apps_back(
        "UPDATE settlements_apitoken SET expires_at = now() - interval '1 second' WHERE id = %s",
        [token.pk],
    )
    response = client.get(CASES, **bearer(raw))
    assert response.status_code == 401
    assert "expired" in response.json()["errors"][0]["message"]


def test_a_call_outside_the_tokens_scopes_is_refused_naming_the_scope(client, operator):
    _token, raw = tokens.api_token_create(
        user=operator, name="reader", scopes=[TokenScope.CASES_READ]
    )
    assert client.get(CASES, **bearer(raw)).status_code == 200
    response = client.post(
        "/api/v1/snapshots", b"{}", content_type="application/json", **bearer(raw)
    )
    assert response.status_code == 403
    message = response.json()["errors"][0]["message"]
    assert "snapshots:write" in message and "cases:read" in message


def test_a_rotation_gives_a_new_token_and_the_old_one_works_a_few_days_more(
    client, operator, settings
):
    old, old_raw = tokens.api_token_create(user=operator, name="eu-1", scopes=["cases:read"])
    new, new_raw = tokens.api_token_rotate(token=old)
    old.refresh_from_db()
    assert (new.user, new.name, new.scopes) == (old.user, old.name, old.scopes)
    overlap = old.expires_at - timezone.now()
    assert timedelta(days=settings.API_TOKEN_OVERLAP_DAYS - 1) < overlap <= timedelta(days=7)
    for raw in (old_raw, new_raw):
        assert client.get(CASES, **bearer(raw)).status_code == 200
    rotated = Event.objects.get(type=Event.Type.API_TOKEN_ROTATED)
    assert (rotated.subject_id, rotated.data["successor"]) == (old.pk, new.prefix)
    call_command("verify_audit", stdout=StringIO())


def test_a_revoked_token_is_not_rotated(operator):
    token, _raw = tokens.api_token_create(user=operator, name="eu-1")
    tokens.api_token_revoke(token=token)
    with pytest.raises(DomainError, match="no longer works"):
        tokens.api_token_rotate(token=token)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ("expires_at = expires_at + interval '400 days'", "end"),
        ("scopes = '[\"cases:read\"]'::jsonb", "scopes"),
    ],
)
def test_a_tokens_terms_changed_behind_the_apps_back_are_named(operator, change, named):
    token, _raw = tokens.api_token_create(user=operator, name="eu-1")
    call_command("verify_audit", stdout=StringIO())
    behind_the_apps_back(f"UPDATE settlements_apitoken SET {change} WHERE id = {token.pk}")
    with pytest.raises(CommandError, match=f"API token #{token.pk}'s {named}"):
        call_command("verify_audit")


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("api_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_command_issues_with_scopes_and_a_life_rotates_and_lists_what_ends_soon(operator):
    _raw, said = run(
        "create", "operator", "--name", "eu-1", "--scope", "cases:read", "--days", "10"
    )
    assert "cases:read" in said and "working until" in said
    token = ApiToken.objects.get()
    assert token.scopes == ["cases:read"]
    run("create", "operator", "--name", "eu-2")
    soon, _ = run("list", "--expiring", "14")
    assert "eu-1" in soon and "eu-2" not in soon
    new_raw, said = run("rotate", str(token.pk))
    assert new_raw.strip().startswith("cdk_") and "works until" in said
    listing, _ = run("list", "operator")
    assert listing.count("works until") == 3


def test_the_document_names_each_endpoints_scope(client):
    document = client.get("/api/v1/openapi.json").json()
    scopes = {
        operation["x-scope"]
        for path in document["paths"].values()
        for operation in path.values()
        if isinstance(operation, dict) and "x-scope" in operation and operation["x-scope"]
    }
    assert scopes == set(TokenScope.values)
