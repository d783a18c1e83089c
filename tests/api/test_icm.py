"""GET /api/v1/settlements/ID/icm: the ICM second opinion for machines, a page at a time, for
the roles the review page shows it to."""

import pytest
from django.utils.http import urlencode

from settlements.access import roles
from settlements.models import IcmValue
from settlements.services.settlements import settlement_prepare
from settlements.services.snapshots import case_load_snapshot
from tests.api.conftest import bearer

pytestmark = pytest.mark.django_db


def url(settlement, **query) -> str:
    return f"/api/v1/settlements/{settlement.pk}/icm" + (f"?{urlencode(query)}" if query else "")


def prepared(operator, snapshot_factory, **kwargs):
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory(**kwargs))
    return settlement_prepare(case=case, actor=operator)


def test_pages_cover_every_remaining_player_once_with_the_stored_figures(
    api, tokens, operator, snapshot_factory, settings
):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = 1, 1
    settlement = prepared(operator, snapshot_factory, stage="middle", entrants=40)
    reader = bearer(tokens[roles.TOURNAMENT_MANAGER])
    seen, next_url = [], url(settlement, limit=7)
    while next_url:
        response = api.get(next_url, **reader)
        assert response.status_code == 200
        body = response.json()
        seen += body["values"]
        next_url = body["next"]
    assert (body["status"], body["method"], body["flag"]) == (
        "done",
        "exact",
        {"percent": 1, "min_amount": 1},
    )
    stored = IcmValue.objects.filter(valuation__settlement=settlement).order_by("position")
    assert [(v["player"], v["icm"], v["policy"], v["difference"]) for v in seen] == [
        (r.player, r.amount, r.policy_amount, r.difference) for r in stored
    ]
    assert sum(v["icm"] for v in seen) == body["prizes_in_play"]
    assert any(v["flagged"] for v in seen)
    for v in seen:
        assert v["flagged"] == (v["difference"] < 0 and -v["difference"] * 100 >= v["icm"])


def test_no_figures_where_chips_decide_nothing(api, tokens, operator, snapshot_factory):
    settlement = prepared(operator, snapshot_factory, stage="early", entrants=20)
    response = api.get(url(settlement), **bearer(tokens[roles.AUDITOR]))
    assert response.status_code == 404
    assert "no ICM figures" in response.json()["errors"][0]["message"]


def test_a_user_without_a_desk_role_is_refused(api, tokens, operator, snapshot_factory):
    settlement = prepared(operator, snapshot_factory, stage="late", entrants=20)
    assert api.get(url(settlement), **bearer(tokens["none"])).status_code == 403
    assert api.get(url(settlement)).status_code == 401


@pytest.mark.parametrize(
    ("role", "status"),
    [
        (roles.TOURNAMENT_MANAGER, 200),
        (roles.AUDITOR, 200),
        (roles.OPERATOR, 403),
        (roles.MARKETING_MANAGER, 403),
        (roles.CASHIER, 403),
    ],
)
def test_the_api_answers_the_roles_the_review_page_shows_it_to(
    api, tokens, operator, snapshot_factory, role, status
):
    settlement = prepared(operator, snapshot_factory, stage="late", entrants=20)
    assert api.get(url(settlement), **bearer(tokens[role])).status_code == status


def test_a_knock_outs_bounties_come_apart_from_the_compared_prize_money(
    api, tokens, operator, snapshot_factory
):
    settlement = prepared(operator, snapshot_factory, stage="late", entrants=20, rebuys=True)
    body = api.get(url(settlement), **bearer(tokens[roles.TOURNAMENT_MANAGER])).json()
    assert sum(v["policy"] for v in body["values"]) == body["prizes_in_play"]
    assert any(v["bounty"] > 0 for v in body["values"])
