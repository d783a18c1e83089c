"""The case page of a rebuy knock-out tournament (crash-snapshot/2): its entries, add-ons and
bounties; a version 1 case shows none of it."""

import pytest
from django.urls import reverse

from tests.views.conftest import assert_full_page

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
        ("On the heads of players still in", "150.00 USD"),
    ]:
        assert f"<dt>{label}</dt><dd>{value}</dd>" in html
    assert "<dt>Bounty in every entry</dt>" in html and "<dt>Add-on + fee</dt>" in html


def test_a_version_1_case_shows_no_rebuy_figures(as_operator, load_case):
    case = load_case(stage="middle", entrants=30)
    html = assert_full_page(as_operator.get(reverse("case_detail", args=[case.pk])))
    assert "Rebuys, add-ons and bounties" not in html
    assert "Bounty in every entry" not in html
