"""The review's cached fragments are never shown after a change that alters them.

A page of the payouts table and the payout chart are kept in the "pages" cache once drawn
({% cache %} in settlement_review.html), keyed by the settlement and when it was prepared. Each
test views a page, changes something, and
expects the next view to show what a view with an empty cache shows.
"""

import pytest
from django.core.cache import caches
from django.urls import reverse
from django.utils import timezone

from settlements.models import Settlement
from settlements.selectors import previews
from settlements.services import settlements as settlement_services
from settlements.templatetags.timezones import when
from settlements.views import settlement_review
from tests.conftest import clear_caches

pytestmark = pytest.mark.django_db


def _table(client, url: str) -> str:
    html = client.get(url).content.decode()
    return html[html.index('<table class="table" id="payouts-table">') : html.index("<tfoot>")]


def _fresh(client, url: str) -> str:
    clear_caches()
    return _table(client, url)


@pytest.fixture
def settlement(operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-FRESH", entrants=120)
    return settlement_services.settlement_prepare(case=case, actor=operator)


def test_the_workflow_moves_leave_the_rows_as_a_fresh_view_draws_them(
    settlement, as_manager, operator, tournament_manager
):
    url = reverse("settlement_review", args=[settlement.pk])
    kept = _table(as_manager, url)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    assert _table(as_manager, url) == kept == _fresh(as_manager, url)
    settlement_services.settlement_approve(
        settlement=settlement, actor=tournament_manager, reason="ok"
    )
    html = as_manager.get(url).content.decode()
    assert "Approved: final and ready to pay" in html
    assert _table(as_manager, url) == _fresh(as_manager, url)


def test_a_correction_of_the_settlements_figures_shows_at_once(settlement, as_operator):
    """A change made outside the services with save() (a shell): the next view shows it."""
    url = reverse("settlement_review", args=[settlement.pk])
    before = _table(as_operator, url)
    assert 'data-part="guaranteed"' in before
    # Without its basis the settlement's rows show no parts.
    settlement.refresh_from_db()
    settlement.basis = {}
    settlement.save()
    after = _table(as_operator, url)
    assert 'data-part="guaranteed"' not in after
    assert after == _fresh(as_operator, url)


def test_an_update_that_writes_no_version_shows_at_once(settlement, as_operator):
    """SQL that bypasses the models writes no version: the review shows it on the next view."""
    url = reverse("settlement_review", args=[settlement.pk])
    _table(as_operator, url)
    Settlement.objects.filter(pk=settlement.pk).update(basis={})
    assert 'data-part="guaranteed"' not in _table(as_operator, url)


def test_the_row_of_the_player_explained_is_marked_and_unmarked(settlement, as_operator):
    url = reverse("settlement_review", args=[settlement.pk])
    plain = _table(as_operator, url)
    marked = _table(as_operator, f"{url}?player=p000002")
    assert 'aria-current="true"' not in plain
    assert marked.count('aria-current="true"') == 1
    assert _table(as_operator, url) == plain
    # An id that is not an entrant marks nothing.
    assert _table(as_operator, f"{url}?player=nobody") == plain


def test_rows_kept_by_another_release_are_not_shown(settlement, as_operator, settings, monkeypatch):
    """The cache is in the database and outlives a deployment: a table drawn by another
    release (other templates or formatting code) is not read by this one."""
    url = reverse("settlement_review", args=[settlement.pk])
    kept = _table(as_operator, url)
    settings.CODE_RELEASE = "another release"
    monkeypatch.setattr(settlement_review, "_name_parts", lambda settlement, rows: ("Drawn now",))
    assert "Drawn now" in _table(as_operator, url)
    assert kept != _table(as_operator, url)


def _chart(client, url: str) -> str:
    html = client.get(url).content.decode()
    return html[html.index('id="chart-title"') : html.index("</figure>")]


def _rankings(client, url: str, monkeypatch) -> int:
    """How many times one view of ``url`` ranked the settlement's payouts for its chart."""
    ranked = []
    rank = previews.settlement_payout_curve
    monkeypatch.setattr(
        previews,
        "settlement_payout_curve",
        lambda settlement: ranked.append(settlement.pk) or rank(settlement),
    )
    html = client.get(url).content.decode()
    assert 'id="chart-title"' in html
    return len(ranked)


def test_the_chart_is_ranked_once_then_read(settlement, as_operator, as_auditor, monkeypatch):
    url = reverse("settlement_review", args=[settlement.pk])
    assert _rankings(as_operator, url, monkeypatch) == 1
    # Another user, another page of payouts: the chart is the same.
    assert _rankings(as_auditor, f"{url}?page=2", monkeypatch) == 0


def test_another_process_reads_the_chart_from_the_shared_cache(
    settlement, as_operator, monkeypatch
):
    """The chart's fragment lives in each process's memory; its figures in the shared cache,
    so a process that has not drawn it (or a worker recycled since) ranks nothing again."""
    url = reverse("settlement_review", args=[settlement.pk])
    first = _chart(as_operator, url)
    assert _rankings(as_operator, url, monkeypatch) == 0
    caches["pages"].clear()
    assert _rankings(as_operator, url, monkeypatch) == 0
    assert _chart(as_operator, url) == first


def _summary(client, url: str) -> str:
    html = client.get(url).content.decode()
    return html[html.index('<div class="page-head">') : html.index('id="settlement-actions"')]


def test_the_kept_summary_shows_each_step_at_once(settlement, as_manager, operator):
    url = reverse("settlement_review", args=[settlement.pk])
    assert "<dt>Submitted</dt>" not in _summary(as_manager, url)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    kept = _summary(as_manager, url)
    assert f"<dt>Submitted</dt><dd>by {operator.username}," in kept
    assert kept == _summary(as_manager, url)
    clear_caches()
    assert _summary(as_manager, url) == kept


def test_the_kept_summary_is_written_in_each_readers_zone(settlement, as_manager, as_auditor):
    url = reverse("settlement_review", args=[settlement.pk])
    as_auditor.post(reverse("user_settings"), {"time_zone": "Asia/Tokyo"})
    settlement.refresh_from_db()
    with timezone.override("UTC"):
        in_utc = f"by {settlement.prepared_by.username}, {when(settlement.prepared_at)}"
    with timezone.override("Asia/Tokyo"):
        in_tokyo = f"by {settlement.prepared_by.username}, {when(settlement.prepared_at)}"
    assert in_utc in _summary(as_manager, url)
    assert in_tokyo in _summary(as_auditor, url)
    assert in_utc in _summary(as_manager, url)


def _pages_status(client, url: str, **query) -> str:
    html = client.get(url, query).content.decode()
    start = html.index('<span class="pagination__status"')
    return html[start : html.index("</span>", start)]


def test_the_kept_page_links_follow_the_query(settlement, as_operator):
    """The links to other pages are kept by the query: a search or another page is its own."""
    url = reverse("settlement_review", args=[settlement.pk])
    count = settlement.payout_count
    assert count > settlement_review.PAYOUTS_PER_PAGE
    everyone = f"· {count} players"
    assert _pages_status(as_operator, url).endswith(f"Page 1 of 2 {everyone}")
    assert _pages_status(as_operator, url, page=2).endswith(f"Page 2 of 2 {everyone}")
    assert _pages_status(as_operator, url, page=2, sort="amount").endswith(
        f"Page 2 of 2 {everyone}"
    )
    html = as_operator.get(url, {"q": "player-0001"}).content.decode()
    assert 'class="pagination"' not in html
    assert _pages_status(as_operator, url).endswith(f"Page 1 of 2 {everyone}")
