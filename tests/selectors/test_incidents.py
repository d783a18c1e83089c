"""Reads of an incident's own pages: tournaments it may still hit, approvals chosen."""

import pytest
from django.utils import timezone

from settlements.selectors import approvals as approval_selectors
from settlements.selectors.incidents import chosen_for_approval, tournaments_without_crash_case
from settlements.services import settlements as settlement_services
from settlements.services.incidents import incident_report, tournament_create
from settlements.services.snapshots import case_load_snapshot, case_withdraw
from tests.services.helpers import load, submitted

pytestmark = pytest.mark.django_db


def test_a_tournament_can_be_hit_until_it_has_a_crash_case_in_force(operator, snapshot_factory):
    spare = tournament_create(
        actor=operator, operator_id="T-SPARE", type="regular", currency="EUR", name="Spare"
    )
    case = load(operator, snapshot_factory, tournament_id="T-CRASHED")
    assert list(tournaments_without_crash_case()) == [spare]
    assert list(tournaments_without_crash_case("spa")) == [spare]
    assert list(tournaments_without_crash_case("crashed")) == []
    # Withdrawn as loaded in error: its tournament is loaded again.
    case_withdraw(case=case, actor=operator, reason="wrong file")
    assert list(tournaments_without_crash_case("crashed")) == [case.tournament]


def test_only_the_chosen_settlements_still_awaiting_approval_are_taken(users, snapshot_factory):
    operator, manager = users["operator"], users["tournament_manager"]
    incident = incident_report(actor=operator, title="C", started_at=timezone.now())

    def submitted_in_incident(tournament_id):
        snapshot = snapshot_factory(tournament_id=tournament_id)
        case = case_load_snapshot(actor=operator, snapshot=snapshot, incident=incident)
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        return settlement_services.settlement_submit(settlement=settlement, actor=operator)

    waiting = submitted_in_incident("WAITS")
    done = settlement_services.settlement_approve(
        settlement=submitted_in_incident("DONE"), actor=manager, reason="checked"
    )
    elsewhere = submitted(operator, snapshot_factory, tournament_id="ELSEWHERE")
    chosen = chosen_for_approval(incident, {waiting.pk, done.pk, elsewhere.pk, 999_999})
    # What the approval pages show of each is read as plain values.
    assert [
        (row.pk, row.operator_id, row.totals) for row in approval_selectors.approval_rows(chosen)
    ] == [(waiting.pk, "WAITS", waiting.totals)]
    summary = approval_selectors.approval_summary(chosen, manager)
    assert [row.pk for row in approval_selectors.approval_rows(summary.to_approve)] == [waiting.pk]
    assert (summary.count, summary.skipped_count, summary.skipped) == (1, 0, [])


def test_the_summary_skips_each_settlement_the_user_may_not_approve_in_its_own_words(
    users, snapshot_factory, django_user_model
):
    from tests.conftest import make_user

    operator, manager = users["operator"], users["tournament_manager"]
    loader = make_user(django_user_model, "loader", "operator", "tournament_manager")
    incident = incident_report(actor=operator, title="C", started_at=timezone.now())
    settlements = []
    for number, (who_loads, who_prepares) in enumerate(
        [(operator, operator), (loader, operator), (operator, loader), (loader, loader)]
    ):
        snapshot = snapshot_factory(tournament_id=f"T{number}")
        case = case_load_snapshot(actor=who_loads, snapshot=snapshot, incident=incident)
        settlement = settlement_services.settlement_prepare(case=case, actor=who_prepares)
        settlements.append(
            settlement_services.settlement_submit(settlement=settlement, actor=operator)
        )
    chosen = chosen_for_approval(incident, {s.pk for s in settlements})
    summary = approval_selectors.approval_summary(chosen, loader)
    assert [row.pk for row in approval_selectors.approval_rows(summary.to_approve)] == [
        settlements[0].pk
    ]
    assert (summary.count, summary.skipped_count, summary.skipped_more) == (1, 3, 0)
    assert [(row.pk, why) for row, why in summary.skipped] == [
        (
            settlements[1].pk,
            f"You loaded the snapshot of {settlements[1]}; another Tournament "
            "Manager must approve it.",
        ),
        (
            settlements[2].pk,
            f"You prepared {settlements[2]}; another Tournament Manager must approve it.",
        ),
        (
            settlements[3].pk,
            f"You prepared {settlements[3]}; another Tournament Manager must approve it.",
        ),
    ]
    assert summary.totals == approval_selectors.unit_totals([settlements[0]])
    for_manager = approval_selectors.approval_summary(chosen, manager)
    assert [row.pk for row in approval_selectors.approval_rows(for_manager.to_approve)] == [
        s.pk for s in settlements
    ]
    assert for_manager.totals == approval_selectors.unit_totals(settlements)


def test_the_summary_adds_up_in_the_database_what_each_settlement_pays_by_currency_and_unit(
    users, snapshot_factory
):
    operator, manager = users["operator"], users["tournament_manager"]
    incident = incident_report(actor=operator, title="C", started_at=timezone.now())
    settlements = []
    for number, (type_, stage, currency) in enumerate(
        [
            ("regular", "middle", "USD"),
            ("regular", "early", "USD"),
            ("regular", "pre", "EUR"),
            ("satellite", "late", "USD"),
            ("freeroll", "late", "EUR"),
            ("regular", "late", "JPY"),
        ]
    ):
        snapshot = snapshot_factory(
            tournament_id=f"T{number}", type=type_, stage=stage, currency=currency
        )
        case = case_load_snapshot(actor=operator, snapshot=snapshot, incident=incident)
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        settlements.append(
            settlement_services.settlement_submit(settlement=settlement, actor=operator)
        )
    summary = approval_selectors.approval_summary(
        approval_selectors.awaiting_approval(incident), manager
    )
    # Refunds with fees (house), seats and T$ among them: every unit the pages show.
    assert {unit for _, unit, _ in summary.totals} >= {"cash", "tickets"}
    assert summary.totals == approval_selectors.unit_totals(settlements)
    assert summary.count == len(settlements)


def test_the_summary_names_the_first_skipped_and_counts_the_rest(
    users, snapshot_factory, django_user_model, monkeypatch
):
    from settlements.selectors import approvals
    from tests.conftest import make_user

    operator = users["operator"]
    manager = make_user(django_user_model, "loader", "operator", "tournament_manager")
    incident = incident_report(actor=operator, title="C", started_at=timezone.now())
    for number in range(3):
        snapshot = snapshot_factory(tournament_id=f"T{number}")
        case = case_load_snapshot(actor=manager, snapshot=snapshot, incident=incident)
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        settlement_services.settlement_submit(settlement=settlement, actor=operator)
    monkeypatch.setattr(approvals, "SKIPPED_SHOWN", 2)
    summary = approval_selectors.approval_summary(
        approval_selectors.awaiting_approval(incident), manager
    )
    assert (summary.count, summary.totals, list(summary.to_approve)) == (0, [], [])
    assert (summary.skipped_count, len(summary.skipped), summary.skipped_more) == (3, 2, 1)
    assert all(why.startswith("You loaded the snapshot of") for _, why in summary.skipped)
