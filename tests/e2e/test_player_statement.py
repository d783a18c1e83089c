"""Journey in Chromium: a support agent answers a player's "what did I get, and why?": finds
the player by id, opens the statement of their settlement, and the statement of a player who
was knocked out."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from settlements.access import roles
from settlements.services import settlements as settlement_services
from settlements.services.incidents import incident_report
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import make_user, snapshot_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_agent_finds_a_player_and_opens_the_statement(
    signed_in_page, django_user_model, screenshot
):
    operator = make_user(django_user_model, "operator", roles.OPERATOR)
    manager = make_user(django_user_model, "manager", roles.TOURNAMENT_MANAGER)
    incident = incident_report(
        actor=operator, title="Cluster D outage", started_at=timezone.now() - timedelta(hours=1)
    )
    case = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_bytes(stage="middle", entrants=20, tournament_id="T-0077"),
        incident=incident,
    )
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=manager)

    page = signed_in_page("auditor", username="agent")
    assert get_user_model().objects.get(username="agent")
    page.get_by_role("link", name="Players").click()
    page.get_by_label("Player id").fill("p00000")
    page.get_by_role("button", name="Find").click()
    expect(page).to_have_url(re.compile(r"/players/\?q=p00000$"))
    results = page.locator("#player-results")
    expect(results).to_contain_text("No player has exactly this id; ids that start with it")
    results.get_by_role("link", name="p000003").click()
    expect(page).to_have_url(re.compile(r"/players/\?q=p000003$"))
    cases = page.locator("#player-cases tbody tr")
    expect(cases).to_have_count(1)
    expect(cases.first).to_contain_text("T-0077")
    screenshot(page, "players-01-search")

    cases.first.get_by_role("link", name=re.compile("^Statement")).click()
    expect(page).to_have_url(
        re.compile(rf"/settlements/{settlement.pk}/statement/\?player=p000003$")
    )
    statement = page.locator("#statement")
    expect(statement).to_contain_text("Buy-in back")
    expect(statement).to_contain_text("How it was worked out")
    expect(statement).to_contain_text("Your exact amount")
    screenshot(page, "players-02-statement")

    # The printable page, and a player knocked out before the crash.
    page.get_by_role("link", name="Printable page").click()
    expect(page.locator("main.statement--print")).to_contain_text("What you receive")
    page.goto(f"/settlements/{settlement.pk}/statement/?player=p000020")
    expect(page.locator("#statement")).to_contain_text("knocked out before the crash")
