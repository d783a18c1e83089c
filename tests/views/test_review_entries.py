"""The review of a rebuy knock-out settlement (RULES.md §8): each player's own buy-ins back,
their share and their bounty in columns of their own, on the page and in its htmx partial."""

import re

import pytest
from django.urls import reverse

from settlements.models import SettlementLine
from settlements.services import settlements as settlement_services
from tests.views.conftest import HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db

HEADS = ["Own buy-ins back", "Share of the rest of the pool", "Their own bounty, returned"]


def cells(html: str, player: str) -> list[str]:
    row = re.search(rf"{player}</span>.*?</tr>", html, re.S).group(0)
    return re.findall(r'data-part="(\w+)">([^<]*)<', row)


def test_a_rebuy_knock_out_review_shows_buy_ins_share_and_bounty_apart(
    as_operator, operator, load_case
):
    case = load_case(stage="middle", entrants=30, tournament_id="KO-R", rebuys=True)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    url = reverse("settlement_review", args=[settlement.pk])
    html = assert_full_page(as_operator.get(url))
    for head in HEADS:
        assert f'<th scope="col" class="num">{head}</th>' in html
    # p000001 bought in twice and took an add-on: 3 × 10.00 guaranteed first.
    parts = dict(cells(html, "p000001"))
    assert parts["guaranteed"] == "30.00 USD"
    bounty = SettlementLine.objects.get(settlement=settlement, player="p000001", kind="bounty")
    assert parts["bounty"] == f"{bounty.amount / 100:.2f} USD"
    assert "Bounties" in html  # the footer's row of bounty money

    partial = assert_partial(
        as_operator.get(url + "?q=p00000", **HTMX, HTTP_HX_TARGET="payouts"), "payouts"
    )
    assert all(f">{head}</th>" in partial for head in HEADS)
    assert dict(cells(partial, "p000002"))["guaranteed"] == "10.00 USD"


def test_the_explain_panel_shows_a_players_own_buy_ins_and_bounty(as_operator, operator, load_case):
    case = load_case(stage="middle", entrants=30, tournament_id="KO-X", rebuys=True)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    url = reverse("settlement_review", args=[settlement.pk]) + "?player=p000001"
    panel = assert_partial(
        as_operator.get(url, **HTMX, HTTP_HX_TARGET="player-detail"), "player-detail"
    )
    assert 'own buy-ins back</dt><dd data-part="guaranteed">30.00 USD</dd>' in panel
    assert "Plus your own bounty, returned" in panel and 'data-part="bounty"' in panel
    assert "From the bounty money the entries paid" in panel


def test_the_statement_page_says_what_the_player_bought_and_their_bounty(
    as_operator, operator, load_case
):
    case = load_case(stage="middle", entrants=30, tournament_id="KO-S", rebuys=True)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    url = reverse("settlement_statement", args=[settlement.pk]) + "?player=p000001"
    html = assert_full_page(as_operator.get(url))
    assert "You bought in twice and took one add-on: 30.00 USD back first" in html
    assert "Your own bounty of 10.00 USD is paid back to you as well" in html


def test_the_players_page_names_a_bounty_by_where_it_comes_from(
    as_operator, operator, tournament_manager, load_case
):
    case = load_case(stage="middle", entrants=30, tournament_id="KO-P", rebuys=True)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=tournament_manager)
    html = assert_full_page(as_operator.get(reverse("players"), {"q": "p000001"}))
    # A bounty is not prize money: never called "pool".
    assert 'data-source="bounty">from the bounty money the entries paid</span>' in html
    assert 'data-source="pool">from the prize pool</span>' in html
    partial = assert_partial(
        as_operator.get(reverse("players"), {"q": "p000001"}, **HTMX), "player-results"
    )
    assert 'data-source="bounty"' in partial
