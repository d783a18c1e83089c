"""The review's kept payout rows are never shown after a change that alters them.

A page's rows are kept in the shared cache once drawn (views.settlement_review._payout_rows).
Each test views a page, changes something, and expects the next view to show what a view with
an empty cache shows.
"""

import pytest
from django.core.cache import cache
from django.urls import reverse

from settlements import services
from settlements.models import Settlement
from settlements.views import settlement_review

pytestmark = pytest.mark.django_db


def _table(client, url: str) -> str:
    html = client.get(url).content.decode()
    return html[html.index('<table class="table" id="payouts-table">') : html.index("<tfoot>")]


def _fresh(client, url: str) -> str:
    cache.clear()
    return _table(client, url)


@pytest.fixture
def settlement(operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-FRESH", entrants=120)
    return services.settlement_prepare(case=case, actor=operator)


def test_the_workflow_moves_leave_the_rows_as_a_fresh_view_draws_them(
    settlement, as_manager, operator, tournament_manager
):
    url = reverse("settlement_review", args=[settlement.pk])
    kept = _table(as_manager, url)
    services.settlement_submit(settlement=settlement, actor=operator)
    assert _table(as_manager, url) == kept == _fresh(as_manager, url)
    services.settlement_approve(settlement=settlement, actor=tournament_manager, reason="ok")
    html = as_manager.get(url).content.decode()
    assert "Approved: final and ready to pay" in html
    assert _table(as_manager, url) == _fresh(as_manager, url)


def test_a_correction_of_the_settlements_figures_shows_at_once(settlement, as_operator):
    """The figures the rows are drawn with are read with the settlement on every view: a
    change made outside the services (a shell, a data migration) is in the key at once."""
    url = reverse("settlement_review", args=[settlement.pk])
    before = _table(as_operator, url)
    assert 'data-part="guaranteed"' in before
    # Without its basis the settlement's rows show no parts.
    Settlement.objects.filter(pk=settlement.pk).update(basis={})
    after = _table(as_operator, url)
    assert 'data-part="guaranteed"' not in after
    assert after == _fresh(as_operator, url)


def test_the_row_of_the_player_explained_is_marked_and_unmarked(settlement, as_operator):
    url = reverse("settlement_review", args=[settlement.pk])
    plain = _table(as_operator, url)
    marked = _table(as_operator, f"{url}?player=p000002")
    assert 'aria-current="true"' not in plain
    assert marked.count('aria-current="true"') == 1
    assert _table(as_operator, url) == plain
    # An id that is not an entrant marks nothing.
    assert _table(as_operator, f"{url}?player=nobody") == plain


def test_rows_kept_by_other_code_are_not_shown(settlement, as_operator, monkeypatch):
    """The cache is in the database and outlives a deployment: rows drawn by another release
    (another template or formatting code) are not read by this one."""
    url = reverse("settlement_review", args=[settlement.pk])
    _table(as_operator, url)
    monkeypatch.setattr(settlement_review, "_rows_code", lambda: "another release")
    monkeypatch.setattr(
        settlement_review,
        "_draw_rows",
        lambda *args, **kwargs: "<tr><td>drawn by this release</td></tr>",
    )
    assert "drawn by this release" in _table(as_operator, url)


def test_the_code_digest_covers_the_row_template(monkeypatch):
    digest = settlement_review._rows_code()
    assert settlement_review._rows_code() == digest
    monkeypatch.setattr(settlement_review, "_rows_code_digest", {})
    template = settlement_review.get_template(settlement_review.TEMPLATE).template
    monkeypatch.setattr(template, "source", template.source + "<!-- changed -->")
    assert settlement_review._rows_code() != digest
