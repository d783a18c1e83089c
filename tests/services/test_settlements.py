"""Prepare, submit, approve, reject and adjust: stored results, refusals, history, events."""

import logging
from datetime import timedelta
from fractions import Fraction

import pytest
from django.utils import timezone

from settlements.access import roles
from settlements.errors import DomainError, InvalidTransition, NotAllowed
from settlements.models import Event, Settlement, SettlementLine, SettlementPayout
from settlements.rules import parse_snapshot, settle
from settlements.selectors.settlements import settlements_as_dicts
from settlements.services import settlements as settlement_services
from settlements.services.decisions import decision_record
from settlements.services.settlements import AdjustmentEntry
from settlements.services.snapshots import case_load_snapshot
from settlements.workflow import CaseStatus, SettlementStatus
from tests.conftest import make_user
from tests.services.helpers import approved, event_types, load, row_counts, submitted

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("type_", "stage", "decision"),
    [
        ("regular", "pre", None),
        ("regular", "early", None),
        ("regular", "middle", None),
        ("regular", "late", None),
        ("freeroll", "early", "no_reschedule"),
        ("freeroll", "middle", "chip_equity"),
        ("satellite", "middle", "chip_proportional"),
        ("satellite", "late", None),
    ],
)
def test_prepare_stores_exactly_what_the_engine_computes(
    operator, marketing_manager, snapshot_factory, type_, stage, decision
):
    data = snapshot_factory(type=type_, stage=stage, entrants=40)
    case = case_load_snapshot(actor=operator, snapshot=data)
    if decision:
        decision_record(
            case=case, actor=marketing_manager, option=decision, reason="as policy says"
        )
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)

    engine = settle(parse_snapshot(data), decision=decision)
    assert settlements_as_dicts([settlement]) == [engine.to_dict()]
    assert settlement.status == SettlementStatus.PREPARED
    assert settlement.prepared_by == operator
    assert settlement.line_count == len(engine.lines)
    assert settlement.payout_count == len(engine.payouts)
    case.refresh_from_db()
    assert case.status == CaseStatus.PREPARED


def test_payout_rows_carry_the_engines_explanation(operator, snapshot_factory):
    data = snapshot_factory(stage="late", entrants=40)
    case = case_load_snapshot(actor=operator, snapshot=data)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    engine = settle(parse_snapshot(data))
    assert engine.explanations
    for row in SettlementPayout.objects.filter(settlement=settlement):
        explained = engine.explanations[row.player]
        assert row.chips == explained.chips
        assert row.guaranteed == explained.guaranteed
        assert Fraction(row.share) == explained.share
        assert Fraction(row.exact) == explained.exact
        assert row.capped == explained.capped
        assert row.rounding_cent == explained.rounding_cent
        assert row.cash == explained.rounded


def test_the_settlement_keeps_the_basis_and_the_places_by_chips(operator, snapshot_factory):
    data = snapshot_factory(type="satellite", stage="late", entrants=40)
    case = case_load_snapshot(actor=operator, snapshot=data)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    engine = settle(parse_snapshot(data))
    assert engine.remedy == "satellite_rank"
    assert settlement.basis == engine.basis.to_dict()
    rows = list(SettlementPayout.objects.filter(settlement=settlement))
    assert rows
    for row in rows:
        assert (row.place_first, row.place_last) == engine.explanations[row.player].places
        assert row.weight == ""  # seats go by places, not by a weight


def test_refund_payouts_have_no_explanation(operator, snapshot_factory):
    case = load(operator, snapshot_factory, stage="pre")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    row = SettlementPayout.objects.filter(settlement=settlement).first()
    assert (row.cash, row.guaranteed, row.share, row.capped) == (1100, None, "", None)


def test_a_reschedule_is_a_settlement_that_pays_nothing(
    operator, marketing_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, type="freeroll", stage="middle")
    decision_record(
        case=case,
        actor=marketing_manager,
        option="reschedule",
        reason="Sunday slot is free",
        reschedule_at=timezone.now() + timedelta(days=7),
    )
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    assert (settlement.remedy, settlement.line_count, settlement.totals) == ("reschedule", 0, {})


def test_preparing_needs_the_decision_first(operator, snapshot_factory):
    case = load(operator, snapshot_factory, type="satellite", stage="middle")
    with pytest.raises(InvalidTransition, match="awaiting decision"):
        settlement_services.settlement_prepare(case=case, actor=operator)
    assert not Settlement.objects.exists()


def test_preparing_twice_is_refused(operator, snapshot_factory):
    case = load(operator, snapshot_factory)
    settlement_services.settlement_prepare(case=case, actor=operator)
    with pytest.raises(InvalidTransition, match="it is prepared"):
        settlement_services.settlement_prepare(case=case, actor=operator)
    assert Settlement.objects.count() == 1


@pytest.mark.parametrize("who", ["marketing_manager", "tournament_manager", "auditor", "none"])
def test_only_operators_prepare(users, operator, snapshot_factory, who):
    case = load(operator, snapshot_factory)
    with pytest.raises(NotAllowed):
        settlement_services.settlement_prepare(case=case, actor=users[who])


def test_the_full_path_to_approval(operator, tournament_manager, snapshot_factory):
    case = load(operator, snapshot_factory)
    settlement = settlement_services.settlement_prepare(
        case=case, actor=operator, note="first pass"
    )
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    case.refresh_from_db()
    assert (settlement.status, case.status) == ("awaiting_approval", "awaiting_approval")
    assert settlement.submitted_by == operator

    settlement = settlement_services.settlement_approve(
        settlement=settlement, actor=tournament_manager, reason="numbers match"
    )
    case.refresh_from_db()
    assert (settlement.status, case.status) == ("approved", "approved")
    assert settlement.approved_by == tournament_manager
    assert settlement.review_reason == "numbers match"
    assert settlement.reviewed_at is not None

    versions = list(settlement.history.order_by("history_id"))
    assert [(v.status, v.history_user, v.history_change_reason) for v in versions] == [
        ("prepared", operator, "first pass"),
        ("awaiting_approval", operator, "Submitted for approval"),
        ("approved", tournament_manager, "numbers match"),
    ]
    assert [v.history_user for v in case.history.order_by("history_id")] == [
        operator,
        operator,
        operator,
        tournament_manager,
    ]
    assert event_types(case=case) == [
        "snapshot_loaded",
        "settlement_prepared",
        "settlement_submitted",
        "settlement_approved",
    ]
    approval = Event.objects.get(type="settlement_approved")
    assert (approval.actor, approval.subject_type, approval.subject_id) == (
        tournament_manager,
        "settlement",
        settlement.pk,
    )
    assert approval.reason == "numbers match"


def test_each_event_is_logged_once_committed(
    operator, snapshot_factory, caplog, django_capture_on_commit_callbacks
):
    with (
        caplog.at_level(logging.INFO, logger="crashdesk.events"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        case = load(operator, snapshot_factory, tournament_id="LOG-1")
    records = [r for r in caplog.records if r.name == "crashdesk.events"]
    assert [r.event_type for r in records] == [
        "tournament_created",
        "incident_reported",
        "snapshot_loaded",
    ]
    loaded = records[-1]
    assert (loaded.actor, loaded.case_id, loaded.tournament) == ("operator", case.pk, "LOG-1")
    assert loaded.event_id == Event.objects.get(type="snapshot_loaded").pk


def test_nothing_is_logged_when_the_transaction_fails(
    operator, snapshot_factory, caplog, django_capture_on_commit_callbacks
):
    data = snapshot_factory(tournament_id="LOG-2")
    case_load_snapshot(actor=operator, snapshot=data)
    with (
        caplog.at_level(logging.INFO, logger="crashdesk.events"),
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(DomainError),
    ):
        case_load_snapshot(actor=operator, snapshot=data)
    assert callbacks == []
    assert not [r for r in caplog.records if r.name == "crashdesk.events"]


def test_double_submit_has_one_effect(operator, snapshot_factory):
    settlement = submitted(operator, snapshot_factory)
    with pytest.raises(InvalidTransition, match="awaiting approval"):
        settlement_services.settlement_submit(settlement=settlement, actor=operator)
    assert event_types(type="settlement_submitted") == ["settlement_submitted"]


def test_approving_twice_has_one_effect(
    operator, tournament_manager, second_manager, snapshot_factory
):
    settlement = approved(operator, tournament_manager, snapshot_factory)
    for manager in (tournament_manager, second_manager):
        with pytest.raises(InvalidTransition, match="it is approved"):
            settlement_services.settlement_approve(settlement=settlement, actor=manager)
    settlement.refresh_from_db()
    assert settlement.approved_by == tournament_manager
    assert event_types(type="settlement_approved") == ["settlement_approved"]


def test_approving_before_submission_is_refused(operator, tournament_manager, snapshot_factory):
    settlement = settlement_services.settlement_prepare(
        case=load(operator, snapshot_factory), actor=operator
    )
    with pytest.raises(InvalidTransition, match="it is prepared"):
        settlement_services.settlement_approve(settlement=settlement, actor=tournament_manager)


def test_nobody_approves_or_rejects_their_own_preparation(django_user_model, snapshot_factory):
    both = make_user(django_user_model, "both", roles.OPERATOR, roles.TOURNAMENT_MANAGER)
    settlement = submitted(both, snapshot_factory)
    with pytest.raises(NotAllowed, match="another Tournament Manager"):
        settlement_services.settlement_approve(settlement=settlement, actor=both)
    with pytest.raises(NotAllowed, match="another Tournament Manager"):
        settlement_services.settlement_reject(settlement=settlement, actor=both, reason="mine")
    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.AWAITING_APPROVAL


def test_the_submitter_may_not_approve_either(
    django_user_model, operator, tournament_manager, snapshot_factory
):
    both = make_user(django_user_model, "both", roles.OPERATOR, roles.TOURNAMENT_MANAGER)
    settlement = settlement_services.settlement_prepare(
        case=load(operator, snapshot_factory), actor=operator
    )
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=both)
    with pytest.raises(NotAllowed, match="You submitted"):
        settlement_services.settlement_approve(settlement=settlement, actor=both)
    settlement_services.settlement_approve(settlement=settlement, actor=tournament_manager)


@pytest.mark.parametrize("who", ["operator", "marketing_manager", "auditor", "none"])
def test_only_tournament_managers_approve(users, snapshot_factory, who):
    settlement = submitted(users["operator"], snapshot_factory)
    with pytest.raises(NotAllowed):
        settlement_services.settlement_approve(settlement=settlement, actor=users[who])
    with pytest.raises(NotAllowed):
        settlement_services.settlement_reject(settlement=settlement, actor=users[who], reason="no")


def test_rejection_needs_a_reason_and_reopens_the_case(
    operator, tournament_manager, snapshot_factory
):
    settlement = submitted(operator, snapshot_factory)
    with pytest.raises(DomainError, match="reason"):
        settlement_services.settlement_reject(
            settlement=settlement, actor=tournament_manager, reason="  "
        )
    settlement = settlement_services.settlement_reject(
        settlement=settlement, actor=tournament_manager, reason="wrong start time"
    )
    case = settlement.case
    case.refresh_from_db()
    assert (settlement.status, case.status) == ("rejected", "rejected")
    assert (settlement.rejected_by, settlement.review_reason) == (
        tournament_manager,
        "wrong start time",
    )
    again = settlement_services.settlement_prepare(case=case, actor=operator)
    assert again.pk != settlement.pk
    settlement.refresh_from_db()
    assert settlement.status == "rejected"
    assert Event.objects.get(type="settlement_rejected").reason == "wrong start time"


def test_after_a_rejection_the_decision_can_be_changed(
    operator, marketing_manager, tournament_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, type="satellite", stage="middle")
    decision_record(
        case=case, actor=marketing_manager, option="chip_proportional", reason="first view"
    )
    settlement = settlement_services.settlement_submit(
        settlement=settlement_services.settlement_prepare(case=case, actor=operator), actor=operator
    )
    settlement_services.settlement_reject(
        settlement=settlement, actor=tournament_manager, reason="site prefers chip equity"
    )
    decision_record(
        case=case, actor=marketing_manager, option="chip_equity", reason="manager's advice"
    )
    again = settlement_services.settlement_prepare(case=case, actor=operator)
    assert (again.decision, again.remedy) == ("chip_equity", "chip_equity")


# --- Adjustments ------------------------------------------------------------------------------


def _first_line(settlement):
    return SettlementLine.objects.filter(settlement=settlement).order_by("line_no").first()


def test_an_adjustment_is_a_new_linked_record_and_never_edits_the_original(
    operator, tournament_manager, second_manager, snapshot_factory
):
    original = approved(operator, tournament_manager, snapshot_factory)
    line = _first_line(original)
    versions_before = original.history.count()
    lines_before = list(original.lines.values_list("player", "amount"))

    adjustment = settlement_services.settlement_adjust(
        settlement=original,
        actor=operator,
        reason="one chip count was misread",
        entries=[
            AdjustmentEntry(line.player, line.kind, line.unit, -100, line.source),
            AdjustmentEntry("p000002", "prize", "cash", 100, "pool"),
        ],
    )
    assert (adjustment.kind, adjustment.corrects, adjustment.status) == (
        "adjustment",
        original,
        "prepared",
    )
    assert adjustment.totals == {"cash": {"pool": 0}}
    reversal, extra = adjustment.lines.order_by("line_no")
    assert (reversal.reversal, reversal.amount, reversal.signed_amount) == (True, 100, -100)
    assert (extra.reversal, extra.amount) == (False, 100)

    settlement_services.settlement_submit(settlement=adjustment, actor=operator)
    adjustment = settlement_services.settlement_approve(settlement=adjustment, actor=second_manager)
    assert adjustment.status == "approved"
    original.refresh_from_db()
    assert original.history.count() == versions_before
    assert list(original.lines.values_list("player", "amount")) == lines_before
    assert original.case.status == CaseStatus.APPROVED
    assert "adjustment_prepared" in event_types(case=original.case)


def test_an_adjustment_cannot_take_back_more_than_was_paid(
    operator, tournament_manager, second_manager, snapshot_factory
):
    original = approved(operator, tournament_manager, snapshot_factory)
    line = _first_line(original)
    take_back = AdjustmentEntry(line.player, line.kind, line.unit, -line.amount, line.source)
    with pytest.raises(DomainError, match="take back more"):
        settlement_services.settlement_adjust(
            settlement=original,
            actor=operator,
            reason="r",
            entries=[
                AdjustmentEntry(line.player, line.kind, line.unit, -line.amount - 1, line.source)
            ],
        )
    # Two corrections that each fit but together take back too much: the second approval fails.
    first = settlement_services.settlement_adjust(
        settlement=original, actor=operator, reason="r", entries=[take_back]
    )
    second = settlement_services.settlement_adjust(
        settlement=original, actor=operator, reason="r", entries=[take_back]
    )
    for adjustment in (first, second):
        settlement_services.settlement_submit(settlement=adjustment, actor=operator)
    settlement_services.settlement_approve(settlement=first, actor=second_manager)
    with pytest.raises(DomainError, match="take back more"):
        settlement_services.settlement_approve(settlement=second, actor=second_manager)
    second.refresh_from_db()
    assert second.status == "awaiting_approval"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (AdjustmentEntry("ghost", "prize", "cash", 10, "pool"), "not an entrant"),
        (AdjustmentEntry("p000001", "bonus", "cash", 10, "pool"), "unknown kind"),
        (AdjustmentEntry("p000001", "refund_fee", "cash", 10, "pool"), "from the house"),
        (AdjustmentEntry("p000001", "prize", "fpp", 10, "pool"), "cash or tdollars"),
        (AdjustmentEntry("p000001", "prize", "cash", 0, "pool"), "non-zero"),
        (AdjustmentEntry("p000001", "prize", "cash", True, "pool"), "non-zero"),
    ],
)
def test_malformed_corrections_are_refused(
    operator, tournament_manager, snapshot_factory, entry, message
):
    original = approved(operator, tournament_manager, snapshot_factory)
    with pytest.raises(DomainError, match=message):
        settlement_services.settlement_adjust(
            settlement=original, actor=operator, reason="fix", entries=[entry]
        )
    assert not Settlement.objects.filter(kind="adjustment").exists()


def test_only_an_approved_settlement_can_be_adjusted(operator, snapshot_factory):
    settlement = submitted(operator, snapshot_factory)
    before = row_counts()
    with pytest.raises(InvalidTransition, match="Only an approved settlement"):
        settlement_services.settlement_adjust(
            settlement=settlement,
            actor=operator,
            reason="fix",
            entries=[AdjustmentEntry("p000001", "prize", "cash", 1, "pool")],
        )
    assert row_counts() == before


def test_an_adjustment_needs_a_reason_and_entries(operator, tournament_manager, snapshot_factory):
    original = approved(operator, tournament_manager, snapshot_factory)
    entry = AdjustmentEntry("p000001", "prize", "cash", 1, "pool")
    with pytest.raises(DomainError, match="reason"):
        settlement_services.settlement_adjust(
            settlement=original, actor=operator, reason="", entries=[entry]
        )
    with pytest.raises(DomainError, match="at least one"):
        settlement_services.settlement_adjust(
            settlement=original, actor=operator, reason="x", entries=[]
        )
    with pytest.raises(NotAllowed):
        settlement_services.settlement_adjust(
            settlement=original,
            actor=make_user(type(operator), "mm", roles.MARKETING_MANAGER),
            reason="x",
            entries=[entry],
        )
