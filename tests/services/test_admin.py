"""The admin shows every record and edits none of the audited workflow."""

import pytest
from django.contrib import admin
from django.urls import reverse

from settlements.models import Event, Settlement, SettlementLine
from tests.services.helpers import approved

pytestmark = pytest.mark.django_db

READ_ONLY = [
    "case",
    "snapshot",
    "caseplayer",
    "decision",
    "settlement",
    "settlementpayout",
    "settlementline",
    "compensation",
    "prizewithdrawal",
    "event",
    "apitoken",
    "ledgerrelease",
    "paymenttally",
    "paymentconfirmation",
    "reissue",
]


@pytest.fixture
def approved_settlement(users, snapshot_factory):
    return approved(users["operator"], users["tournament_manager"], snapshot_factory)


def test_every_workflow_model_is_registered():
    from django.apps import apps

    for model in apps.get_app_config("settlements").get_models():
        if not model.__name__.startswith("Historical") and model.__name__ not in (
            "CompensationItem",
            "JobItem",
        ):
            assert admin.site.is_registered(model), model.__name__


@pytest.mark.parametrize("model", READ_ONLY + ["tournament", "incident"])
def test_lists_open_and_nothing_can_be_added(admin_client, approved_settlement, model):
    assert admin_client.get(reverse(f"admin:settlements_{model}_changelist")).status_code == 200
    assert admin_client.get(reverse(f"admin:settlements_{model}_add")).status_code == 403


def test_an_approved_settlement_cannot_be_changed_or_deleted(admin_client, approved_settlement):
    url = reverse("admin:settlements_settlement_change", args=[approved_settlement.pk])
    page = admin_client.get(url)
    assert page.status_code == 200
    assert b'name="status"' not in page.content
    assert admin_client.post(url, {"status": "rejected"}).status_code == 403
    delete = reverse("admin:settlements_settlement_delete", args=[approved_settlement.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    approved_settlement.refresh_from_db()
    assert approved_settlement.status == "approved"
    assert Settlement.objects.filter(pk=approved_settlement.pk).exists()


def test_lines_and_events_are_read_only(admin_client, approved_settlement):
    line = SettlementLine.objects.filter(settlement=approved_settlement).first()
    event = Event.objects.first()
    for name, obj in (("settlementline", line), ("event", event)):
        url = reverse(f"admin:settlements_{name}_change", args=[obj.pk])
        assert admin_client.get(url).status_code == 200
        assert admin_client.post(url, {}).status_code == 403


def test_history_pages_are_shown_and_cannot_revert(admin_client, approved_settlement):
    url = reverse("admin:settlements_settlement_history", args=[approved_settlement.pk])
    page = admin_client.get(url)
    assert page.status_code == 200
    assert b"Submitted for approval" in page.content
    first = approved_settlement.history.order_by("history_id").first()
    revert = reverse(
        "admin:settlements_settlement_simple_history",
        args=[approved_settlement.pk, first.history_id],
    )
    # Reverting is disabled: the old version is shown, never saved back.
    assert admin_client.post(revert, {"status": "prepared"}).status_code != 302
    approved_settlement.refresh_from_db()
    assert approved_settlement.status == "approved"


def test_only_descriptions_of_tournaments_can_be_edited(admin_client, approved_settlement):
    tournament = approved_settlement.case.tournament
    url = reverse("admin:settlements_tournament_change", args=[tournament.pk])
    page = admin_client.get(url)
    assert b'name="name"' in page.content
    assert b'name="buy_in"' not in page.content
