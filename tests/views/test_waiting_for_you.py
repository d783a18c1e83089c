""" "Waiting for you" is read from the workflow's waiting states: every state that needs a role
shows its records on that role's dashboard and in the full queue, never to their author."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from settlements.access import roles
from settlements.selectors import dashboard
from settlements.selectors.dashboard import waiting_records, waiting_rows
from settlements.selectors.payments.lines import approved_lines
from settlements.selectors.queues import waiting_queue
from settlements.services import payments
from settlements.services import reissues as reissue_services
from settlements.services import settlements as settlement_services
from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.individual_cases import individual_case_open, prize_withdrawal_decide
from settlements.services.payments import ConfirmationEntry
from settlements.services.rulebooks import rulebook_version_propose
from settlements.workflow import (
    AWAITING,
    CaseStatus,
    CompensationStatus,
    PrizeWithdrawalStatus,
    ReissueStatus,
    RulebookVersionStatus,
    SettlementStatus,
)
from tests.views.conftest import HTMX, assert_partial, signed_in

pytestmark = pytest.mark.django_db

WAITING_PANEL = re.compile(r'aria-labelledby="waiting-title".*?</section>', re.S)


def _settlement(case, operator, *, submit: bool):
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    if not submit:
        return settlement
    return settlement_services.settlement_submit(settlement=settlement, actor=operator)


def _approved(load_case, users, tournament_id):
    case = load_case(stage="middle", tournament_id=tournament_id)
    settlement = _settlement(case, users[roles.OPERATOR], submit=True)
    return settlement_services.settlement_approve(
        settlement=settlement, actor=users["second_manager"], reason="checked"
    )


def _reissue(load_case, users):
    """A line the wallet failed to pay, proposed for payment again by the Tournament Manager."""
    _approved(load_case, users, "PAID-FAIL")
    line = next(iter(approved_lines(None)))
    failed = ConfirmationEntry(
        idempotency_key=line.key,
        status="failed",
        external_reference="closed account",
        at=timezone.now(),
        amount=line.amount,
    )
    payments.payment_confirm(actor=users[roles.CASHIER], confirmations=[failed])
    return reissue_services.reissue_propose(
        actor=users[roles.TOURNAMENT_MANAGER], idempotency_key=line.key, reason="new account"
    )


def _rejected(load_case, users):
    case = load_case(stage="late", tournament_id="REJ")
    settlement = _settlement(case, users[roles.OPERATOR], submit=True)
    settlement_services.settlement_reject(
        settlement=settlement, actor=users["second_manager"], reason="no"
    )
    return case


# How to put a record in each waiting state. A state added to workflow.AWAITING without a way
# to reach it here fails the walk below, so no queue goes untested.
BUILDERS = {
    ("settlements.Case", CaseStatus.AWAITING_DECISION): lambda load, users: load(
        type="freeroll", stage="middle", tournament_id="DECIDE"
    ),
    ("settlements.Case", CaseStatus.READY): lambda load, users: load(
        stage="late", tournament_id="READY"
    ),
    ("settlements.Case", CaseStatus.REJECTED): _rejected,
    ("settlements.Settlement", SettlementStatus.PREPARED): lambda load, users: _settlement(
        load(stage="late", tournament_id="PREP"), users[roles.OPERATOR], submit=False
    ),
    ("settlements.Settlement", SettlementStatus.AWAITING_APPROVAL): lambda load, users: _settlement(
        load(stage="late", tournament_id="SUB"), users[roles.OPERATOR], submit=True
    ),
    ("settlements.Compensation", CompensationStatus.PROPOSED): lambda load, users: (
        compensation_propose(
            case=_approved(load, users, "COMP").case,
            actor=users[roles.TOURNAMENT_MANAGER],
            reason="lag",
            entries=[CompensationEntry("p000001", 5)],
        )
    ),
    ("settlements.Reissue", ReissueStatus.PROPOSED): _reissue,
    ("settlements.PrizeWithdrawal", PrizeWithdrawalStatus.PROPOSED): lambda load, users: (
        prize_withdrawal_decide(
            case=_approved(load, users, "PRIZE").case,
            actor=users[roles.TOURNAMENT_MANAGER],
            player="p000002",
            prize="a bonus paid twice",
            outcome="withdraw",
            reason="paid twice",
            amount=100,
            unit="cash",
        )
    ),
    ("settlements.RulebookVersion", RulebookVersionStatus.PROPOSED): lambda load, users: (
        rulebook_version_propose(
            key="eu-main",
            parameters={"final_table_icm": 9},
            text="Paid by ICM at the final table.",
            effective_from=timezone.now() + timedelta(days=30),
            actor=users[roles.TOURNAMENT_MANAGER],
            reason="the new terms",
        )
    ),
    ("settlements.Case", CaseStatus.OPEN): lambda load, users: individual_case_open(
        tournament=load(stage="late", tournament_id="INDIV").tournament,
        actor=users[roles.TOURNAMENT_MANAGER],
        players=["p000003"],
        description="disconnected",
    ),
}

WAITING_STATES = [(state, status) for state in AWAITING for status in state.statuses]


def _viewer(users, role):
    # The second manager proposed nothing, so sees every proposal; the first is its author.
    return users["second_manager" if role == roles.TOURNAMENT_MANAGER else role]


@pytest.mark.parametrize(
    ("state", "status"), WAITING_STATES, ids=[f"{s.name}-{status}" for s, status in WAITING_STATES]
)
def test_every_waiting_state_is_on_its_roles_dashboard_and_queue(state, status, users, load_case):
    builder = BUILDERS.get((state.model, status))
    assert builder, f"no record is put in {state.model} {status} for the queue {state.name!r}"
    record = builder(load_case, users)
    record.refresh_from_db()
    assert record.status == status
    link = f'href="{reverse(state.opens, args=state.opens_args(record))}"'

    viewer = _viewer(users, state.role)
    client = signed_in(viewer)
    panel = WAITING_PANEL.search(client.get(reverse("dashboard")).content.decode()).group(0)
    assert f'{state.title} <span class="muted">(1)</span>' in panel
    assert link in panel
    label = f"Case #{record.pk}" if state.model == "settlements.Case" else str(record)
    assert f"{link}>{label}</a>" in panel
    # A row is read with what it shows in the queue's one query: no field left to load later.
    with CaptureQueriesContext(connection) as queries:
        rows = waiting_rows(state, waiting_records(state, viewer))
    assert (len(queries), [row["label"] for row in rows]) == (1, [label])
    queue = assert_partial(client.get(reverse("queue", args=[state.name]), **HTMX), "queue")
    assert link in queue and "1 waiting" in queue

    # Whoever made the record may not answer it: it is not their work to do.
    for field in state.not_by:
        author = getattr(record, field)
        if author is not None and roles.has_role(author, state.role):
            own = signed_in(author).get(reverse("dashboard")).content.decode()
            assert link not in WAITING_PANEL.search(own).group(0)
            assert dashboard.waiting_for(author)[state.name].count() == 0


def test_a_reissue_awaits_a_second_manager(users, load_case):
    reissue = _reissue(load_case, users)
    second = dashboard.waiting_for(users["second_manager"])
    assert list(second["reissues"]) == [reissue]
    assert not dashboard.waiting_for(users[roles.TOURNAMENT_MANAGER])["reissues"].exists()
    assert "reissues" not in dashboard.waiting_for(users[roles.OPERATOR])


def test_waiting_states_name_known_roles_queues_and_links():
    assert len({state.name for state in AWAITING}) == len(AWAITING)
    for state in AWAITING:
        assert state.role in roles.DESK_ROLES
        reverse(state.opens, args=[1] * len(state.opens_with))


def test_decisions_and_approvals_waiting_link_to_answering_them_together(users, load_case):
    case = BUILDERS["settlements.Case", CaseStatus.AWAITING_DECISION](load_case, users)
    together = f'href="{reverse("incident_decide", args=[case.incident_id])}"'
    client = signed_in(users[roles.MARKETING_MANAGER])
    assert together in client.get(reverse("dashboard")).content.decode()
    assert together in client.get(reverse("queue", args=["decisions"])).content.decode()
    settlement = BUILDERS["settlements.Settlement", SettlementStatus.AWAITING_APPROVAL](
        load_case, users
    )
    html = signed_in(users["second_manager"]).get(reverse("dashboard")).content.decode()
    assert f'href="{reverse("incident_approve", args=[settlement.case.incident_id])}"' in html


def test_a_rulebook_version_waits_for_no_incident_and_sorts_by_its_own_time(users):
    version = BUILDERS["settlements.RulebookVersion", RulebookVersionStatus.PROPOSED](None, users)
    state = dashboard.awaiting("rulebook_versions")
    manager = users["second_manager"]
    assert list(waiting_queue(manager, state, sort="tournament")) == [version]
    assert not waiting_queue(manager, state, incident=1).exists()
    (row,) = dashboard.waiting_rows(state, dashboard.waiting_records(state, manager))
    assert row["url"] == reverse("rulebook_version_approve", args=["eu-main", 1])
    assert (row["label"], row["operator_id"], row["incident_id"]) == ("eu-main v1", "", None)
