"""The review's pages of payouts (and of an adjustment's lines) are ranges of stored
positions: the same rows an OFFSET would give, in the engine's order, without the OFFSET."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from settlements.models import SettlementLine, SettlementPayout
from settlements.rules import parse_snapshot, settle
from settlements.services import settlements as settlement_services
from settlements.services.snapshots import case_load_snapshot
from settlements.views.paging import RangePaginator
from settlements.views.settlement_review import PAYOUTS_PER_PAGE

pytestmark = pytest.mark.django_db


def page_of(response) -> list:
    return list(response.context["page"].object_list)


def test_payout_pages_follow_the_engine_without_an_offset(
    as_operator, operator, incident, snapshot_factory
):
    data = snapshot_factory(type="regular", stage="middle", entrants=260)
    case = case_load_snapshot(actor=operator, snapshot=data, incident=incident)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    engine = [row.player for row in settle(parse_snapshot(data)).payouts]
    assert len(engine) == 130  # three pages: 50, 50, 30

    shown = []
    for number in (1, 2, 3):
        url = reverse("settlement_review", args=[settlement.pk]) + f"?page={number}"
        with CaptureQueriesContext(connection) as queries:
            response = as_operator.get(url)
        payout_queries = [q["sql"] for q in queries if "settlementpayout" in q["sql"]]
        assert payout_queries and not any("OFFSET" in sql for sql in payout_queries)
        assert response.context["page"].number == number
        shown += [payout.player for payout in page_of(response)]
    assert shown == engine

    past_the_end = as_operator.get(reverse("settlement_review", args=[settlement.pk]) + "?page=9")
    assert [p.player for p in page_of(past_the_end)] == engine[100:]


def test_a_searched_review_still_pages_its_matches(as_operator, operator, load_case):
    settlement = settlement_services.settlement_prepare(
        case=load_case(type="regular", stage="middle", entrants=260), actor=operator
    )
    url = reverse("settlement_review", args=[settlement.pk]) + "?q=p00001"
    matches = [p.player for p in page_of(as_operator.get(url))]
    assert matches and all("p00001" in player for player in matches)
    assert matches == sorted(matches)


def test_range_pages_equal_offset_pages(operator, load_case):
    settlement = settlement_services.settlement_prepare(
        case=load_case(type="regular", stage="early", entrants=140), actor=operator
    )
    lines = SettlementLine.objects.filter(settlement=settlement).order_by("line_no")
    payouts = SettlementPayout.objects.filter(settlement=settlement).order_by("position")
    for rows, count, field, first in (
        (lines, settlement.line_count, "line_no", 1),
        (payouts, settlement.payout_count, "position", 0),
    ):
        paginator = RangePaginator(rows, PAYOUTS_PER_PAGE, count=count, field=field, first=first)
        assert paginator.num_pages > 2
        for number in paginator.page_range:
            bottom = (number - 1) * PAYOUTS_PER_PAGE
            expected = list(rows[bottom : bottom + PAYOUTS_PER_PAGE])
            assert list(paginator.page(number).object_list) == expected


def test_an_adjustments_lines_page_by_line_number(
    as_manager, operator, tournament_manager, load_case
):
    case = load_case(type="regular", stage="middle", entrants=200)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement = settlement_services.settlement_approve(
        settlement=settlement, actor=tournament_manager
    )
    players = list(
        SettlementPayout.objects.filter(settlement=settlement)
        .order_by("position")
        .values_list("player", flat=True)[:60]
    )
    adjustment = settlement_services.settlement_adjust(
        settlement=settlement,
        actor=operator,
        reason="recount",
        entries=[
            settlement_services.AdjustmentEntry(p, "prize", "cash", 1, "pool") for p in players
        ],
    )
    url = reverse("settlement_review", args=[adjustment.pk])
    second = page_of(as_manager.get(url + "?page=2"))
    assert [line.line_no for line in second] == list(range(51, 61))
