"""Whoever set a settlement's amounts by loading its snapshot, prepared it or submitted it does
not approve it: refused by the service, and by the database where a check can say it."""

import pytest
from django.contrib.auth.models import Group
from django.db import IntegrityError, connection, transaction

from settlements.access import roles
from settlements.errors import NotAllowed
from settlements.services import settlements as settlement_services
from tests.conftest import make_user
from tests.services.helpers import load

pytestmark = pytest.mark.django_db


@pytest.fixture
def loader(django_user_model):
    """An operator who is also a Tournament Manager."""
    return make_user(django_user_model, "loader", roles.OPERATOR, roles.TOURNAMENT_MANAGER)


def submitted_by_colleague(loader, colleague, snapshot_factory):
    case = load(loader, snapshot_factory)
    settlement = settlement_services.settlement_prepare(case=case, actor=colleague)
    return settlement_services.settlement_submit(settlement=settlement, actor=colleague)


def test_the_loader_may_not_approve_what_a_colleague_prepared(
    loader, second_operator, tournament_manager, snapshot_factory
):
    settlement = submitted_by_colleague(loader, second_operator, snapshot_factory)
    assert settlement.loaded_by == loader
    with pytest.raises(NotAllowed, match="You loaded the snapshot"):
        settlement_services.settlement_approve(settlement=settlement, actor=loader)
    with pytest.raises(NotAllowed, match="You loaded the snapshot"):
        settlement_services.settlement_reject(settlement=settlement, actor=loader, reason="mine")
    approved = settlement_services.settlement_approve(
        settlement=settlement, actor=tournament_manager
    )
    assert approved.status == "approved"


def test_a_role_granted_later_opens_no_way_around(
    operator, second_operator, snapshot_factory, django_user_model
):
    settlement = submitted_by_colleague(operator, second_operator, snapshot_factory)
    operator.groups.add(Group.objects.get(name=roles.TOURNAMENT_MANAGER))
    operator = django_user_model.objects.get(pk=operator.pk)
    with pytest.raises(NotAllowed, match="You loaded the snapshot"):
        settlement_services.settlement_approve(settlement=settlement, actor=operator)


def test_adjustments_keep_the_cases_loader(
    loader, second_operator, tournament_manager, snapshot_factory
):
    settlement = submitted_by_colleague(loader, second_operator, snapshot_factory)
    settlement = settlement_services.settlement_approve(
        settlement=settlement, actor=tournament_manager
    )
    adjustment = settlement_services.settlement_adjust(
        settlement=settlement,
        actor=second_operator,
        reason="missed a fee",
        entries=[
            settlement_services.AdjustmentEntry(
                player="p000002", kind="refund_fee", unit="cash", amount=100, source="house"
            )
        ],
    )
    adjustment = settlement_services.settlement_submit(settlement=adjustment, actor=second_operator)
    assert adjustment.loaded_by == loader
    with pytest.raises(NotAllowed, match="You loaded the snapshot"):
        settlement_services.settlement_approve(settlement=adjustment, actor=loader)


@pytest.mark.parametrize("who", ["loaded_by_id", "submitted_by_id"])
def test_the_database_refuses_the_loader_or_submitter_as_approver(
    loader, second_operator, snapshot_factory, who
):
    settlement = submitted_by_colleague(loader, second_operator, snapshot_factory)
    table = settlement._meta.db_table
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} SET status = 'approved', approved_by_id = {who} WHERE id = %s",
            [settlement.pk],
        )
    settlement.refresh_from_db()
    assert settlement.status == "awaiting_approval"


def test_the_review_page_tells_the_loader_why_they_cannot_answer(
    client, loader, second_operator, snapshot_factory
):
    settlement = submitted_by_colleague(loader, second_operator, snapshot_factory)
    client.force_login(loader)
    page = client.get(f"/settlements/{settlement.pk}/")
    assert b"You loaded the snapshot behind this settlement" in page.content
    assert f"/settlements/{settlement.pk}/approve/".encode() not in page.content
    refused = client.post(f"/settlements/{settlement.pk}/approve/", {"confirm": "on"})
    assert b"You loaded the snapshot" in refused.content
    settlement.refresh_from_db()
    assert settlement.status == "awaiting_approval"
