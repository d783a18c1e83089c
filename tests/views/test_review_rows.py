"""The settlement review's payout rows: drawn without a URL reversed per row, and, once drawn,
read from the shared cache instead of drawn again.

The table is a cached fragment ({% cache %} in settlement_review.html), so the tests that count
the work of drawing it clear the cache first: they measure a first view.
"""

from unittest import mock
from urllib.parse import quote

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.urls.resolvers import URLResolver

from settlements.models import SettlementPayout
from settlements.services.settlements import settlement_prepare
from settlements.views import settlement_review as review
from tests.conftest import clear_caches

pytestmark = pytest.mark.django_db


def _reversals(client, url: str) -> tuple[int, str]:
    real = URLResolver._reverse_with_prefix
    calls = []

    def counting(self, *args, **kwargs):
        calls.append(args[0])
        return real(self, *args, **kwargs)

    clear_caches()
    with mock.patch.object(URLResolver, "_reverse_with_prefix", counting):
        response = client.get(url)
    assert response.status_code == 200
    return len(calls), response.content.decode()


def test_a_page_of_payouts_reverses_no_url_per_row(as_operator, operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-ROWS", entrants=200)
    settlement = settlement_prepare(case=case, actor=operator)
    payouts = list(settlement.payouts.order_by("position")[:50])
    assert len(payouts) == 50
    url = reverse("settlement_review", args=[settlement.pk])

    full, html = _reversals(as_operator, url)
    one, _ = _reversals(as_operator, f"{url}?q={quote(payouts[7].player)}")

    # Fifty rows reverse no more URLs than a search that finds one row.
    assert full <= one, (full, one)
    for payout in payouts:
        link = f"?q=&amp;page=1&amp;player={quote(payout.player, safe='/')}"
        assert html.count(f'href="{link}" hx-get="{link}"') == 1


def test_a_page_of_rows_is_drawn_once_then_read(as_operator, as_auditor, operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-KEEP", entrants=200)
    settlement = settlement_prepare(case=case, actor=operator)
    url = reverse("settlement_review", args=[settlement.pk]) + "?page=2"
    payouts = SettlementPayout._meta.db_table
    as_operator.get(f"{url}&q=p00019")  # the chart, drawn once for every page

    first, html = _drawn(as_operator, url)
    # Another user, with other roles, is shown the same rows without their being drawn or the
    # payouts read.
    with CaptureQueriesContext(connection) as queries:
        later, again = _drawn(as_auditor, url)
    assert (first, later) == (1, 0)
    assert not [query for query in queries if payouts in query["sql"]]
    assert _table(again) == _table(html)
    assert _table(html).count('<td class="num" data-part="share">') == 50

    # The same page searched, or another page, is drawn anew.
    for other in (f"{url}&q=p0000", url.replace("page=2", "page=1")):
        drawn, _ = _drawn(as_operator, other)
        assert drawn == 1, other


def _drawn(client, url: str) -> tuple[int, str]:
    """How many times a page of payout rows was drawn for one view of ``url``, and the page."""
    with mock.patch.object(review, "_payout_table", wraps=review._payout_table) as draw:
        html = client.get(url).content.decode()
    return draw.call_count, html


def _table(html: str) -> str:
    """The payouts table, head and rows, without the totals under them."""
    return html[html.index('<table class="table" id="payouts-table">') : html.index("<tfoot>")]
