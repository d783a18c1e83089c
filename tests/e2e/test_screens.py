"""What the screens look like to the people at them, checked in Chromium: charts that fill
their panel with text a person can read, focus after a failed submit, Back after "Explain",
times in the user's own zone."""

import re

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from settlements import services
from settlements.models import Case
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
    return services.case_load_snapshot(actor=operator, snapshot=snapshot_bytes(**snapshot))


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
