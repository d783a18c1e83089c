"""Where each line's payment stands, and what approved records owe a player in all."""

import pytest

from settlements.access import roles
from settlements.selectors.payments.states import player_totals, settlement_line_payments
from settlements.services import compensation as compensation_services
from settlements.services.snapshots import case_withdraw
from tests.payment_helpers import paid_out
from tests.services.helpers import approved, submitted

pytestmark = pytest.mark.django_db


def _states(settlement, lines):
    wanted = [(settlement.pk, line.line_no) for line in lines]
    found = settlement_line_payments([settlement], wanted)
    return [found[place] for place in wanted]


def test_every_outcome_of_an_approved_line(users, snapshot_factory, django_assert_num_queries):
    settlement = approved(users[roles.OPERATOR], users[roles.TOURNAMENT_MANAGER], snapshot_factory)
    out = paid_out(settlement, users)
    lines = [out.paid, out.reissued, out.failed, out.unconfirmed]
    # The releases, the answers and the re-issues; then the re-issue's release and its answers.
    with django_assert_num_queries(6):
        paid, reissued, failed, unconfirmed = _states(settlement, lines)
    assert (paid.state, paid.reference, paid.key) == ("paid", "TX-PAID", out.paid.key)
    assert paid.at is not None
    assert (reissued.state, reissued.reissued_as) == ("reissued", out.reissue_key)
    assert reissued.reference == "ACCOUNT-CLOSED"
    assert (reissued.then.state, reissued.then.reference) == ("paid", "TX-AGAIN")
    assert reissued.then.key == out.reissue_key
    assert (failed.state, failed.reference, failed.then) == ("failed", "LIMIT", None)
    assert (unconfirmed.state, unconfirmed.at) == ("unconfirmed", None)


def test_lines_not_approved_are_not_sent_and_withdrawn_ones_never_will_be(
    users, snapshot_factory, django_assert_num_queries
):
    operator = users[roles.OPERATOR]
    waiting = submitted(operator, snapshot_factory, tournament_id="WAIT")
    gone = submitted(operator, snapshot_factory, tournament_id="GONE")
    case_withdraw(case=gone.case, actor=operator, reason="loaded twice")
    gone.refresh_from_db()
    wanted = [(waiting.pk, 1), (gone.pk, 1)]
    with django_assert_num_queries(0):
        found = settlement_line_payments([waiting, gone], wanted)
    assert found[waiting.pk, 1].state == "not_sent"
    assert found[gone.pk, 1].state == "withdrawn"
    assert found[waiting.pk, 1].key == f"{waiting.pk}-1"


def test_a_players_totals_add_approved_records_across_cases_by_currency_and_unit(
    users, snapshot_factory
):
    operator, manager = users[roles.OPERATOR], users[roles.TOURNAMENT_MANAGER]
    usd = approved(operator, manager, snapshot_factory, tournament_id="USD-1", stage="pre")
    approved(operator, manager, snapshot_factory, tournament_id="USD-2", stage="pre")
    approved(
        operator, manager, snapshot_factory, tournament_id="EUR-1", stage="pre", currency="EUR"
    )
    submitted(operator, snapshot_factory, tournament_id="USD-3", stage="pre")
    compensation = compensation_services.compensation_propose(
        case=usd.case,
        actor=operator,
        reason="lag",
        entries=[compensation_services.CompensationEntry("p000001", 250)],
    )
    compensation_services.compensation_approve(
        compensation=compensation, actor=manager, reason="fair"
    )
    compensation_services.compensation_propose(
        case=usd.case,
        actor=operator,
        reason="lag again",
        entries=[compensation_services.CompensationEntry("p000001", 999)],
    )
    # Before the start everyone gets the buy-in (10.00) and fee (1.00) back: twice in USD,
    # once in EUR; the approved compensation adds 2.50 USD, the proposal waiting adds nothing.
    assert player_totals("p000001") == [
        ("EUR", "cash", 1100),
        ("USD", "cash", 2 * 1100 + 250),
    ]
    assert player_totals("nobody") == []
