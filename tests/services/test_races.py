"""Races on PostgreSQL: fifty people (or game servers) doing the same thing at the same instant
have exactly one effect; the others get a clear refusal (harness: tests/races.py)."""

import json
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from settlements.access import roles
from settlements.errors import DomainError, InvalidTransition
from settlements.models import (
    Case,
    CasePlayer,
    Event,
    Incident,
    Settlement,
    Snapshot,
    Tournament,
)
from settlements.services import settlements as settlement_services
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create
from settlements.workflow import CaseStatus, SettlementStatus
from tests.conftest import make_user
from tests.races import RACES, WORKERS, run_together

pytestmark = RACES


@pytest.mark.slow
def test_fifty_simultaneous_approvals_approve_once(django_user_model, snapshot_factory):
    operator = make_user(django_user_model, "op", roles.OPERATOR)
    managers = [
        make_user(django_user_model, f"manager{i:02d}", roles.TOURNAMENT_MANAGER)
        for i in range(WORKERS)
    ]
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory(stage="late"))
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)

    def prepare(index):
        # Each worker loads its own copies, as a separate web request would.
        user = get_user_model().objects.get(pk=managers[index].pk)
        roles.user_roles(user)
        return user, Settlement.objects.get(pk=settlement.pk)

    def approve(index, prepared):
        user, mine = prepared
        return settlement_services.settlement_approve(
            settlement=mine, actor=user, reason=f"ok {index}"
        )

    results = run_together(WORKERS, approve, prepare)

    approvals = [result for result in results if isinstance(result, Settlement)]
    refusals = [result for result in results if isinstance(result, Exception)]
    assert len(approvals) == 1, refusals[:3]
    assert len(refusals) == WORKERS - 1
    assert all(isinstance(refusal, InvalidTransition) for refusal in refusals), refusals[:3]
    assert all("approved" in str(refusal) for refusal in refusals), str(refusals[0])

    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.APPROVED
    assert settlement.approved_by_id == approvals[0].approved_by_id
    assert Case.objects.get(pk=case.pk).status == CaseStatus.APPROVED
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_APPROVED).count() == 1
    approved_versions = settlement.history.filter(status=SettlementStatus.APPROVED)
    assert approved_versions.count() == 1


@pytest.mark.slow
def test_fifty_simultaneous_posts_of_one_snapshot_open_one_case(
    django_user_model, snapshot_factory
):
    operator = make_user(django_user_model, "server", roles.OPERATOR)
    _, token = api_token_create(user=operator, name="eu-1")
    data = snapshot_factory(stage="middle", entrants=60, tournament_id="RACE-1")
    entrants = len(json.loads(data)["players"])

    def post(index, client):
        return client.post(
            "/api/v1/snapshots",
            data,
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )

    responses = run_together(WORKERS, post, lambda index: Client())

    errors = [r for r in responses if isinstance(r, Exception)]
    assert not errors, errors[:3]
    statuses = Counter(response.status_code for response in responses)
    assert statuses == {201: 1, 409: WORKERS - 1}
    case = Case.objects.get()
    created = next(r for r in responses if r.status_code == 201).json()
    assert created["case"] == case.pk
    for response in responses:
        if response.status_code == 409:
            body = response.json()
            assert body["case"] == case.pk and body["same_snapshot"] is True
            assert body["errors"][0]["path"] == "tournament.id"
            assert "RACE-1 already has a crash case" in body["errors"][0]["message"]

    assert Tournament.objects.count() == 1
    assert Incident.objects.count() == 1
    assert Snapshot.objects.count() == 1
    assert CasePlayer.objects.count() == entrants
    workflow = Event.objects.exclude(type=Event.Type.USER_ACCESS_CHANGED)
    assert Counter(workflow.values_list("type", flat=True)) == {
        "api_token_created": 1,
        "tournament_created": 1,
        "incident_reported": 1,
        "snapshot_loaded": 1,
    }


def test_the_refusals_are_domain_errors_with_words_for_people(django_user_model, snapshot_factory):
    """What the losers of a race are told, checked once without threads."""
    operator = make_user(django_user_model, "op", roles.OPERATOR)
    first = make_user(django_user_model, "m1", roles.TOURNAMENT_MANAGER)
    second = make_user(django_user_model, "m2", roles.TOURNAMENT_MANAGER)
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory(stage="late"))
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=first)
    with pytest.raises(DomainError, match=r"already approved|is approved"):
        settlement_services.settlement_approve(settlement=settlement, actor=second)
