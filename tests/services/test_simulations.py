"""Simulating a rulebook version over past cases: each case settled again under it in a job,
its recorded decision kept where still offered, a summary by unit; the cases untouched."""

from datetime import timedelta

import pytest
from django.utils import timezone

from settlements.errors import DomainError, NotAllowed
from settlements.models import Case, Job, Simulation
from settlements.services.decisions import decision_record
from settlements.services.rulebooks import rulebook_version_propose, simulation_start
from settlements.services.snapshots import case_load_snapshot

pytestmark = pytest.mark.django_db


def draft(actor, **parameters):
    return rulebook_version_propose(
        key="default",
        parameters=parameters,
        text="Draft.",
        effective_from=timezone.now() + timedelta(days=7),
        actor=actor,
        reason="Try it",
    )


def test_a_draft_is_simulated_over_past_cases_and_they_are_untouched(
    operator, tournament_manager, snapshot_factory
):
    # 10 % eliminated: early by default, middle under a 10 % early mark.
    early = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(stage="early", entrants=20, tournament_id="E")
    )
    late = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(stage="late", tournament_id="L")
    )
    before = {case.pk: case.history.count() for case in (early, late)}
    version = draft(tournament_manager, early_pct=10)
    simulation = simulation_start(
        version=version,
        actor=tournament_manager,
        cases=Case.objects.filter(pk__in=[early.pk, late.pk]),
        selection={"cases": [early.pk, late.pk]},
    )
    simulation.refresh_from_db()
    assert simulation.job.status == Job.Status.DONE
    assert simulation.finished_at is not None
    results = {r.case_id: r for r in simulation.results.all()}
    assert results[early.pk].stage_then == "early"
    assert results[early.pk].stage_draft == "middle"
    assert results[early.pk].differences != {}
    assert results[late.pk].totals_then == results[late.pk].totals_draft
    assert set(results[late.pk].differences["cash"]) == {0}
    summary = simulation.summary
    assert summary["cases"] == 2 and summary["needs_decision"] == []
    assert {case.pk: case.history.count() for case in (early, late)} == before


def test_a_draft_changing_amounts_counts_players_better_and_worse(
    operator, tournament_manager, snapshot_factory
):
    case = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(stage="late", tournament_id="L")
    )
    version = draft(tournament_manager, late_formula="chip_position")
    simulation = simulation_start(
        version=version,
        actor=tournament_manager,
        cases=Case.objects.filter(pk=case.pk),
        selection={},
    )
    simulation.refresh_from_db()
    (figures,) = simulation.summary["units"].values()
    assert figures["then"] == figures["draft"]
    assert figures["better"] >= 1 and figures["worse"] >= 1
    assert figures["largest_gain"] > 0 > figures["largest_loss"]


def test_only_tournament_managers_simulate_and_some_case_is_needed(operator, tournament_manager):
    version = draft(tournament_manager)
    with pytest.raises(DomainError):
        simulation_start(
            version=version, actor=tournament_manager, cases=Case.objects.none(), selection={}
        )
    with pytest.raises(NotAllowed):
        simulation_start(version=version, actor=operator, cases=Case.objects.all(), selection={})
    assert not Simulation.objects.exists()


def test_a_case_whose_decision_the_draft_no_longer_offers_is_listed(
    operator, marketing_manager, tournament_manager, snapshot_factory
):
    case = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_factory(type="freeroll", stage="early", entrants=20, tournament_id="F"),
    )
    assert case.decision_options
    decision_record(case=case, actor=marketing_manager, option="no_reschedule", reason="fair")
    # With no early stage the freeroll is in its middle stage, which offers no such answer.
    version = draft(tournament_manager, early_pct=5)
    simulation = simulation_start(
        version=version,
        actor=tournament_manager,
        cases=Case.objects.filter(pk=case.pk),
        selection={},
    )
    result = simulation.results.get()
    assert result.stage_draft == "middle" and result.needs_decision
    assert result.totals_draft == {} and result.differences == {}
    simulation.refresh_from_db()
    assert simulation.summary["needs_decision"] == [case.pk]
