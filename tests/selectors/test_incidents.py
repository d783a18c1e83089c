"""Reads of an incident's own pages: tournaments it may still hit, approvals chosen."""

import pytest
from django.utils import timezone

from settlements import selectors, services
from tests.services.helpers import load, submitted

pytestmark = pytest.mark.django_db


def test_a_tournament_can_be_hit_until_it_has_a_crash_case_in_force(operator, snapshot_factory):
    spare = services.tournament_create(
        actor=operator, operator_id="T-SPARE", type="regular", currency="EUR", name="Spare"
    )
    case = load(operator, snapshot_factory, tournament_id="T-CRASHED")
    assert list(selectors.tournaments_without_crash_case()) == [spare]
    assert list(selectors.tournaments_without_crash_case("spa")) == [spare]
    assert list(selectors.tournaments_without_crash_case("crashed")) == []
    # Withdrawn as loaded in error: its tournament is loaded again.
    services.case_withdraw(case=case, actor=operator, reason="wrong file")
    assert list(selectors.tournaments_without_crash_case("crashed")) == [case.tournament]


def test_only_the_chosen_settlements_still_awaiting_approval_are_taken(users, snapshot_factory):
    operator, manager = users["operator"], users["tournament_manager"]
    incident = services.incident_report(actor=operator, title="C", started_at=timezone.now())

    def submitted_in_incident(tournament_id):
        snapshot = snapshot_factory(tournament_id=tournament_id)
        case = services.case_load_snapshot(actor=operator, snapshot=snapshot, incident=incident)
        settlement = services.settlement_prepare(case=case, actor=operator)
        return services.settlement_submit(settlement=settlement, actor=operator)

    waiting = submitted_in_incident("WAITS")
    done = services.settlement_approve(
        settlement=submitted_in_incident("DONE"), actor=manager, reason="checked"
    )
    elsewhere = submitted(operator, snapshot_factory, tournament_id="ELSEWHERE")
    chosen = selectors.chosen_for_approval(incident, {waiting.pk, done.pk, elsewhere.pk, 999_999})
    assert chosen == [waiting]
    # What the approval pages check and add up is read without the heavy rest of each row.
    (row,) = chosen
    assert {"basis", "policy"} <= row.get_deferred_fields()
    assert "payouts" in row.case.tournament.get_deferred_fields()
    assert selectors.approval_summary(chosen, manager).to_approve == [waiting]
