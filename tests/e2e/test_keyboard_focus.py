"""Keyboard journeys through every htmx swap that replaces the focused control, in Chromium.

Each step is reached with Tab and taken with Enter, as a keyboard user would; after each swap
the test asserts where focus landed (the swapped-in panel's heading, the list of problems, or
back on the control that opened it) and what the page's one live region said.
"""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import Locator, Page, expect

from settlements.access import roles
from settlements.models import Case
from settlements.services.incidents import incident_report
from settlements.services.settlements import settlement_prepare, settlement_submit
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import make_user, snapshot_bytes
from tests.e2e import axe

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# More presses than any of these pages has controls before the one a step needs.
MOST_TABS = 400


def load_case(incident=None, **snapshot) -> Case:
    operator = make_user(get_user_model(), "operator", roles.OPERATOR)
    return case_load_snapshot(
        actor=operator, incident=incident, snapshot=snapshot_bytes(**snapshot)
    )


def submitted(case: Case):
    operator = make_user(get_user_model(), "operator", roles.OPERATOR)
    settlement = settlement_prepare(case=case, actor=operator)
    return settlement_submit(settlement=settlement, actor=operator)


def tab_to(page: Page, target: Locator) -> None:
    """Press Tab until ``target`` has focus, from wherever focus is now."""
    handle = target.element_handle()
    for _ in range(MOST_TABS):
        if handle.evaluate("element => element === document.activeElement"):
            return
        page.keyboard.press("Tab")
    pytest.fail(f"Tab never reached {target}")


def press_enter_on(page: Page, target: Locator) -> None:
    tab_to(page, target)
    page.keyboard.press("Enter")


def said(page: Page):
    return expect(page.locator("#swap-status"))


def no_violations(page: Page) -> None:
    """axe's WCAG 2.1 A and AA rules hold in the state the swap left."""
    found = axe.violations(page)
    assert not found, axe.describe(found)


def test_rejecting_and_approving_a_settlement_keep_focus(signed_in_page):
    rejected = submitted(load_case(type="regular", stage="middle", tournament_id="T-REJ"))
    approved = submitted(load_case(type="regular", stage="middle", tournament_id="T-APP"))
    page = signed_in_page(roles.TOURNAMENT_MANAGER, username="manager")

    page.goto(f"/settlements/{rejected.pk}/")
    press_enter_on(page, page.get_by_role("link", name="Reject…"))
    expect(page.get_by_role("heading", name="Check before you reject")).to_be_focused()
    # The reason is required: the refusal takes focus, then the reason box is the next stop.
    press_enter_on(page, page.get_by_role("button", name=re.compile("^Reject settlement")))
    expect(page.locator("[data-error-summary]")).to_be_focused()
    tab_to(page, page.get_by_label(re.compile("Reason")))
    page.keyboard.type("The pool in the snapshot is not the one announced.")
    # The answer itself is a new page (its own address, for reload and Back), not a swap.
    press_enter_on(page, page.get_by_role("button", name=re.compile("^Reject settlement")))
    expect(page.get_by_role("heading", name="Rejected")).to_be_visible()

    page.goto(f"/settlements/{approved.pk}/")
    press_enter_on(page, page.get_by_role("link", name="Approve…"))
    expect(page.get_by_role("heading", name="Check before you approve")).to_be_focused()
    tab_to(page, page.get_by_label(re.compile("Reason")))
    page.keyboard.type("Checked against the snapshot.")
    press_enter_on(page, page.get_by_role("button", name=re.compile("^Approve settlement")))
    expect(page.get_by_role("heading", name=re.compile("^Approved"))).to_be_visible()


def test_paging_the_payouts_keeps_focus_on_the_pager_and_says_the_page(signed_in_page):
    # 240 entrants in the middle stage: 120 players paid, three pages of 50.
    settlement = submitted(
        load_case(type="regular", stage="middle", entrants=240, tournament_id="T-PAGES")
    )
    page = signed_in_page(roles.OPERATOR, username="operator")
    page.goto(f"/settlements/{settlement.pk}/")
    payouts = page.locator("#payouts")

    press_enter_on(page, payouts.get_by_role("link", name="Next"))
    expect(payouts.get_by_role("link", name="Next")).to_be_focused()
    said(page).to_contain_text("Page 2 of 3")
    page.keyboard.press("Enter")
    # The last page has no "Next": focus stays in the pager, on "Previous".
    expect(payouts.get_by_role("link", name="Previous")).to_be_focused()
    said(page).to_contain_text("Page 3 of 3")
    no_violations(page)

    # "Explain" keeps focus on its link; the explanation is said through the live region.
    press_enter_on(page, payouts.get_by_role("link", name=re.compile("^Explain")).first)
    expect(payouts.get_by_role("link", name=re.compile("^Explain")).first).to_be_focused()
    said(page).to_contain_text("Explained beside the table: why")
    assert page.locator("#player-detail[aria-live]").count() == 0


def test_the_decision_page_pages_invitees_reviews_and_changes_by_keyboard(signed_in_page):
    case = load_case(type="freeroll", stage="middle", entrants=60, tournament_id="F-KEYS")
    page = signed_in_page(roles.MARKETING_MANAGER, username="marketing")
    page.goto(f"/cases/{case.pk}/decision/")
    invitees = page.locator("#invitees")

    press_enter_on(page, invitees.get_by_role("link", name="Next"))
    # The second page is the last: focus goes to "Previous", in the same pager.
    expect(invitees.get_by_role("link", name="Previous")).to_be_focused()
    said(page).to_contain_text("Page 2 of 2")
    page.keyboard.press("Enter")
    expect(invitees.get_by_role("link", name="Next")).to_be_focused()
    said(page).to_contain_text("Page 1 of 2")
    no_violations(page)

    # Reviewed with nothing chosen: the list of problems takes focus.
    press_enter_on(page, page.get_by_role("button", name="Review the decision"))
    expect(page.locator("[data-error-summary]")).to_be_focused()

    page.get_by_role("radio", name="Reschedule").check()
    new_date = timezone.localtime() + timedelta(days=7)
    page.get_by_label("New date").fill(new_date.strftime("%Y-%m-%dT20:00"))
    page.get_by_label("Why this option").fill("Players asked for a rerun.")
    press_enter_on(page, page.get_by_role("button", name="Review the decision"))
    expect(page.get_by_role("heading", name="Check before recording")).to_be_focused()

    press_enter_on(page, page.get_by_role("button", name="Change"))
    expect(page.locator("legend", has_text="Choose an option")).to_be_focused()
    no_violations(page)


def test_leaving_out_a_settlement_and_filtering_the_bulk_approval(signed_in_page):
    operator = make_user(get_user_model(), "operator", roles.OPERATOR)
    incident = incident_report(actor=operator, title="Cluster K", started_at=timezone.now())
    first = submitted(
        load_case(incident=incident, type="regular", stage="middle", tournament_id="T-K1")
    )
    submitted(load_case(incident=incident, type="regular", stage="late", tournament_id="T-K2"))
    page = signed_in_page(roles.TOURNAMENT_MANAGER, username="manager")
    page.goto(f"/incidents/{incident.pk}/approve/")

    press_enter_on(page, page.get_by_role("link", name=f"Leave out {first}"))
    expect(page.get_by_role("link", name=f"Put back {first}")).to_be_focused()
    said(page).to_contain_text("except the 1 you left out")
    page.keyboard.press("Enter")
    expect(page.get_by_role("link", name=f"Leave out {first}")).to_be_focused()

    # Arrow keys on the stage filter change nothing until the person asks.
    address = page.url
    tab_to(page, page.get_by_label("Stage"))
    page.keyboard.press("ArrowDown")
    page.get_by_label("Stage").select_option("late")
    page.wait_for_timeout(500)
    assert page.url == address
    expect(page.locator("#approve-choice tbody tr")).to_have_count(2)
    press_enter_on(page, page.get_by_role("button", name="Filter"))
    expect(page.get_by_role("button", name="Filter")).to_be_focused()
    expect(page.locator("#approve-choice tbody tr")).to_have_count(1)
    no_violations(page)


def test_sorting_the_workbench_keeps_focus_on_the_header(signed_in_page):
    operator = make_user(get_user_model(), "operator", roles.OPERATOR)
    incident = incident_report(actor=operator, title="Cluster S", started_at=timezone.now())
    for number, stage in enumerate(("late", "pre", "middle")):
        load_case(incident=incident, type="regular", stage=stage, tournament_id=f"T-S{number}")
    page = signed_in_page(roles.OPERATOR, username="operator")
    page.goto(f"/incidents/{incident.pk}/tournaments/")

    press_enter_on(page, page.get_by_role("link", name="Stage", exact=True))
    header = page.get_by_role("link", name="Stage", exact=True)
    expect(header).to_be_focused()
    expect(page.locator("th[aria-sort]")).to_have_text("Stage")
    said(page).to_contain_text("Cases sorted by stage")
    page.keyboard.press("Enter")
    expect(header).to_be_focused()
    said(page).to_contain_text("descending")
    no_violations(page)
