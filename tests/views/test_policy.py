"""The crash policy page: open to every role, built from the engine (thresholds in force, the
twelve cells in the shared wording, the worked example settled while the page renders)."""

import html as html_lib
import json
import re
from datetime import timedelta

import pgtrigger
import pytest
from django.urls import reverse
from django.utils import timezone

from settlements import wording
from settlements.models import Rulebook, RulebookVersion
from settlements.money import format_minor_units
from settlements.rules import Policy, parse_snapshot, settle
from settlements.rules.snapshot import MAX_AMOUNT, MAX_CHIPS
from tests.views.conftest import assert_full_page, signed_in

pytestmark = pytest.mark.django_db

ROLE_FIXTURES = ("operator", "marketing_manager", "tournament_manager", "auditor")

# RULES.md §7, written out here independently of the page's own copy.
SECTION_7 = {
    "format": "crash-snapshot/1",
    "tournament": {
        "id": "CHECK",
        "type": "regular",
        "currency": "USD",
        "buy_in": 1000,
        "fee": 100,
        "payouts": [5000, 3000, 2000],
    },
    "players": [{"id": "a", "chips": 60000}, {"id": "b", "chips": 30000}]
    + [{"id": "c", "chips": 10000}]
    + [{"id": f"out{n}", "chips": 0} for n in range(7)],
}


def page(client) -> str:
    return assert_full_page(client.get(reverse("policy")))


def text(html: str) -> str:
    """The page's words, without tags, entities or repeated white space."""
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", html)))


def paid(html: str, table_id: str) -> dict[str, str]:
    """Player -> amount shown in the Paid column of one example table."""
    table = html[html.index(f'id="{table_id}"') :]
    table = table[: table.index("</table>")]
    return dict(re.findall(r'data-paid="([^"]+)">([^<]+)<', table))


@pytest.fixture
def as_anyone(request):
    return signed_in(request.getfixturevalue(request.param))


@pytest.mark.parametrize("as_anyone", ROLE_FIXTURES, indirect=True)
def test_every_role_reads_the_page_and_finds_it_in_the_navigation(as_anyone):
    html = page(as_anyone)
    assert "<h1>Crash policy</h1>" in html
    assert f'<a href="{reverse("policy")}" aria-current="page">Crash policy</a>' in html


def test_anonymous_visitors_are_sent_to_sign_in(client):
    response = client.get(reverse("policy"))
    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next={reverse('policy')}"


def test_a_user_without_a_role_is_refused(as_nobody):
    assert as_nobody.get(reverse("policy")).status_code == 403


def test_the_page_has_every_section_the_navigation_box_links_to(as_auditor):
    html = page(as_auditor)
    for anchor in re.findall(r'<li><a href="#([a-z-]+)"', html):
        assert f'id="{anchor}"' in html, anchor
    for section in ("in-force", "stages", "cells", "formulas", "example", "rounding"):
        assert f'id="{section}"' in html
    for section in ("tickets", "decisions", "readings", "engine-choices"):
        assert f'id="{section}"' in html


def test_the_thresholds_in_force_and_the_late_formula_are_shown(as_auditor):
    html = page(as_auditor)
    words = text(html)
    assert "Pre-stage mark 5 %" in words and "Early-stage mark 25 %" in words
    assert "Late-stage split Chip equity split" in words
    assert "fewer than 5 % of the entrants had been knocked out" in words
    assert "exactly 5 % of the entrants already makes it the early stage" in words
    assert "exactly 25 % the middle stage" in words
    assert "Each case keeps the version in force when its tournament started" in words
    # At the published defaults there is nothing to compare them with.
    assert "published" not in text(section(html, "in-force"))


def test_the_page_follows_the_default_rulebook_rather_than_fixed_numbers(as_auditor):
    first = RulebookVersion.objects.get(rulebook__key="default", number=1)
    # As the migration records a version (past the workflow's guard, as the tables' owner):
    # one in force now needs no approval ahead of it.
    with pgtrigger.ignore("settlements.RulebookVersion:follows_workflow"):
        _in_force_now(first)
    html = page(as_auditor)
    assert "rulebook default, version 2" in text(html)
    words = text(html)
    assert "Pre-stage mark 7 % (published: 5 %)" in words
    assert "Early-stage mark 30 % (published: 25 %)" in words
    assert "fewer than 7 % of the entrants" in words and "fewer than 30 % of the entrants" in words
    assert "Late-stage split Chip position split (published: chip equity split)" in words
    # The example is settled by the site's formula first, and the other one after it.
    assert html.index('id="example-chip_position"') < html.index('id="example-chip_equity"')
    assert "If the site chose the chip equity split instead" in words


def test_each_of_the_twelve_cells_has_its_section_in_the_shared_wording(as_auditor):
    html = page(as_auditor)
    for kind in ("regular", "freeroll", "satellite"):
        for stage in ("pre", "early", "middle", "late"):
            anchor = wording.policy_anchor(kind, stage)
            assert f'href="#{anchor}"' in html  # from the summary table
            assert f'<section class="panel" id="{anchor}"' in html
    cell = section(html, "cell-satellite-middle")
    for option in ("chip_proportional", "chip_equity"):
        assert wording.option_description("satellite", "middle", option) in text(cell)
    assert "The Marketing Manager chooses one option" in text(cell)
    cell = text(section(html, "cell-regular-middle"))
    assert wording.describe("regular", "middle", "chip_equity") in cell
    assert "Marketing Manager" not in cell
    late = text(section(html, "cell-freeroll-late"))
    assert wording.describe("freeroll", "late", "chip_equity") in late
    assert "If the site chose the chip position split instead" in late
    assert wording.describe("freeroll", "late", "chip_position") in late


def section(html: str, anchor: str) -> str:
    start = html.index(f'id="{anchor}"')
    return html[start : html.index("</section>", start)]


def test_the_worked_example_shows_the_engines_amounts(as_auditor):
    html = page(as_auditor)
    expected = settle(parse_snapshot(json.dumps(SECTION_7)))
    shown = paid(html, "example-chip_equity")
    assert shown == {
        **{row.player: format_minor_units(row.cash, "USD") for row in expected.payouts},
        "total": format_minor_units(expected.pool_distributed, "USD"),
    }
    # And those are the amounts worked out by hand in RULES.md §7.
    assert shown == {"a": "38.67 USD", "b": "32.67 USD", "c": "28.66 USD", "total": "100.00 USD"}
    words = text(html)
    assert "the late stage, settled by a chip equity split" in words
    assert "Each player first gets the prize of the lowest place still in play, 20.00 USD" in words
    assert "the formula shares the other 40.00 USD" in words
    assert "Rounded down, the amounts add up to 99.98 USD" in words
    assert "The 2 cents left over went to a and b" in words


def test_the_example_with_the_other_late_formula_is_the_engines_too(as_auditor):
    html = page(as_auditor)
    policy = Policy(late_formula="chip_position")
    expected = settle(parse_snapshot(json.dumps(SECTION_7)), policy=policy)
    shown = paid(html, "example-chip_position")
    assert shown == {
        **{row.player: format_minor_units(row.cash, "USD") for row in expected.payouts},
        "total": format_minor_units(expected.pool_distributed, "USD"),
    }
    assert shown["a"] != paid(html, "example-chip_equity")["a"]


def test_the_example_follows_the_engine_when_it_changes(as_auditor, monkeypatch):
    """Nothing about the example is written into the page: a different crash shows other
    figures, all from the engine."""
    monkeypatch.setattr(
        "settlements.selectors.policy_page.EXAMPLE_STACKS", {"a": 50000, "b": 30000, "c": 20000}
    )
    html = page(as_auditor)
    document = json.loads(json.dumps(SECTION_7))
    for player, chips in zip(document["players"], (50000, 30000, 20000), strict=False):
        player["chips"] = chips
    expected = settle(parse_snapshot(json.dumps(document)))
    assert paid(html, "example-chip_equity") == {
        **{row.player: format_minor_units(row.cash, "USD") for row in expected.payouts},
        "total": "100.00 USD",
    }


def test_rounding_tickets_and_decisions_are_explained(as_auditor):
    words = text(page(as_auditor))
    assert "rounded down to a whole cent" in words
    assert "the player with more chips comes first" in words
    assert "the player whose id sorts first" in words
    assert "one seat ticket plus v − V in T$; otherwise v in T$" in words
    assert "Nobody receives two seats" in words
    decisions = text(section(page(as_auditor), "decisions"))
    assert decisions.count("Marketing Manager") == 3
    assert decisions.count("Tournament Manager") == 4
    assert "never one they prepared or submitted" in decisions


def test_the_sites_readings_are_listed_as_site_policy(as_auditor):
    html = page(as_auditor)
    readings = section(html, "readings")
    words = text(readings)
    assert "How this site reads the policy" in words and "Site policy." in words
    for reading in (
        "reading-early-split",
        "reading-guaranteed-first",
        "reading-late-floor",
        "reading-cap",
        "reading-late-formula",
        "reading-satellite-ties",
        "reading-freeroll-early",
        "reading-invites",
        "reading-thresholds",
        "reading-final-stage",
        "reading-individual",
        "engine-long-payouts",
        "engine-bounds",
        "engine-limits",
        "engine-approval",
        "engine-four-eyes",
    ):
        assert f'<li id="{reading}">' in readings, reading
    assert "not the whole pool" in words
    assert "applies to freerolls too" in words
    assert "satellites included; there the first prize is one seat" in words
    assert "the final stage is the late stage" in words
    assert f"at most {MAX_AMOUNT:,} minor units" in words
    assert f"chip counts at most {MAX_CHIPS:,}" in words
    assert "even one that pays nothing" in words


def test_the_policy_page_says_what_icm_is_and_is_not_with_the_sites_threshold(as_auditor, settings):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = 12, 2500
    html = assert_full_page(as_auditor.get(reverse("policy")))
    assert 'id="icm"' in html and "What it is not" in html
    threshold = html[html.index('id="icm-threshold"') :]
    assert "12 %" in threshold[:600] and "2,500" in threshold[:600]
    # RULES.md §7's stacks by ICM: 86600/21, 10150/3 and 17450/7 (tests/rules/test_icm.py).
    assert "41.24 USD" in html and "33.83 USD" in html and "24.93 USD" in html


def test_the_rebuy_example_is_settled_live_as_rules_section_8_works_it(as_auditor):
    html = page(as_auditor)
    rows = re.findall(
        r'<tr><td class="mono">(\w)</td>(.*?)</tr>', html.split("rebuy-example-table")[1]
    )
    figures = {player: re.findall(r">([^<>]+)</td>", cells) for player, cells in rows}
    # Own buy-ins back, share of the rest, bounty, in all (RULES.md §8's worked example).
    assert figures["a"][2:] == ["30.00 USD", "23.34 USD", "12.50 USD", "65.84 USD"]
    assert figures["b"][2:] == ["20.00 USD", "15.83 USD", "5.00 USD", "40.83 USD"]
    assert figures["c"][2:] == ["10.00 USD", "10.83 USD", "7.50 USD", "28.33 USD"]
    assert "the <strong>middle</strong> stage" in html.split('id="rebuy-example"')[1]


def _in_force_now(first):
    RulebookVersion.objects.create(
        rulebook=first.rulebook,
        number=2,
        status="approved",
        parameters={
            **first.parameters,
            "pre_pct": 7,
            "early_pct": 30,
            "late_formula": "chip_position",
        },
        text="Seven and thirty.",
        effective_from=timezone.now() - timedelta(minutes=1),
        proposed_at=timezone.now(),
        proposal_reason="test",
        approved_at=timezone.now(),
    )


def test_the_page_shows_another_rulebook_in_force_when_asked(as_auditor):
    first = RulebookVersion.objects.get(rulebook__key="default", number=1)
    ontario = Rulebook.objects.create(key="ontario")
    with pgtrigger.ignore("settlements.RulebookVersion:follows_workflow"):
        RulebookVersion.objects.create(
            rulebook=ontario,
            number=1,
            status="approved",
            parameters={**first.parameters, "pre_pct": 8},
            text="Ontario's rules.",
            effective_from=timezone.now() - timedelta(minutes=1),
            proposed_at=timezone.now(),
            proposal_reason="test",
            approved_at=timezone.now(),
        )
    default = page(as_auditor)
    assert "?rulebook=ontario" in default and "rulebook default, version 1" in text(default)
    html = as_auditor.get(reverse("policy") + "?rulebook=ontario").content.decode()
    assert "rulebook ontario, version 1" in text(html)
    assert "Pre-stage mark 8 % (published: 5 %)" in text(html)
    assert as_auditor.get(reverse("policy") + "?rulebook=nowhere").status_code == 404
