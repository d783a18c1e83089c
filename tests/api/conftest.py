"""Fixtures for the API tests: a bearer token per role and a client that sends it."""

import pytest
from django.test import Client

from settlements.access import roles
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.tokens import api_token_create
from tests.services.helpers import approved


def bearer(raw: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


@pytest.fixture
def tokens(users):
    """A raw token for each kind of user in ``users`` (role name, "second_manager", "none")."""
    return {
        kind: api_token_create(user=user, name=f"{kind} server")[1] for kind, user in users.items()
    }


@pytest.fixture
def api():
    return Client()


def post_snapshot(client: Client, raw_token: str | None, body: bytes, query: str = ""):
    # Like real HTTP clients, always declare the length (the test client leaves it out for an
    # empty body, and the API answers 411 to a body of unknown length).
    headers = {"CONTENT_LENGTH": str(len(body))}
    if raw_token:
        headers.update(bearer(raw_token))
    return client.post(
        f"/api/v1/snapshots{query}", data=body, content_type="application/json", **headers
    )


@pytest.fixture
def operator_token(tokens):
    return tokens[roles.OPERATOR]


@pytest.fixture
def wallet(tokens):
    """The cashier's credentials."""
    return bearer(tokens[roles.CASHIER])


@pytest.fixture
def desk(operator, tournament_manager, second_manager, snapshot_factory):
    settlement = approved(operator, tournament_manager, snapshot_factory, stage="early")
    proposal = compensation_propose(
        case=settlement.case,
        actor=operator,
        reason="lag",
        entries=[CompensationEntry("p000001", 250), CompensationEntry("p000002", 30, "fpp")],
    )
    compensation_approve(compensation=proposal, actor=second_manager)
    return settlement
