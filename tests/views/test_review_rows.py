"""The settlement review links each payout row without reversing a URL per row."""

from unittest import mock
from urllib.parse import quote

import pytest
from django.urls import reverse
from django.urls.resolvers import URLResolver

from settlements import services

pytestmark = pytest.mark.django_db


def _reversals(client, url: str) -> tuple[int, str]:
    real = URLResolver._reverse_with_prefix
    calls = []

    def counting(self, *args, **kwargs):
        calls.append(args[0])
        return real(self, *args, **kwargs)

    with mock.patch.object(URLResolver, "_reverse_with_prefix", counting):
        response = client.get(url)
    assert response.status_code == 200
    return len(calls), response.content.decode()


def test_a_page_of_payouts_reverses_no_url_per_row(as_operator, operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-ROWS", entrants=200)
    settlement = services.settlement_prepare(case=case, actor=operator)
    payouts = list(settlement.payouts.order_by("position")[:50])
    assert len(payouts) == 50
    url = reverse("settlement_review", args=[settlement.pk])

    as_operator.get(url)  # what is reversed once per process (the navigation) is done
    full, html = _reversals(as_operator, url)
    one, _ = _reversals(as_operator, f"{url}?q={quote(payouts[7].player)}")

    # Fifty rows reverse no more URLs than a search that finds one row.
    assert full <= one, (full, one)
    for payout in payouts:
        link = f"?q=&amp;page=1&amp;player={quote(payout.player, safe='/')}"
        assert html.count(f'href="{link}" hx-get="{link}"') == 1


def test_player_ids_are_not_an_include_per_row(as_operator, operator, load_case):
    from django.test.signals import template_rendered

    from settlements.templatetags.players import PLAYER_ID_TEMPLATE

    case = load_case(type="regular", stage="middle", tournament_id="T-IDS", entrants=200)
    settlement = services.settlement_prepare(case=case, actor=operator)
    url = reverse("settlement_review", args=[settlement.pk])
    as_operator.get(url)
    rendered = []

    def seen(sender, template, **kwargs):
        rendered.append(template.name)

    template_rendered.connect(seen)
    try:
        html = as_operator.get(url).content.decode()
    finally:
        template_rendered.disconnect(seen)
    assert html.count('<span class="player-id">') == 50
    assert rendered.count(PLAYER_ID_TEMPLATE) == 0


@pytest.mark.parametrize(
    "player", ["p000001", "<b>&'\"", "pIayer-1", "p\u0430yer", "zero\u200bwidth", "x" * 60]
)
def test_a_player_id_reads_as_its_include_renders_it(player):
    from django.template.loader import get_template

    from settlements import player_ids
    from settlements.templatetags.players import PLAYER_ID_TEMPLATE, player_id

    expected = get_template(PLAYER_ID_TEMPLATE).render(
        {"player": player, "escaped": player_ids.escaped(player)}
    )
    assert player_id(player) == expected
    assert player_id(player) == expected  # the second from the split kept
