"""Races around a withdrawal on PostgreSQL: a withdrawn case frees its tournament, yet fifty
simultaneous loads still open exactly one case in force, and a withdrawal racing approvals
leaves either an approved case or a withdrawn one, never both."""

import json
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from settlements.access import roles
from settlements.errors import InvalidTransition
from settlements.models import Case, Event, Settlement
from settlements.services import settlements as settlement_services
from settlements.services.snapshots import case_load_snapshot, case_withdraw
from settlements.services.tokens import api_token_create
from settlements.workflow import CaseStatus, SettlementStatus
from tests.conftest import make_user
from tests.races import RACES, WORKERS, run_together

pytestmark = [*RACES, pytest.mark.slow]  # crowds of WORKERS threads


def test_fifty_posts_after_a_withdrawal_open_one_new_case(django_user_model, snapshot_factory):
    operator = make_user(django_user_model, "server", roles.OPERATOR)
    _, token = api_token_create(user=operator, name="eu-1")
    wrong = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(stage="early", tournament_id="RACE-2")
    )
    case_withdraw(case=wrong, actor=operator, reason="exported from the wrong table")
    data = snapshot_factory(stage="middle", entrants=60, tournament_id="RACE-2")

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
    assert Counter(response.status_code for response in responses) == {201: 1, 409: WORKERS - 1}
    live = Case.objects.exclude(status=CaseStatus.WITHDRAWN).get()
    assert live.pk != wrong.pk and live.entrants == len(json.loads(data)["players"])
    for response in responses:
        if response.status_code == 409:
            assert response.json()["case"] == live.pk
    assert Case.objects.get(pk=wrong.pk).status == CaseStatus.WITHDRAWN
    assert Event.objects.filter(type=Event.Type.SNAPSHOT_LOADED).count() == 2


def test_a_withdrawal_racing_approvals_has_one_outcome(django_user_model, snapshot_factory):
    operator = make_user(django_user_model, "op", roles.OPERATOR)
    managers = [
        make_user(django_user_model, f"manager{i:02d}", roles.TOURNAMENT_MANAGER)
        for i in range(WORKERS)
    ]
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory(stage="late"))
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)

    def prepare(index):
        user = get_user_model().objects.get(pk=managers[index].pk)
        roles.user_roles(user)
        return user, Settlement.objects.get(pk=settlement.pk), Case.objects.get(pk=case.pk)

    def approve_or_withdraw(index, prepared):
        user, mine, my_case = prepared
        if index % 2:
            return settlement_services.settlement_approve(settlement=mine, actor=user, reason="ok")
        return case_withdraw(case=my_case, actor=user, reason=f"wrong {index}")

    results = run_together(WORKERS, approve_or_withdraw, prepare)

    done = [result for result in results if not isinstance(result, Exception)]
    refusals = [result for result in results if isinstance(result, Exception)]
    assert len(done) == 1, refusals[:3]
    assert all(isinstance(refusal, InvalidTransition) for refusal in refusals), refusals[:3]
    case.refresh_from_db()
    settlement.refresh_from_db()
    if isinstance(done[0], Case):
        assert (case.status, settlement.status) == (
            CaseStatus.WITHDRAWN,
            SettlementStatus.WITHDRAWN,
        )
    else:
        assert (case.status, settlement.status) == (
            CaseStatus.APPROVED,
            SettlementStatus.APPROVED,
        )
    outcomes = Event.objects.filter(
        type__in=[Event.Type.CASE_WITHDRAWN, Event.Type.SETTLEMENT_APPROVED]
    )
    assert outcomes.count() == 1
