"""Journey in Chromium: an operator loaded the wrong snapshot, withdraws the case from its
page (confirming with a reason), and loads the right snapshot of the same tournament."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from settlements.models import Case
from settlements.services.incidents import incident_report
from settlements.services.settlements import settlement_prepare
from settlements.services.snapshots import case_load_snapshot
from settlements.workflow import CaseStatus, SettlementStatus
from tests.conftest import snapshot_bytes

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_operator_withdraws_a_wrong_snapshot_and_loads_the_right_one(signed_in_page, screenshot):
    page = signed_in_page("operator")
    operator = get_user_model().objects.get(username="operator")
    incident = incident_report(
        actor=operator, title="Cluster C outage", started_at=timezone.now() - timedelta(hours=1)
    )
    wrong = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_bytes(stage="late", tournament_id="T-0042", name="Sunday 50"),
        incident=incident,
    )
    settlement = settlement_prepare(case=wrong, actor=operator)

    page.goto(f"/cases/{wrong.pk}/")
    page.get_by_role("link", name="Withdraw this case").click()
    expect(page).to_have_url(re.compile(rf"/cases/{wrong.pk}/withdraw/$"))
    statement = page.locator("#confirm-statement")
    expect(statement).to_contain_text(f"Withdraw case #{wrong.pk} (T-0042)")
    expect(statement).to_contain_text(f"Settlement #{settlement.pk} (prepared) is cancelled")

    # Without a reason the form says so and stays.
    button = page.get_by_role("button", name=f"Withdraw case #{wrong.pk}")
    button.click()
    expect(page.locator("#case-withdraw")).to_contain_text("This field is required.")
    page.get_by_label("Reason").fill("Exported from the satellite table by mistake")
    screenshot(page, "withdraw-01-confirm")
    page.get_by_role("button", name=f"Withdraw case #{wrong.pk}").click()

    expect(page).to_have_url(re.compile(rf"/cases/{wrong.pk}/$"))
    expect(page.get_by_role("heading", name="Withdrawn: loaded in error")).to_be_visible()
    expect(page.locator(".page-head [data-status=withdrawn]")).to_have_text("Withdrawn")
    screenshot(page, "withdraw-02-case")
    wrong.refresh_from_db()
    settlement.refresh_from_db()
    assert wrong.status == CaseStatus.WITHDRAWN
    assert settlement.status == SettlementStatus.WITHDRAWN

    page.get_by_role("link", name="Load the right snapshot of T-0042").click()
    expect(page).to_have_url(re.compile(rf"/incidents/{incident.pk}/upload/\?tournament=\d+$"))
    page.get_by_label("Or paste the snapshot").fill(
        snapshot_bytes(stage="middle", tournament_id="T-0042", name="Sunday 50").decode()
    )
    page.get_by_role("button", name="Load the snapshot").click()
    expect(page).to_have_url(re.compile(r"/cases/\d+/$"))
    right = Case.objects.exclude(pk=wrong.pk).get()
    expect(page.get_by_role("heading", name="Stage: Middle")).to_be_visible()
    assert right.tournament_id == wrong.tournament_id and right.status == CaseStatus.READY
