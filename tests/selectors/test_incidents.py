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
    # What the approval pages check and add up is read as plain values.
    assert [(row.pk, row.operator_id, row.totals) for row in chosen] == [
        (waiting.pk, "WAITS", waiting.totals)
    ]
    summary = selectors.approval_summary(chosen, manager)
    assert [row.pk for row in summary.to_approve] == [waiting.pk] and not summary.skipped


def test_the_summary_skips_each_settlement_the_user_may_not_approve_in_its_own_words(
    users, snapshot_factory, django_user_model
):
    from tests.conftest import make_user

    operator, manager = users["operator"], users["tournament_manager"]
    loader = make_user(django_user_model, "loader", "operator", "tournament_manager")
    incident = services.incident_report(actor=operator, title="C", started_at=timezone.now())
    settlements = []
    for number, (who_loads, who_prepares) in enumerate(
        [(operator, operator), (loader, operator), (operator, loader), (loader, loader)]
    ):
        snapshot = snapshot_factory(tournament_id=f"T{number}")
        case = services.case_load_snapshot(actor=who_loads, snapshot=snapshot, incident=incident)
        settlement = services.settlement_prepare(case=case, actor=who_prepares)
        settlements.append(services.settlement_submit(settlement=settlement, actor=operator))
    rows = selectors.chosen_for_approval(incident, {s.pk for s in settlements})
    summary = selectors.approval_summary(rows, loader)
    assert [row.pk for row in summary.to_approve] == [settlements[0].pk]
    assert [(row.pk, why) for row, why in summary.skipped] == [
        (settlements[1].pk, f"You loaded the snapshot of {settlements[1]}; another Tournament "
         "Manager must approve it."),
        (settlements[2].pk, f"You prepared {settlements[2]}; another Tournament Manager must "
         "approve it."),
        (settlements[3].pk, f"You prepared {settlements[3]}; another Tournament Manager must "
         "approve it."),
    ]  # fmt: skip
    assert summary.totals == selectors.unit_totals([settlements[0]])
    assert [row.pk for row in selectors.approval_summary(rows, manager).to_approve] == [
        s.pk for s in settlements
    ]
