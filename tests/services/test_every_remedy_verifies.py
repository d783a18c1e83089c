"""Every remedy the rules produce settles, is approved and verifies: the chain and the rows it
seals, with and without an exported head, including settlements that pay nobody (a
rescheduled freeroll, a freeroll with no FPP buy-in), compensations and re-issues."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from settlements.models import Settlement
from settlements.rules.remedies import TABLE
from settlements.selectors.payments.lines import approved_lines
from settlements.services import compensation as compensation_services
from settlements.services import payments, rulebooks
from settlements.services import reissues as reissue_services
from settlements.services import settlements as settlement_services
from settlements.services.decisions import decision_record
from settlements.services.payments import ConfirmationEntry
from settlements.services.settlements import AdjustmentEntry

from .helpers import load

pytestmark = pytest.mark.django_db

# (type, stage, decision option or None): every cell of the table, and each option of a cell.
CASES = [
    (kind, stage, option)
    for (kind, stage), cell in TABLE.items()
    for option in ([option for option, _ in cell.options] or [None])
]


def _verifies(tmp_path) -> None:
    head = tmp_path / "head.json"
    call_command("verify_audit", export_head=str(head), stdout=StringIO())
    call_command("verify_audit", stdout=StringIO())
    call_command("verify_audit", head=str(head), stdout=StringIO())


def _settle(users, snapshot_factory, kind, stage, option, **snapshot) -> Settlement:
    operator, manager = users["operator"], users["tournament_manager"]
    case = load(operator, snapshot_factory, type=kind, stage=stage, **snapshot)
    if option is not None:
        decision_record(
            case=case,
            actor=users["marketing_manager"],
            option=option,
            reason="the players were told",
            reschedule_at=timezone.now() + timedelta(days=7) if option == "reschedule" else None,
        )
        case.refresh_from_db()
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    return settlement_services.settlement_approve(
        settlement=settlement, actor=manager, reason="checked"
    )


@pytest.mark.parametrize(("kind", "stage", "option"), CASES)
def test_each_remedy_settles_approves_and_verifies(
    users, snapshot_factory, tmp_path, kind, stage, option
):
    settlement = _settle(users, snapshot_factory, kind, stage, option)
    assert settlement.status == "approved"
    _verifies(tmp_path)


def test_a_rescheduled_freeroll_pays_nobody_and_verifies(users, snapshot_factory, tmp_path):
    settlement = _settle(users, snapshot_factory, "freeroll", "middle", "reschedule")
    assert settlement.payout_count == 0 and settlement.line_count == 0
    _verifies(tmp_path)


def test_a_freeroll_with_no_fpp_buy_in_refunds_nothing_and_verifies(
    users, snapshot_factory, tmp_path
):
    settlement = _settle(users, snapshot_factory, "freeroll", "pre", None, fpp_buy_in=0)
    assert settlement.line_count == 0
    _verifies(tmp_path)


def test_compensations_adjustments_and_reissues_verify(users, snapshot_factory, tmp_path):
    operator, manager = users["operator"], users["tournament_manager"]
    settlement = _settle(users, snapshot_factory, "regular", "middle", None)
    compensation = compensation_services.compensation_propose(
        case=settlement.case,
        actor=operator,
        reason="lag spike",
        entries=[compensation_services.CompensationEntry(player="p000001", amount=500)],
    )
    compensation_services.compensation_approve(
        compensation=compensation, actor=manager, reason="fair"
    )
    line = settlement.lines.order_by("line_no").first()
    adjustment = settlement_services.settlement_adjust(
        settlement=settlement,
        actor=operator,
        reason="one chip count was misread",
        entries=[
            AdjustmentEntry(line.player, line.kind, line.unit, -100, line.source),
            AdjustmentEntry("p000002", "prize", "cash", 100, "pool"),
        ],
    )
    settlement_services.settlement_submit(settlement=adjustment, actor=operator)
    settlement_services.settlement_approve(settlement=adjustment, actor=users["second_manager"])
    line = next(iter(approved_lines(None)))
    failed = ConfirmationEntry(
        idempotency_key=line.key,
        status="failed",
        external_reference="account closed",
        at=timezone.now(),
        amount=line.amount,
    )
    payments.payment_confirm(actor=users["cashier"], confirmations=[failed])
    reissue = reissue_services.reissue_propose(
        actor=operator, idempotency_key=line.key, reason="new account"
    )
    reissue_services.reissue_approve(reissue=reissue, actor=users["second_manager"])
    _verifies(tmp_path)


def test_a_desk_with_rulebook_versions_verifies(users, second_manager, snapshot_factory, tmp_path):
    """Versions proposed, approved by another manager and withdrawn, a case settled under an
    approved one, and `default` version 1 made by the migration with no event: all verify."""
    manager = users["tournament_manager"]
    effective = timezone.now() + timedelta(days=7)

    def propose(key, **parameters):
        return rulebooks.rulebook_version_propose(
            key=key,
            parameters=parameters,
            text=f"The {key} rules.",
            effective_from=effective,
            actor=manager,
            reason="published policy",
        )

    eu = rulebooks.rulebook_version_approve(
        version=propose("eu-main", early_pct=10), actor=second_manager, reason="checked"
    )
    withdrawn = rulebooks.rulebook_version_approve(
        version=propose("ontario"), actor=second_manager, reason="checked"
    )
    rulebooks.rulebook_version_withdraw(version=withdrawn, actor=manager, reason="not yet")
    propose("default", pre_pct=10)
    starts = (effective + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    case = load(
        users["operator"], snapshot_factory, stage="early", rulebook="eu-main", starts_at=starts
    )
    assert case.rulebook_version == eu
    settlement = settlement_services.settlement_prepare(case=case, actor=users["operator"])
    settlement = settlement_services.settlement_submit(
        settlement=settlement, actor=users["operator"]
    )
    settlement_services.settlement_approve(settlement=settlement, actor=manager, reason="checked")
    _verifies(tmp_path)
