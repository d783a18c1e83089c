"""A desk with one case waiting at each step, shared by the selector tests."""

import pytest

from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.individual_cases import individual_case_open
from settlements.services.settlements import settlement_prepare
from tests.services.helpers import approved, load, submitted


@pytest.fixture
def busy_desk(users, snapshot_factory):
    """One case waiting at each step, made by the usual people."""
    operator, manager = users["operator"], users["tournament_manager"]
    waiting_decision = load(operator, snapshot_factory, type="freeroll", stage="middle")
    ready = load(operator, snapshot_factory, tournament_id="READY")
    to_submit = settlement_prepare(
        case=load(operator, snapshot_factory, tournament_id="PREP"), actor=operator
    )
    to_approve = submitted(operator, snapshot_factory, tournament_id="SUB")
    done = approved(operator, manager, snapshot_factory, tournament_id="DONE")
    own_proposal = compensation_propose(
        case=done.case, actor=manager, reason="r", entries=[CompensationEntry("p000001", 5)]
    )
    other_proposal = compensation_propose(
        case=done.case, actor=operator, reason="r", entries=[CompensationEntry("p000002", 5)]
    )
    individual = individual_case_open(
        tournament=done.case.tournament, actor=manager, players=["p000003"], description="d"
    )
    return {
        "waiting_decision": waiting_decision,
        "ready": ready,
        "to_submit": to_submit,
        "to_approve": to_approve,
        "done": done,
        "own_proposal": own_proposal,
        "other_proposal": other_proposal,
        "individual": individual,
    }
