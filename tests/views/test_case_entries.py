"""The case page of a rebuy knock-out tournament (crash-snapshot/2): its entries, add-ons and
bounties; a version 1 case shows none of it."""

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from settlements.access import permissions, roles
from settlements.demo import build_snapshot
from settlements.services.settlements import settlement_prepare
from settlements.services.snapshots import case_load_snapshot
from tests.views.conftest import HTMX, assert_full_page, assert_partial, signed_in

pytestmark = pytest.mark.django_db


def test_a_rebuy_knock_out_case_shows_its_entries_add_ons_and_bounties(as_operator, load_case):
    # 30 entrants: every third rebought (10 rebuys), every fifth took an add-on (6); 40 entries
    # paid 5.00 each for bounties, and the 15 players still in hold 10.00 each (their own and
    # the bounty of one player they knocked out).
    case = load_case(stage="middle", entrants=30, tournament_id="KO-30", rebuys=True)
    html = assert_full_page(as_operator.get(reverse("case_detail", args=[case.pk])))
    assert "Rebuys, add-ons and bounties" in html
    for label, value in [
        ("Entries paid", "40"),
        ("Rebuys and re-entries", "10 by 10 players"),
        ("Add-ons", "6"),
        ("Bounty money paid in", "200.00 USD"),
        ("Bounties of the players still in", "150.00 USD"),
    ]:
        assert f"<dt>{label}</dt><dd>{value}</dd>" in html
    assert "<dt>Bounty in every entry</dt>" in html and "<dt>Add-on + fee</dt>" in html


def test_a_version_1_case_shows_no_rebuy_figures(as_operator, load_case):
    case = load_case(stage="middle", entrants=30)
    html = assert_full_page(as_operator.get(reverse("case_detail", args=[case.pk])))
    assert "Rebuys, add-ons and bounties" not in html
    assert "Bounty in every entry" not in html


# --- Each player's entries --------------------------------------------------------------------
#
# A rebuy knock-out of 120 entrants (settlements.demo): p000001 … p000120 in snapshot order,
# every third (p000001, p000004, …) with two entries, every fifth (p000001, p000006, …) with an
# add-on; at the middle stage the first players hold chips and a bounty of 5.00 or 10.00.


@pytest.fixture
def knock_out(load_case):
    return load_case(stage="middle", entrants=120, tournament_id="KO-120", rebuys=True)


def case_url(case) -> str:
    return reverse("case_detail", args=[case.pk])


def entrants_of(html: str) -> list[str]:
    """The player ids of the entrants table's rows, in order."""
    table = html.split('id="entrants-table"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<span class="mono">(p\d{6})</span>', table)


def entrants_partial(client, case, **query) -> str:
    response = client.get(case_url(case), query, **HTMX, HTTP_HX_TARGET="case-entrants")
    assert response.status_code == 200
    html = assert_partial(response, "case-entrants")
    assert 'id="entrants-title"' not in html and "Rebuys, add-ons and bounties" not in html
    return html


def test_the_case_page_lists_each_entrant_with_what_they_bought(as_operator, knock_out):
    html = assert_full_page(as_operator.get(case_url(knock_out)))
    assert "Each player’s entries" in html
    assert entrants_of(html) == [f"p{n:06d}" for n in range(1, 51)]
    assert "Page 1 of 3 · 120 entrants" in html
    row = html.split('<span class="mono">p000001</span>', 1)[1].split("</tr>", 1)[0]
    # p000001: still in, two entries, one add-on, the bounty of one player besides their own.
    cells = re.findall(r'<td class="num">([^<]*)</td>', row)
    assert cells[1:] == ["2", "1", "10.00 USD"]
    assert row.rstrip().endswith("<td>Still in</td>")
    # The players still in come first in the snapshot; the next one was knocked out.
    first_out = f"p{knock_out.remaining + 1:06d}"
    out = entrants_partial(as_operator, knock_out, entrants_q=first_out)
    row = out.split(f'<span class="mono">{first_out}</span>', 1)[1].split("</tr>", 1)[0]
    assert row.rstrip().endswith("<td>Eliminated</td>")
    # The wide table scrolls in its own named box, reachable by keyboard.
    box = '<div class="table-wrap" tabindex="0" role="region" aria-label="Entries of each player">'
    assert box in html


def test_the_entrants_list_pages_in_place(as_operator, knock_out):
    html = entrants_partial(as_operator, knock_out, entrants_page="3")
    assert entrants_of(html) == [f"p{n:06d}" for n in range(101, 121)]
    assert "Page 3 of 3 · 120 entrants" in html
    assert 'id="case-entrants-previous"' in html and "data-announce" in html
    # The page links keep the list's other parameters and leave the page's others alone.
    sorted_page = entrants_partial(
        as_operator, knock_out, entrants_sort="-entries", invite_page="2"
    )
    assert "entrants_page=2" in sorted_page and "entrants_sort=-entries" in sorted_page


@pytest.mark.parametrize("page", ["4", "999999999999999999999", "abc", "-1", "0", "²"])
def test_a_page_of_entrants_out_of_range_answers_a_page(as_operator, knock_out, page):
    html = entrants_partial(as_operator, knock_out, entrants_page=page)
    # Past the last page is the last; what is no page number at all is the first.
    expected = 3 if page == "4" else 1
    assert f"Page {expected} of 3" in html


def test_the_entrants_sort_by_a_column_kept_in_the_url(as_operator, knock_out):
    html = entrants_partial(as_operator, knock_out, entrants_sort="-entries")
    # Two entries first, the snapshot's order among them; then those with one.
    assert entrants_of(html)[:3] == ["p000001", "p000004", "p000007"]
    assert '<th scope="col" aria-sort="descending"><a id="sort-entries"' in html
    assert "120 entrants by entries, largest first." in html
    # A second click turns the order round; a count's first click puts the most first.
    assert 'href="?entrants_sort=entries"' in html
    assert 'href="?entrants_sort=-add_ons"' in html and 'href="?entrants_sort=player"' in html
    fewest = entrants_of(entrants_partial(as_operator, knock_out, entrants_sort="entries"))
    assert fewest[:2] == ["p000002", "p000003"]
    by_bounty = entrants_of(entrants_partial(as_operator, knock_out, entrants_sort="-bounty"))
    assert by_bounty[0] == "p000001"
    last_first = entrants_partial(as_operator, knock_out, entrants_sort="-player")
    assert entrants_of(last_first)[0] == "p000120"
    assert "120 entrants by player id, last first." in last_first
    smallest = entrants_partial(as_operator, knock_out, entrants_sort="chips")
    assert "120 entrants by chips, smallest first." in smallest


@pytest.mark.parametrize("sort", ["junk", "-", "case_id", "--entries", "position;drop"])
def test_a_sort_the_list_does_not_know_is_the_snapshot_order(as_operator, knock_out, sort):
    html = entrants_partial(as_operator, knock_out, entrants_sort=sort)
    assert entrants_of(html)[:2] == ["p000001", "p000002"]
    assert "120 entrants in the snapshot’s order." in html
    assert '<th scope="col" aria-sort="ascending"><a id="sort-position"' in html


def test_a_player_is_found_by_their_whole_id_or_how_it_starts(as_operator, knock_out):
    exact = entrants_partial(as_operator, knock_out, entrants_q="p000042")
    assert entrants_of(exact) == ["p000042"]
    assert "1 entrant whose id is or starts with “p000042”." in exact
    prefix = entrants_partial(as_operator, knock_out, entrants_q=" p00011 ")
    assert entrants_of(prefix) == [f"p{n:06d}" for n in range(110, 120)]
    # Part of an id from its middle is not how the desk's player searches match.
    missing = entrants_partial(as_operator, knock_out, entrants_q="000042")
    assert "No entrant’s id is or starts with “000042”." in missing
    assert 'id="entrants-table"' not in missing
    # The search and the sort together, the search kept by the sort's links.
    both = entrants_partial(as_operator, knock_out, entrants_q="p00001", entrants_sort="-entries")
    assert entrants_of(both)[:2] == ["p000010", "p000013"]
    assert "entrants_q=p00001" in both


def test_a_search_longer_than_any_player_id_is_answered_without_a_read(as_operator, knock_out):
    with CaptureQueriesContext(connection) as queries:
        html = entrants_partial(as_operator, knock_out, entrants_q="p" * 201)
    assert not any("settlements_caseplayer" in q["sql"] for q in queries)
    assert "A player id has at most 200 characters. No entrant matches." in html
    assert 'id="entrants-table"' not in html


def test_the_full_page_keeps_the_search_and_the_sort_in_its_form(as_operator, knock_out):
    url = case_url(knock_out)
    query = {"entrants_q": "p0001", "entrants_sort": "-chips"}
    html = assert_full_page(as_operator.get(url, query))
    assert 'name="entrants_q" value="p0001"' in html
    assert 'id="entrants-sort-kept" name="entrants_sort" value="-chips">' in html
    assert entrants_of(html)[0] == "p000100"


def test_the_entrants_list_reads_a_fixed_number_of_queries(as_operator, load_case):
    """As many queries for a page of 30 entrants as for a page of 50 out of 240, in each of
    the list's ways of reading (the snapshot's order, a sort, a search), on the whole page and
    in a swap of the list."""
    small = load_case(stage="middle", entrants=30, tournament_id="KO-S", rebuys=True)
    large = load_case(stage="middle", entrants=240, tournament_id="KO-L", rebuys=True)
    for query in ({}, {"entrants_sort": "-bounty"}, {"entrants_q": "p0000"}):
        for swap in (True, False):
            counts = []
            for case in (small, large):
                with CaptureQueriesContext(connection) as queries:
                    if swap:
                        entrants_partial(as_operator, case, **query)
                    else:
                        assert as_operator.get(case_url(case), query).status_code == 200
                counts.append(len(queries))
            assert counts[0] == counts[1], (query, swap)
    # The list's own reads: the page of rows, and the count of a search's matches; a swap of
    # the list reads none of the page's other figures (the totals, which sum every entrant).
    for query, reads in (({}, 1), ({"entrants_sort": "-bounty"}, 1), ({"entrants_q": "p0000"}, 2)):
        with CaptureQueriesContext(connection) as queries:
            entrants_partial(as_operator, large, **query)
        assert sum("settlements_caseplayer" in q["sql"] for q in queries) == reads, query


def test_who_may_not_see_amounts_sees_no_entrants(as_operator, knock_out, cashier, monkeypatch):
    client = signed_in(cashier)
    assert client.get(case_url(knock_out)).status_code == 403
    response = client.get(case_url(knock_out), **HTMX, HTTP_HX_TARGET="case-entrants")
    assert response.status_code == 403
    # The list asks the rule itself, whatever the page around it lets through.
    monkeypatch.setattr(permissions, "AMOUNT_READERS", (roles.AUDITOR,))
    html = assert_full_page(as_operator.get(case_url(knock_out)))
    assert "Rebuys, add-ons and bounties" in html and "Each player’s entries" not in html
    partial = as_operator.get(case_url(knock_out), **HTMX, HTTP_HX_TARGET="case-entrants")
    assert partial.status_code == 403 and b"p000001" not in partial.content


def test_every_desk_role_sees_the_entrants(knock_out, as_marketing, as_manager, as_auditor):
    for client in (as_marketing, as_manager, as_auditor):
        assert entrants_of(assert_full_page(client.get(case_url(knock_out))))[0] == "p000001"


def test_a_version_1_case_has_no_entrants_list(as_operator, load_case):
    case = load_case(stage="middle", entrants=30, tournament_id="V1-30")
    html = assert_full_page(as_operator.get(case_url(case), {"entrants_sort": "-entries"}))
    assert "Each player’s entries" not in html and "case-entrants" not in html
    partial = as_operator.get(case_url(case), **HTMX, HTTP_HX_TARGET="case-entrants")
    assert partial.status_code == 404 and b"p000001" not in partial.content


def test_a_tournament_without_add_ons_or_bounties_shows_neither_column(
    as_operator, operator, incident
):
    snapshot = build_snapshot(stage="middle", entrants=20, tournament_id="RB-20", rebuys=True)
    del snapshot["tournament"]["add_on"], snapshot["tournament"]["add_on_fee"]
    snapshot["tournament"]["entry_bounty"] = 0
    for player in snapshot["players"]:
        player.pop("add_ons", None)
        player["bounty"] = 0
    pool = sum(player.get("entries", 1) for player in snapshot["players"]) * 1000
    snapshot["tournament"]["payouts"] = [pool // 2, pool // 4, pool - pool // 2 - pool // 4]
    case = case_load_snapshot(
        actor=operator, snapshot=json.dumps(snapshot).encode(), incident=incident
    )
    html = entrants_partial(as_operator, case)
    assert "sort-entries" in html and "sort-add_ons" not in html and "sort-bounty" not in html
    # A sort by a column the tournament lacks is no sort it knows.
    assert entrants_of(entrants_partial(as_operator, case, entrants_sort="-bounty"))[0] == "p000001"


def test_preparing_and_its_settlement_sit_above_the_entrants(as_operator, load_case):
    # A long list of entrants must not push the action, nor its result, to the page's foot.
    case = load_case(stage="middle", entrants=60, tournament_id="KO-60", rebuys=True)
    html = assert_full_page(as_operator.get(case_url(case)))
    assert html.index("Prepare the settlement</button>") < html.index('id="entrants-table"')

    as_operator.post(reverse("case_prepare", args=[case.pk]))
    settlement = case.settlements.get()
    html = assert_full_page(as_operator.get(case_url(case)))
    link = reverse("settlement_review", args=[settlement.pk])
    assert html.index(f'href="{link}"') < html.index('id="entrants-table"')


def _words(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html)


def test_bounties_are_named_in_plain_words_not_by_a_head(as_operator, operator, knock_out):
    # "The bounty on their head" is jargon to a new desk hand and to a player reading along.
    settlement_prepare(case=knock_out, actor=operator)
    settlement = knock_out.settlements.get()
    pages = [
        case_url(knock_out),
        reverse("policy"),
        reverse("settlement_player", args=[settlement.pk]) + "?player=p000001",
    ]
    for url in pages:
        words = _words(assert_full_page(as_operator.get(url)))
        assert not re.search(r"\bheads?\b", words, re.I), url
    assert "the bounty others could have won by knocking them out" in _words(
        as_operator.get(case_url(knock_out)).content.decode()
    )
