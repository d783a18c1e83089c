"""htmx in the browser: partial swaps that push the URL, and back/forward through them."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from settlements.services.incidents import incident_report, tournament_create

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_dashboard_pages_swap_in_place_and_back_restores_them(signed_in_page):
    page = signed_in_page("operator")
    operator = get_user_model().objects.get(username="operator")
    for number in range(12):
        incident_report(
            actor=operator,
            title=f"Outage {number:02d}",
            started_at=timezone.now() - timedelta(minutes=number),
        )
    page.reload()
    incidents = page.locator("#incident-list")
    expect(incidents).to_contain_text("Outage 00")

    # Mark the document: a swap keeps it, a full page load would not.
    page.evaluate("() => { window.crashdeskMark = 'same document'; }")
    page.get_by_role("link", name="Next").click()
    expect(page).to_have_url(re.compile(r"\?page=2$"))
    expect(incidents).to_contain_text("Outage 11")
    expect(incidents).not_to_contain_text("Outage 00")
    assert page.evaluate("() => window.crashdeskMark") == "same document"

    page.go_back()
    expect(page).not_to_have_url(re.compile(r"page=2"))
    expect(page.locator("#incident-list")).to_contain_text("Outage 00")
    expect(page.get_by_role("heading", name="Waiting for you")).to_be_visible()

    page.go_forward()
    expect(page.locator("#incident-list")).to_contain_text("Outage 11")
    page.reload()
    expect(page.locator("#incident-list")).to_contain_text("Outage 11")
    expect(page.get_by_role("heading", name="Waiting for you")).to_be_visible()


def test_searching_registered_tournaments_filters_as_you_type(signed_in_page):
    page = signed_in_page("operator")
    operator = get_user_model().objects.get(username="operator")
    incident = incident_report(actor=operator, title="Cluster E outage", started_at=timezone.now())
    for operator_id, name in [("T-100", "Sunday Million"), ("T-200", "Monday Turbo")]:
        tournament_create(
            actor=operator, operator_id=operator_id, type="regular", currency="USD", name=name
        )
    page.goto(f"/incidents/{incident.pk}/tournaments/")
    picker = page.locator("#tournament-picker")
    expect(picker).to_contain_text("T-100")
    expect(picker).to_contain_text("T-200")

    page.get_by_label("Find a tournament by id or name").fill("turbo")
    expect(picker).not_to_contain_text("T-100")
    expect(picker).to_contain_text("T-200")
    expect(page).to_have_url(re.compile(r"\?q=turbo$"))

    picker.get_by_role("link", name="Upload its snapshot").click()
    expect(page).to_have_url(re.compile(rf"/incidents/{incident.pk}/upload/\?tournament=\d+$"))
    expect(page.locator("main")).to_contain_text("T-200 · Monday Turbo")
