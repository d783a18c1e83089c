"""The Tournament Manager's guide to rulebooks (docs/guides/tournament-manager.md), walked in
Chromium: one manager proposes a version and simulates it, another finds it waiting for them
and approves it. Saves the screenshots the guide shows (guide-manager-03 to 05).

The simulation's job runs inside the request that starts it (the tests' immediate backend).
"""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from settlements.models import RulebookVersion, Simulation
from settlements.workflow import RulebookVersionStatus
from tests.e2e.test_guides import load, outage

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_tournament_managers_guide_to_rulebooks(signed_in_page, screenshot):
    incident = outage()
    for number, stage in enumerate(("middle", "late")):
        load(incident, type="regular", stage=stage, tournament_id=f"T-02{number}")
    takes_effect = (timezone.localtime() + timedelta(days=30)).replace(hour=12, minute=0)

    # Propose: the form starts from the version in force; a mistake shows at its field.
    page = signed_in_page("tournament_manager", username="manager")
    page.goto("/rulebooks/default/")
    page.get_by_role("link", name="Propose a new version").click()
    page.get_by_label("Rulebook", exact=True).fill("default")
    page.get_by_label("Takes effect").fill(takes_effect.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("Middle fee refund").select_option("true")
    page.get_by_label("Final table icm").fill("11")
    page.get_by_label("Text shown to players").fill(
        "If the tournament crashes before the money, **buy-ins and fees** come back first."
    )
    page.get_by_label("Reason for the change").fill("The operator's new published policy.")
    page.get_by_role("button", name="Propose").click()
    expect(page.locator("#proposal-form")).to_contain_text("less than or equal to 10")
    assert not RulebookVersion.objects.filter(status=RulebookVersionStatus.PROPOSED).exists()
    page.get_by_label("Final table icm").fill("9")
    screenshot(page, "guide-manager-03-propose")
    page.get_by_role("button", name="Propose").click()
    expect(page.get_by_role("heading", name="Version 2: awaiting approval")).to_be_visible()

    # Simulate over the outage's cases: nothing about them changes.
    page.get_by_label("Incident number").fill(str(incident.pk))
    page.get_by_role("button", name="Simulate").click()
    expect(page.get_by_role("heading", name="Summary")).to_be_visible()
    expect(page.get_by_role("region", name="Cases simulated")).to_contain_text("T-021")
    screenshot(page, "guide-manager-04-simulation")
    assert Simulation.objects.get().finished_at is not None

    # Another manager finds it waiting, reads the change and its simulation, approves it.
    other = signed_in_page("tournament_manager", username="manager2")
    waiting = other.locator("#waiting")
    waiting.get_by_role("link", name="default v2").click()
    expect(other.locator("#confirm-statement")).to_contain_text("middle_fee_refund")
    expect(other.locator("#simulation")).to_contain_text("over 2 cases")
    screenshot(other, "guide-manager-05-approve")
    other.get_by_label("Reason").fill(
        "Simulated on the rack 7 outage; the changes are as published."
    )
    other.get_by_role("button", name="Approve default v2").click()
    expect(other.get_by_role("heading", name="Version 2: approved")).to_be_visible()
    version = RulebookVersion.objects.get(number=2)
    assert (version.status, version.approved_by.username) == ("approved", "manager2")
