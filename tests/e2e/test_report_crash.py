"""Journeys through "report a crash" in Chromium.

(a), first half: an operator reports an incident that hit a regular tournament in the middle
stage, loads its snapshot, sees the stage and prepares the settlement.
(f): a bad snapshot shows every problem with its path, nothing is stored, the text stays.
"""

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from settlements.models import Case, Incident, Snapshot, Tournament
from tests.conftest import build_snapshot, snapshot_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def report_incident(page, title: str):
    page.get_by_role("link", name="Report a crash").first.click()
    expect(page).to_have_url(re.compile(r"/incidents/new/$"))
    page.get_by_label("Title").fill(title)
    an_hour_ago = timezone.localtime() - timedelta(hours=1)
    page.get_by_label("Started at").fill(an_hour_ago.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label("Description").fill("Game servers of cluster B stopped answering.")
    page.get_by_role("button", name="Report the incident").click()
    expect(page).to_have_url(re.compile(r"/incidents/\d+/tournaments/$"))
    return Incident.objects.get(title=title)


def test_operator_reports_a_regular_tournament_in_the_middle_stage(
    signed_in_page, screenshot, new_page, tmp_path
):
    login = new_page()
    login.goto("/accounts/login/")
    expect(login.get_by_role("heading", name="Sign in to CrashDesk")).to_be_visible()
    screenshot(login, "01-login")

    page = signed_in_page("operator")
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    expect(page.locator(".topbar")).to_contain_text("Operator")

    incident = report_incident(page, "Cluster B outage")
    expect(
        page.get_by_role("heading", name=f"Incident #{incident.pk}: Cluster B outage")
    ).to_be_visible()

    page.get_by_role("link", name="Upload a snapshot").click()
    expect(page).to_have_url(re.compile(rf"/incidents/{incident.pk}/upload/$"))
    snapshot_file = tmp_path / "sunday-warm-up.json"
    snapshot_file.write_bytes(
        snapshot_bytes(
            type="regular",
            stage="middle",
            entrants=40,
            tournament_id="T-20261130-0042",
            name="Sunday Warm-Up",
        )
    )
    page.get_by_label("Snapshot file").set_input_files(str(snapshot_file))
    page.get_by_role("button", name="Load the snapshot").click()

    expect(page).to_have_url(re.compile(r"/cases/\d+/$"))
    case = Case.objects.get()
    expect(page.get_by_role("heading", name="Stage: Middle")).to_be_visible()
    figures = page.locator("dl.figures")
    expect(figures).to_contain_text("Entrants (N)40")
    expect(figures).to_contain_text("Eliminated (E)20")
    expect(figures).to_contain_text("Remaining (R)20")
    expect(figures).to_contain_text("Paid places (M)3")
    expect(page.get_by_role("img", name=re.compile("Stage bar: 50 % eliminated"))).to_be_visible()
    expect(page.get_by_role("heading", name="Remedy: Chip equity split")).to_be_visible()
    screenshot(page, "04-case-stage")

    # Back returns to the upload step and reload keeps the case page whole.
    page.go_back()
    expect(page.get_by_role("button", name="Load the snapshot")).to_be_visible()
    page.go_forward()
    page.reload()
    expect(page.get_by_role("heading", name="Stage: Middle")).to_be_visible()

    page.get_by_label("Note for the approver").fill("Snapshot checked against the server log.")
    page.get_by_role("button", name="Prepare the settlement").click()
    expect(page.get_by_text(re.compile(r"Settlement #\d+ prepared"))).to_be_visible()
    expect(page.locator("#case-settlements")).to_contain_text("Prepared")
    assert case.settlements.count() == 1

    page.get_by_role("link", name="Dashboard").first.click()
    expect(page.locator("#incident-list")).to_contain_text("T-20261130-0042")
    screenshot(page, "02-dashboard")


def test_a_bad_snapshot_shows_its_problems_and_nothing_is_saved(signed_in_page, screenshot):
    page = signed_in_page("operator")
    incident = report_incident(page, "Cluster C outage")
    page.get_by_role("link", name="Upload a snapshot").click()

    document = build_snapshot(type="regular", stage="middle", tournament_id="T-BROKEN")
    document["players"][2]["chips"] = -40
    document["players"][5]["chips"] = -1
    text = json.dumps(document, indent=2)
    page.get_by_label("Or paste the snapshot").fill(text)
    page.get_by_role("button", name="Load the snapshot").click()

    problems = page.locator("#snapshot-problems")
    expect(problems).to_be_visible()
    expect(problems.locator("tbody tr")).to_have_count(2)
    expect(problems).to_contain_text("players[2].chips")
    expect(problems).to_contain_text("players[5].chips")
    expect(page.get_by_role("alert").first).to_contain_text("Nothing was saved")
    expect(page.get_by_label("Or paste the snapshot")).to_have_value(text)
    expect(page).to_have_url(re.compile(rf"/incidents/{incident.pk}/upload/$"))
    screenshot(page, "03-upload-errors")

    assert Case.objects.count() == 0
    assert Snapshot.objects.count() == 0
    assert not Tournament.objects.filter(operator_id="T-BROKEN").exists()

    # Fixing the text in place and loading again works.
    document["players"][2]["chips"] = 40
    document["players"][5]["chips"] = 1
    page.get_by_label("Or paste the snapshot").fill(json.dumps(document))
    page.get_by_role("button", name="Load the snapshot").click()
    expect(page).to_have_url(re.compile(r"/cases/\d+/$"))
    assert Case.objects.get().tournament.operator_id == "T-BROKEN"


def test_a_large_upload_shows_its_progress(signed_in_page, tmp_path):
    page = signed_in_page("operator")
    report_incident(page, "Cluster D outage")
    page.get_by_role("link", name="Upload a snapshot").click()
    big = tmp_path / "big.json"
    big.write_bytes(
        snapshot_bytes(type="regular", stage="middle", entrants=60_000, tournament_id="T-BIG")
    )
    # Remember the progress bar's highest reading across the navigation that follows.
    page.evaluate(
        """() => document.addEventListener("htmx:xhr:progress", () => {
            const bar = document.getElementById("upload-progress");
            const seen = Number(sessionStorage.getItem("progress") || 0);
            sessionStorage.setItem("progress", String(Math.max(seen, bar.value)));
            sessionStorage.setItem("progressMax", String(bar.max));
        })"""
    )
    page.get_by_label("Snapshot file").set_input_files(str(big))
    page.get_by_role("button", name="Load the snapshot").click()
    expect(page).to_have_url(re.compile(r"/cases/\d+/$"), timeout=60_000)
    seen = page.evaluate(
        "() => [sessionStorage.getItem('progress'), sessionStorage.getItem('progressMax')]"
    )
    assert int(seen[1]) >= big.stat().st_size
    assert int(seen[0]) > 0
