"""The database itself refuses what the rules forbid, even for writes that skip the services."""

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from settlements.models import (
    Case,
    CompensationItem,
    Settlement,
    SettlementLine,
    SettlementPayout,
    Tournament,
)
from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.incidents import tournament_create
from tests.services.helpers import approved, load, submitted

pytestmark = pytest.mark.django_db


def refused(write) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        write()


def _copy(settlement: Settlement, **changes) -> Settlement:
    fields = {
        f.attname: getattr(settlement, f.attname)
        for f in Settlement._meta.concrete_fields
        if not f.primary_key
    }
    return Settlement(**{**fields, **changes})


def test_line_amounts_are_positive(operator, snapshot_factory):
    settlement = submitted(operator, snapshot_factory)
    for amount in (0, -1):
        refused(
            lambda amount=amount: SettlementLine.objects.create(
                settlement=settlement,
                line_no=999,
                player="p000001",
                kind="prize",
                unit="cash",
                amount=amount,
                source="pool",
            )
        )


def test_payout_amounts_are_not_negative(operator, snapshot_factory):
    settlement = submitted(operator, snapshot_factory)
    refused(
        lambda: SettlementPayout.objects.create(
            settlement=settlement, player="new", chips=1, cash=-1
        )
    )


def test_the_approver_is_not_the_preparer(operator, snapshot_factory):
    settlement = submitted(operator, snapshot_factory)
    settlement.status = "approved"
    settlement.approved_by = operator
    refused(settlement.save)


def test_an_approved_settlement_has_an_approver(operator, snapshot_factory):
    settlement = submitted(operator, snapshot_factory)
    settlement.status = "approved"
    refused(settlement.save)


def test_one_approved_settlement_per_case(operator, tournament_manager, snapshot_factory):
    settlement = approved(operator, tournament_manager, snapshot_factory)
    refused(_copy(settlement).save)
    # An adjustment of it is a separate record, and allowed (it starts prepared: the workflow
    # guard lets no record be inserted already approved).
    _copy(
        settlement,
        kind="adjustment",
        corrects_id=settlement.pk,
        pool_distributed=None,
        status="prepared",
        submitted_by_id=None,
        approved_by_id=None,
    ).save()


def test_one_settlement_in_flight_per_case(operator, snapshot_factory):
    settlement = submitted(operator, snapshot_factory)
    refused(_copy(settlement, status="prepared", submitted_by_id=None).save)


def test_an_adjustment_names_what_it_corrects(operator, tournament_manager, snapshot_factory):
    settlement = approved(operator, tournament_manager, snapshot_factory)
    refused(_copy(settlement, kind="adjustment", status="prepared", approved_by_id=None).save)


def test_one_crash_case_per_tournament(operator, snapshot_factory):
    case = load(operator, snapshot_factory)
    refused(
        lambda: Case.objects.create(
            kind="crash",
            incident=case.incident,
            tournament=case.tournament,
            status="ready",
            snapshot=None,
            created_by=operator,
        )
    )


def test_entrants_add_up(operator, snapshot_factory):
    case = load(operator, snapshot_factory)
    case.eliminated += 1
    refused(case.save)


def test_operator_tournament_ids_are_unique(operator):
    tournament_create(actor=operator, operator_id="U-1", type="regular", currency="USD")
    refused(lambda: Tournament.objects.create(operator_id="U-1", type="regular", currency="USD"))
    refused(
        lambda: Tournament.objects.create(operator_id="U-2", type="regular", currency="USD", fee=-1)
    )


def test_compensation_rules(operator, tournament_manager, snapshot_factory):
    settlement = submitted(operator, snapshot_factory)
    compensation = compensation_propose(
        case=settlement.case,
        actor=tournament_manager,
        reason="r",
        entries=[CompensationEntry("p000001", 10)],
    )
    compensation.status = "approved"
    compensation.approved_by = tournament_manager
    compensation.reviewed_at = timezone.now()
    refused(compensation.save)
    refused(
        lambda: CompensationItem.objects.create(
            compensation=compensation, line_no=2, player="p000002", amount=0
        )
    )
