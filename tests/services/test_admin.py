"""The admin shows every record with a key of its own and edits none of the audited workflow."""

import pytest
from django.contrib import admin
from django.db import models
from django.urls import reverse

from settlements import checkpoints
from settlements.models import Event, Settlement
from settlements.services.checkpoints import checkpoint_record
from tests.services.helpers import approved, every_record, row_counts

pytestmark = pytest.mark.django_db

READ_ONLY = [
    "case",
    "snapshot",
    "decision",
    "settlement",
    "icmvaluation",
    "icmvalue",
    "compensation",
    "prizewithdrawal",
    "event",
    "apitoken",
    "ledgerrelease",
    "paymenttally",
    "paymentconfirmation",
    "reissue",
    "rulebook",
    "rulebookversion",
    "simulation",
    "simulationresult",
    "auditcheckpoint",
]


@pytest.fixture
def approved_settlement(users, snapshot_factory):
    return approved(users["operator"], users["tournament_manager"], snapshot_factory)


def _keyed_by_parent(model) -> bool:
    """Entrants, payouts and ledger lines: keyed by their parent and place in it, which
    Django's admin cannot list; the case page, the review and the ledger show them."""
    return isinstance(model._meta.pk, models.CompositePrimaryKey)


def test_every_workflow_model_is_registered():
    from django.apps import apps

    bulk_rows = set()
    for model in apps.get_app_config("settlements").get_models():
        if _keyed_by_parent(model):
            bulk_rows.add(model.__name__)
        elif not model.__name__.startswith("Historical") and model.__name__ not in (
            "CompensationItem",
            "JobItem",
            "SignedInSession",  # who signed in with a session, not business data
            # Proxies of Django's users and memberships, there for their triggers only; the
            # admin's own Users page shows those rows.
            "GuardedMembership",
            "GuardedUserFlags",
        ):
            assert admin.site.is_registered(model), model.__name__
    assert bulk_rows == {"CasePlayer", "SettlementPayout", "SettlementLine"}


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


def test_events_are_read_only(admin_client, approved_settlement):
    event = Event.objects.first()
    url = reverse("admin:settlements_event_change", args=[event.pk])
    assert admin_client.get(url).status_code == 200
    assert admin_client.post(url, {}).status_code == 403


def test_history_pages_are_shown(admin_client, approved_settlement):
    url = reverse("admin:settlements_settlement_history", args=[approved_settlement.pk])
    page = admin_client.get(url)
    assert page.status_code == 200
    assert b"Submitted for approval" in page.content
    first = approved_settlement.history.order_by("history_id").first()
    version = reverse(
        "admin:settlements_settlement_simple_history",
        args=[approved_settlement.pk, first.history_id],
    )
    assert admin_client.get(version).status_code == 200


def _admin_urls(model, obj) -> dict[str, str]:
    name = f"admin:settlements_{model._meta.model_name}"
    urls = {
        "change": reverse(f"{name}_change", args=[obj.pk]),
        "delete": reverse(f"{name}_delete", args=[obj.pk]),
        "history": reverse(f"{name}_history", args=[obj.pk]),
    }
    history = getattr(model, "history", None)
    if history is not None:
        version = history.filter(id=obj.pk).order_by("history_id").first()
        urls["version"] = reverse(f"{name}_simple_history", args=[obj.pk, version.history_id])
    return urls


def _form_of(model, obj) -> dict:
    """The record's own field values, changed: what a forged change or revert would send."""
    form = {}
    for field in model._meta.concrete_fields:
        value = field.value_from_object(obj)
        if isinstance(value, str) and not field.choices:
            form[field.attname] = value + " (edited)"
        elif isinstance(value, bool):
            form[field.attname] = "" if value else "on"
        elif value is not None:
            form[field.name] = value
    return {**form, "post": "yes", "_save": "Save", "_change_history": "1"}


@pytest.mark.parametrize(
    "model",
    [m for m in admin.site._registry if m._meta.app_label == "settlements"],
    ids=lambda model: model.__name__,
)
def test_no_admin_post_changes_a_record_or_its_history(
    admin_client, users, snapshot_factory, model
):
    every_record(users, snapshot_factory)
    checkpoint_record(outcome=checkpoints.verify())
    objects = model.objects.order_by("pk")
    if hasattr(model, "history"):
        # One with versions to revert to: not the `default` rulebook the migration wrote.
        objects = objects.filter(pk__in=model.history.values("id"))
    obj = objects.first()
    before = row_counts(), _values(model, obj)
    for kind, url in _admin_urls(model, obj).items():
        response = admin_client.post(url, _form_of(model, obj))
        assert response.status_code in (403, 405), (kind, url, response.status_code)
    changelist = reverse(f"admin:settlements_{model._meta.model_name}_changelist")
    admin_client.post(changelist, {"action": "delete_selected", "_selected_action": [obj.pk]})
    assert (row_counts(), _values(model, obj)) == before


def _values(model, obj) -> dict:
    return model.objects.filter(pk=obj.pk).values().get()
