"""The players page and the statements never show an answer older than the data.

Each test views a page, changes what it shows, and expects the next view to show what a view
with an empty cache shows (they were once kept under a desk-wide mark; these guard that nothing
cached in their place goes stale).
"""

import pytest
from django.urls import reverse

from settlements.access import roles
from settlements.models import Tournament
from settlements.services import settlements as settlement_services
from settlements.services.settlements import AdjustmentEntry
from tests.conftest import clear_caches
from tests.payment_helpers import answer, paid_out

pytestmark = pytest.mark.django_db


def _main(client, url: str, params: dict) -> str:
    html = client.get(url, params).content.decode()
    return html[html.index("<main") : html.index("</main>")]


def _fresh(client, url: str, params: dict) -> str:
    clear_caches()
    return _main(client, url, params)


@pytest.fixture
def out(users, load_case):
    case = load_case(stage="middle", tournament_id="KEPT-1")
    settlement = settlement_services.settlement_prepare(case=case, actor=users[roles.OPERATOR])
    settlement_services.settlement_submit(settlement=settlement, actor=users[roles.OPERATOR])
    settlement_services.settlement_approve(
        settlement=settlement, actor=users[roles.TOURNAMENT_MANAGER], reason="checked"
    )
    return paid_out(settlement, users)


@pytest.mark.parametrize("page", ["players", "settlement_statement"])
def test_a_payment_confirmed_shows_on_the_very_next_view(page, out, users, as_auditor):
    line = out.unconfirmed
    if page == "players":
        url, params = reverse("players"), {"q": line.player}
    else:
        url, params = reverse(page, args=[out.settlement.pk]), {"player": line.player}
    before = _main(as_auditor, url, params)
    assert _main(as_auditor, url, params) == before
    assert 'data-payment="unconfirmed"' in before and 'data-payment="paid"' not in before

    answer(users["cashier"], line, "paid", "TX-LATE")
    after = _main(as_auditor, url, params)
    assert 'data-payment="paid"' in after and "wallet reference TX-LATE" in after
    assert after == _fresh(as_auditor, url, params)


def test_an_adjustment_shows_on_the_players_page_and_the_statement_at_once(out, users, as_auditor):
    player = out.paid.player
    players = (reverse("players"), {"q": player})
    statement = (reverse("settlement_statement", args=[out.settlement.pk]), {"player": player})
    before = [_main(as_auditor, *page) for page in (players, statement)]
    assert all("Adjustment" not in html for html in before)

    settlement_services.settlement_adjust(
        settlement=out.settlement,
        actor=users[roles.OPERATOR],
        reason="late chip count",
        entries=[AdjustmentEntry(player, "prize", "cash", 150, "pool")],
    )
    after = [_main(as_auditor, *page) for page in (players, statement)]
    assert all("Adjustment" in html for html in after)
    assert after == [_fresh(as_auditor, *page) for page in (players, statement)]


def test_a_statement_shows_a_correction_made_outside_the_services_at_once(out, as_auditor):
    """A shell's save() of the tournament writes a version, which moves the mark the
    settlement and the statement are kept under (views.kept)."""
    url = reverse("settlement_statement", args=[out.settlement.pk])
    params = {"player": out.paid.player}
    before = _main(as_auditor, url, params)
    tournament = Tournament.objects.get(pk=out.settlement.case.tournament_id)
    tournament.name = "Renamed Open"
    tournament.save()
    after = _main(as_auditor, url, params)
    assert "Renamed Open" in after and after != before
    assert after == _fresh(as_auditor, url, params)


def test_sql_that_writes_no_version_shows_at_once(out, as_auditor):
    url = reverse("settlement_statement", args=[out.settlement.pk])
    params = {"player": out.paid.player}
    _main(as_auditor, url, params)
    Tournament.objects.filter(pk=out.settlement.case.tournament_id).update(name="Renamed Open")
    assert "Renamed Open" in _main(as_auditor, url, params)


def test_each_page_of_a_players_cases_and_each_search_is_its_own_entry(out, as_auditor):
    player = out.paid.player
    exact = _main(as_auditor, reverse("players"), {"q": player})
    prefix = _main(as_auditor, reverse("players"), {"q": player[:-1]})
    assert exact != prefix
    assert "No player has exactly this id" in prefix
    assert _main(as_auditor, reverse("players"), {"q": player, "page": "2"}) != exact


def test_the_players_page_shows_an_edit_of_a_case_made_outside_the_services(out, as_auditor):
    case = out.settlement.case
    url, params = reverse("players"), {"q": out.paid.player}
    before = _main(as_auditor, url, params)
    assert 'data-stage="late"' not in before
    case.stage = "late"
    case.save()
    after = _main(as_auditor, url, params)
    assert 'data-stage="late"' in after
    assert after == _fresh(as_auditor, url, params)
