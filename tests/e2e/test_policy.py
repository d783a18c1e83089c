"""The crash policy in Chromium: from a case's remedy, "Why?" opens the policy page at the
section on that case's type and stage, under the strict CSP."""

import re

import pytest
from playwright.sync_api import expect

from settlements import wording
from tests.e2e.test_settlement_journeys import load_case

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_why_leads_from_a_case_to_its_cell_of_the_policy(signed_in_page, screenshot):
    case = load_case(type="freeroll", stage="late", tournament_id="F-WHY")
    page = signed_in_page("tournament_manager")
    page.goto(f"/cases/{case.pk}/")
    next_step = page.locator("#case-next-step")
    expect(next_step).to_contain_text(wording.describe("freeroll", "late", "chip_equity"))
    next_step.get_by_role("link", name=re.compile(r"^Why\?")).click()

    expect(page).to_have_url(re.compile(r"/policy/#cell-freeroll-late$"))
    cell = page.locator("#cell-freeroll-late")
    expect(cell).to_be_in_viewport()
    expect(cell).to_contain_text("first gets the prize of the lowest place still in play")
    expect(page.get_by_role("link", name="Crash policy")).to_have_attribute("aria-current", "page")
    expect(page.locator("#example-chip_equity [data-paid='a']")).to_have_text("38.67 USD")
    screenshot(page, "20-crash-policy")
