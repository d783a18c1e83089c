"""settlements.access.permissions: one answer to "may this user do this, now?", read without the
database, so these tests build unsaved records. That the services raise these refusals and
the pages show them is tested where each lives (tests/services, tests/views)."""

import pytest
from django.contrib.auth import get_user_model

from settlements.access import permissions, roles
from settlements.errors import InvalidTransition, NotAllowed
from settlements.models import Case, Compensation, Reissue, Settlement, Tournament
from settlements.workflow import CaseStatus, CompensationStatus, ReissueStatus, SettlementStatus

PREPARER, SUBMITTER, OTHER = 1, 2, 3


def user(pk: int, *held: str):
    person = get_user_model()(pk=pk, username=f"user{pk}")
    # What roles.user_roles caches for a request, so that no group is read.
    person._crashdesk_roles = frozenset(held)
    return person


def crash_case(status: str = CaseStatus.AWAITING_APPROVAL, **fields) -> Case:
    fields.setdefault("decision_options", [])
    tournament = Tournament(operator_id="T-1")
    return Case(pk=7, kind=Case.Kind.CRASH, status=status, tournament=tournament, **fields)


def settlement(
    status: str = SettlementStatus.AWAITING_APPROVAL,
    case_status: str = CaseStatus.AWAITING_APPROVAL,
) -> Settlement:
    return Settlement(
        pk=3,
        kind=Settlement.Kind.SETTLEMENT,
        status=status,
        case=crash_case(case_status),
        prepared_by_id=PREPARER,
        submitted_by_id=SUBMITTER,
    )


def test_a_refusal_is_the_text_shown_and_raises_the_error_of_its_kind():
    refusal = permissions.Refusal("Not now.", permissions.STATE)
    assert refusal == "Not now." and isinstance(refusal, str)
    with pytest.raises(InvalidTransition, match="^Not now.$"):
        permissions.enforce(refusal)
    for kind in (permissions.ROLE, permissions.OWN_WORK):
        with pytest.raises(NotAllowed):
            permissions.enforce(permissions.Refusal("No.", kind))
    permissions.enforce(None)


def test_an_approval_asks_for_the_role_the_state_then_another_manager():
    waiting = settlement()
    manager = user(OTHER, roles.TOURNAMENT_MANAGER)
    assert permissions.settlement_approve(settlement=waiting, user=manager) is None

    refusal = permissions.settlement_approve(settlement=waiting, user=user(OTHER, roles.AUDITOR))
    assert (refusal, refusal.kind) == (
        "Only Tournament Managers may approve settlements.",
        permissions.ROLE,
    )
    for author, did in ((PREPARER, "prepared"), (SUBMITTER, "submitted")):
        refusal = permissions.settlement_reject(
            settlement=waiting, user=user(author, roles.TOURNAMENT_MANAGER)
        )
        assert refusal == f"You {did} Settlement #3; another Tournament Manager must reject it."
        assert refusal.kind == permissions.OWN_WORK

    # The state comes before the four-eyes rule: one's own approved work is simply approved.
    done = settlement(SettlementStatus.APPROVED)
    for person in (manager, user(PREPARER, roles.TOURNAMENT_MANAGER)):
        refusal = permissions.settlement_approve(settlement=done, user=person)
        assert (refusal, refusal.kind) == (
            "Cannot approve Settlement #3: it is approved.",
            permissions.STATE,
        )


def test_only_an_operator_submits_a_settlement_but_a_manager_may_submit_an_adjustment():
    prepared = settlement(SettlementStatus.PREPARED, CaseStatus.PREPARED)
    manager = user(OTHER, roles.TOURNAMENT_MANAGER)
    assert permissions.settlement_submit(settlement=prepared, user=manager) == (
        "Only Operators may submit settlements."
    )
    assert (
        permissions.settlement_submit(settlement=prepared, user=user(OTHER, roles.OPERATOR)) is None
    )
    adjustment = Settlement(
        pk=4,
        kind=Settlement.Kind.ADJUSTMENT,
        status=SettlementStatus.PREPARED,
        case=crash_case(CaseStatus.APPROVED),
        corrects=settlement(SettlementStatus.APPROVED),
    )
    # An adjustment leaves its (approved) case as it is, so the case's state is not asked.
    assert permissions.settlement_submit(settlement=adjustment, user=manager) is None


def test_approved_compensation_holds_a_withdrawal_back():
    operator = user(OTHER, roles.OPERATOR)
    case = crash_case(CaseStatus.READY)
    assert permissions.case_withdraw(case=case, user=operator, approved_compensations=[]) is None
    refusal = permissions.case_withdraw(case=case, user=operator, approved_compensations=[11, 12])
    assert refusal.startswith("Compensation #11, #12 of Case #7 (T-1) has been approved")
    assert refusal.kind == permissions.STATE
    approved = crash_case(CaseStatus.APPROVED)
    refusal = permissions.case_withdraw(case=approved, user=operator, approved_compensations=[])
    assert "has an approved settlement, so it stays" in refusal


@pytest.mark.parametrize(
    ("held", "refused"),
    [
        ((roles.OPERATOR,), False),
        ((roles.TOURNAMENT_MANAGER,), False),
        ((roles.AUDITOR,), False),
        # The review page shows every player's lines to the Marketing Manager too.
        ((roles.MARKETING_MANAGER,), False),
        ((roles.CASHIER,), True),
        ((), True),
    ],
)
def test_the_ledger_is_read_by_every_desk_role_and_no_one_else(held, refused):
    refusal = permissions.ledger_read(user=user(OTHER, *held))
    assert (refusal is not None) is refused
    if refused:
        assert refusal.kind == permissions.ROLE


@pytest.mark.parametrize(
    ("status", "has_settlement", "refused"),
    [
        (CaseStatus.READY, False, "once its settlement has been prepared"),
        (CaseStatus.PREPARED, True, None),
        (CaseStatus.WITHDRAWN, True, "was withdrawn as loaded in error"),
    ],
)
def test_compensation_answers_a_settlement_of_a_case_in_force(status, has_settlement, refused):
    refusal = permissions.compensation_propose(
        case=crash_case(status),
        user=user(OTHER, roles.OPERATOR),
        has_settlement=has_settlement,
    )
    assert refusal is None if refused is None else refused in refusal


def test_a_compensation_is_answered_once_and_not_by_its_proposer():
    proposal = Compensation(pk=5, status=CompensationStatus.PROPOSED, proposed_by_id=PREPARER)
    own = permissions.compensation_approve(
        compensation=proposal, user=user(PREPARER, roles.TOURNAMENT_MANAGER)
    )
    assert own.kind == permissions.OWN_WORK
    other = user(OTHER, roles.TOURNAMENT_MANAGER)
    assert permissions.compensation_reject(compensation=proposal, user=other) is None
    proposal.status = CompensationStatus.APPROVED
    refusal = permissions.compensation_reject(compensation=proposal, user=other)
    assert refusal.kind == permissions.STATE and "it is approved" in refusal


def test_only_the_cashier_reads_the_feed_and_confirms():
    wallet = user(OTHER, roles.CASHIER)
    assert permissions.payment_confirm(user=wallet) is None
    for role in roles.DESK_ROLES:
        refusal = permissions.payment_confirm(user=user(OTHER, role))
        assert (refusal, refusal.kind) == ("Only Cashiers may confirm payments.", permissions.ROLE)


@pytest.mark.parametrize(
    ("state", "reissued_as", "refused"),
    [
        ("failed", None, None),
        ("failed", "R4-1", "Line 9-2 already has a re-issue (R4-1)."),
        ("paid", None, "Only a failed line is re-issued; line 9-2 is paid."),
        ("unconfirmed", None, "Only a failed line is re-issued; line 9-2 is unconfirmed."),
    ],
)
def test_only_a_failed_line_is_reissued_once(state, reissued_as, refused):
    operator = user(OTHER, roles.OPERATOR)
    refusal = permissions.reissue_propose(
        user=operator, key="9-2", state=state, reissued_as=reissued_as
    )
    assert refusal == refused
    auditor = user(OTHER, roles.AUDITOR)
    refusal = permissions.reissue_propose(user=auditor, key="9-2", state="failed", reissued_as=None)
    assert refusal.kind == permissions.ROLE


def test_a_reissue_is_approved_by_another_manager_unless_the_line_was_paid():
    reissue = Reissue(pk=4, original_key="9-2", status=ReissueStatus.PROPOSED, proposed_by_id=1)
    manager = user(OTHER, roles.TOURNAMENT_MANAGER)
    assert permissions.reissue_approve(reissue=reissue, user=manager, paid_reference=None) is None
    own = permissions.reissue_approve(
        reissue=reissue, user=user(PREPARER, roles.TOURNAMENT_MANAGER), paid_reference=None
    )
    assert own.kind == permissions.OWN_WORK
    paid = permissions.reissue_approve(reissue=reissue, user=manager, paid_reference="tx-1")
    assert paid.kind == permissions.STATE and "paid after all (reference tx-1)" in paid
    reissue.status = ReissueStatus.REJECTED
    done = permissions.reissue_reject(reissue=reissue, user=manager)
    assert done == "Cannot reject Re-issue #4 of 9-2: it is rejected."
