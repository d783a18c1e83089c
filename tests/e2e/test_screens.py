"""What the screens look like to the people at them, checked in Chromium: charts that fill
their panel with text a person can read, focus after a failed submit, Back after "Explain",
times in the user's own zone."""

import json
import re
import time

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from settlements.models import Case
from settlements.services.settlements import settlement_prepare
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import make_user, snapshot_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# The smallest text a chart may render, in CSS pixels, after any scaling of its drawing.
LEGIBLE_PX = 12

RENDERED_TEXT_SIZES = """
(root) => Array.from(root.querySelectorAll("svg text")).map((text) => {
  const scale = text.getScreenCTM().a;
  return parseFloat(getComputedStyle(text).fontSize) * scale;
})
"""


def load_case(**snapshot) -> Case:
    operator = make_user(get_user_model(), "operator", "operator")
    return case_load_snapshot(actor=operator, snapshot=snapshot_bytes(**snapshot))


def test_the_stage_bar_fills_its_panel_and_its_text_is_legible(signed_in_page):
    case = load_case(type="regular", stage="middle", entrants=40, tournament_id="T-BAR")
    page = signed_in_page("operator")
    page.goto(f"/cases/{case.pk}/")
    panel = page.locator("#case-stage")
    bar = panel.get_by_role("img", name=re.compile("Stage bar"))
    figure = panel.locator("figure.chart")
    assert bar.bounding_box()["width"] == pytest.approx(figure.bounding_box()["width"], abs=1)
    assert bar.bounding_box()["width"] > 720
    sizes = panel.evaluate(RENDERED_TEXT_SIZES)
    assert sizes and min(sizes) >= LEGIBLE_PX
    expect(panel.locator(".chart-legend")).to_contain_text("Pre: under 5 % eliminated")

    # A narrow window: the bar still fits its panel, the text keeps its size.
    page.set_viewport_size({"width": 420, "height": 900})
    assert bar.bounding_box()["width"] == pytest.approx(figure.bounding_box()["width"], abs=1)
    assert min(panel.evaluate(RENDERED_TEXT_SIZES)) >= LEGIBLE_PX


def test_the_option_charts_are_legible_side_by_side(signed_in_page):
    case = load_case(type="satellite", stage="middle", entrants=40, tournament_id="S-READ")
    page = signed_in_page("marketing_manager", username="marketing")
    page.goto(f"/cases/{case.pk}/decision/")
    charts = page.locator(".option-card svg.payout-chart")
    expect(charts).to_have_count(2)
    sizes = page.locator("#decision-form").evaluate(RENDERED_TEXT_SIZES)
    assert sizes and min(sizes) >= LEGIBLE_PX


def test_after_a_refused_snapshot_focus_is_on_its_problems(signed_in_page, tmp_path):
    from settlements.models import Incident
    from tests.conftest import build_snapshot

    page = signed_in_page("operator")
    incident = Incident.objects.create(
        title="Focus", started_at=timezone.now(), reported_by=get_user_model().objects.get()
    )
    page.goto(f"/incidents/{incident.pk}/upload/")
    document = build_snapshot(type="regular", stage="middle", tournament_id="T-FOCUS")
    document["tournament"]["fee"] = 1.5
    document["players"][3]["chips"] = "many"
    page.get_by_label("Or paste the snapshot").fill(json.dumps(document))
    page.get_by_role("button", name="Load the snapshot").click()
    summary = page.locator("#snapshot-problems-summary")
    expect(summary).to_be_focused()
    expect(summary).to_contain_text("2 problems")
    expect(page.locator("#snapshot-problems")).to_contain_text(document["players"][3]["id"])


def test_after_a_refused_form_focus_is_on_the_list_of_problems(signed_in_page):
    case = load_case(type="satellite", stage="middle", entrants=20, tournament_id="S-FOCUS")
    page = signed_in_page("marketing_manager", username="marketing")
    page.goto(f"/cases/{case.pk}/decision/")
    page.get_by_role("button", name="Review the decision").click()
    summary = page.locator("[data-error-summary]")
    expect(summary).to_be_focused()
    expect(summary).to_contain_text("Not sent: 2 fields need attention.")
    summary.get_by_role("link", name="Why this option").click()
    expect(page.get_by_label("Why this option")).to_be_focused()


def test_the_upload_says_the_server_is_checking_once_everything_is_sent(
    signed_in_page, monkeypatch
):
    from settlements.models import Incident

    page = signed_in_page("operator")
    incident = Incident.objects.create(
        title="Checking", started_at=timezone.now(), reported_by=get_user_model().objects.get()
    )
    # The live server runs in this process: its check of the snapshot is made to take a while.
    load = case_load_snapshot
    monkeypatch.setattr(
        "settlements.views.incidents.case_load_snapshot",
        lambda **kwargs: time.sleep(2) or load(**kwargs),
    )
    page.goto(f"/incidents/{incident.pk}/upload/")
    page.get_by_label("Or paste the snapshot").fill(
        snapshot_bytes(type="regular", stage="middle", entrants=400).decode()
    )
    page.get_by_role("button", name="Load the snapshot").click()
    expect(page.locator("#upload-progress-label")).to_have_text(
        "All sent. The server is checking the snapshot…"
    )
    expect(page.get_by_role("button", name="Load the snapshot")).to_be_disabled()
    expect(page).to_have_url(re.compile(r"/cases/\d+/$"))


def test_preparing_disables_its_button_and_says_it_is_working(signed_in_page, monkeypatch):
    case = load_case(type="regular", stage="middle", entrants=40, tournament_id="T-BUSY")
    prepare = settlement_prepare
    monkeypatch.setattr(
        "settlements.views.cases.settlement_prepare",
        lambda **kwargs: time.sleep(2) or prepare(**kwargs),
    )
    page = signed_in_page("operator")
    page.goto(f"/cases/{case.pk}/")
    button = page.get_by_role("button", name="Prepare the settlement")
    button.click()
    expect(button).to_be_disabled()
    expect(page.locator("#prepare-working")).to_have_css("opacity", "1")
    expect(page.get_by_text(re.compile(r"Settlement #\d+ prepared"))).to_be_visible()


def test_explain_changes_the_url_so_back_closes_the_panel(signed_in_page):
    case = load_case(type="regular", stage="middle", entrants=40, tournament_id="T-BACK")
    operator = get_user_model().objects.get(username="operator")
    settlement = settlement_prepare(case=case, actor=operator)
    page = signed_in_page("operator")
    page.goto(f"/cases/{case.pk}/")
    page.get_by_role("link", name=f"Settlement #{settlement.pk}").click()
    review = re.compile(rf"/settlements/{settlement.pk}/$")
    expect(page).to_have_url(review)
    panel = page.locator("#player-detail")
    page.get_by_role("link", name="Explain the amount of p000002").click()
    expect(page).to_have_url(re.compile(r"\?q=&page=1&player=p000002$"))
    expect(panel).to_contain_text("Why p000002 gets")
    page.go_back()
    expect(page).to_have_url(review)
    expect(panel).to_contain_text("Choose “Explain”")
    page.go_forward()
    expect(panel).to_contain_text("Why p000002 gets")
    page.reload()
    expect(panel).to_contain_text("Why p000002 gets")
    page.go_back()
    page.go_back()
    expect(page).to_have_url(re.compile(rf"/cases/{case.pk}/$"))


def test_each_players_entries_sort_page_and_search_in_place(signed_in_page):
    case = load_case(stage="middle", entrants=120, tournament_id="KO-E2E", rebuys=True)
    page = signed_in_page("auditor")
    page.goto(f"/cases/{case.pk}/")
    entrants = page.locator("#case-entrants")
    status = page.locator("#swap-status")
    rows = entrants.locator("tbody tr")
    expect(rows).to_have_count(50)
    expect(rows.first).to_contain_text("p000001")

    # A sort header keeps focus and its order is said; the URL keeps it for a reload.
    page.locator("#sort-entries").focus()
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"\?entrants_sort=-entries$"))
    expect(status).to_contain_text("by entries, largest first")
    expect(page.locator("#sort-entries")).to_be_focused()
    expect(rows.nth(1)).to_contain_text("p000004")

    # "Next" is replaced by the swap: focus goes to the pager of the new page.
    page.locator("#case-entrants-next").focus()
    page.keyboard.press("Enter")
    expect(status).to_contain_text("Page 2 of 3")
    expect(page).to_have_url(re.compile(r"entrants_page=2"))
    expect(page.locator("#case-entrants-next")).to_be_focused()

    # Typing a search swaps the list and leaves the typing where it is.
    search = page.get_by_label("Find a player")
    search.fill("p00011")
    expect(status).to_contain_text("10 entrants whose id is or starts with “p00011”")
    expect(search).to_be_focused()
    expect(rows).to_have_count(10)
    page.reload()
    expect(rows).to_have_count(10)
    expect(search).to_have_value("p00011")
