"""The ICM second opinion written when a settlement is prepared: exact inline, sampled in the
background, and sealed like the settlement's other figures."""

from fractions import Fraction

import pgtrigger
import pytest
from django.db import DatabaseError, transaction

from settlements import audit_log, site_policy
from settlements.errors import DomainError
from settlements.models import (
    Event,
    IcmValuation,
    IcmValue,
    Job,
    JobItem,
    SettlementLine,
    SettlementPayout,
)
from settlements.rules import icm, parse_snapshot
from settlements.selectors.icm import icm_rows_by_loss
from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.decisions import decision_record
from settlements.services.icm import icm_batch_add
from settlements.services.settlements import settlement_prepare
from tests.services.helpers import load

pytestmark = pytest.mark.django_db


def prepared(operator, snapshot_factory, **kwargs):
    case = load(operator, snapshot_factory, **kwargs)
    return settlement_prepare(case=case, actor=operator)


def test_a_small_field_is_valued_exactly_and_sealed_by_the_prepare(operator, snapshot_factory):
    settlement = prepared(operator, snapshot_factory, stage="late", entrants=20)
    valuation = IcmValuation.objects.get(settlement=settlement)
    assert (valuation.method, valuation.status, valuation.seed) == ("exact", "done", None)
    rows = list(IcmValue.objects.filter(valuation=valuation).order_by("position"))
    assert [row.chip_rank for row in rows] == [1, 2, 3]
    assert sum(row.amount for row in rows) == valuation.prizes_in_play == settlement.pool
    snapshot = parse_snapshot(settlement.case.snapshot.text)
    field = icm.field_of(snapshot, "late")
    assert [Fraction(row.value) for row in rows] == icm.exact_equity(field.chips, field.prizes)
    payouts = SettlementPayout.objects.filter(settlement=settlement)
    payouts = dict(payouts.values_list("player", "cash"))
    for row in rows:
        assert row.policy_amount == payouts[row.player]
        assert row.difference == row.policy_amount - row.amount
    event = Event.objects.get(type=Event.Type.SETTLEMENT_PREPARED, subject_id=settlement.pk)
    assert event.subject_facts["icm"] == valuation.digest
    assert audit_log.verify().ok


def test_satellite_seats_count_at_their_ticket_value(operator, snapshot_factory):
    settlement = prepared(operator, snapshot_factory, type="satellite", stage="late", entrants=20)
    rows = IcmValue.objects.filter(valuation__settlement=settlement)
    seat = parse_snapshot(settlement.case.snapshot.text).tournament.seat_value
    payouts = SettlementPayout.objects.filter(settlement=settlement, chips__gt=0)
    expected = {p.player: p.cash + p.tdollars + p.tickets * seat for p in payouts}
    assert {row.player: row.policy_amount for row in rows} == expected


@pytest.mark.parametrize("stage", ["pre", "early"])
def test_no_valuation_where_chips_decide_nothing(operator, snapshot_factory, stage):
    settlement = prepared(operator, snapshot_factory, stage=stage, entrants=20)
    assert not IcmValuation.objects.filter(settlement=settlement).exists()


def test_a_large_field_is_sampled_by_a_background_job(operator, snapshot_factory, settings):
    settings.ICM_SAMPLES = 250
    # 100 players left for three prizes: beyond the exact way's budget.
    settlement = prepared(operator, snapshot_factory, stage="middle", entrants=200)
    valuation = IcmValuation.objects.get(settlement=settlement)
    assert (valuation.method, valuation.status, valuation.samples) == ("sampled", "done", 250)
    job = Job.objects.get(kind=Job.Kind.ICM)
    assert job.status == Job.Status.DONE
    assert list(job.items.values_list("label", "status")) == [
        ("Samples 1–100", JobItem.Status.DONE),
        ("Samples 101–200", JobItem.Status.DONE),
        ("Samples 201–250", JobItem.Status.DONE),
    ]
    # The figures are the engine's for the stored seed: reproducible from it.
    field = icm.field_of(parse_snapshot(settlement.case.snapshot.text), "middle")
    means, errors = icm.sampled_equity(field.chips, field.prizes, seed=valuation.seed, samples=250)
    rows = IcmValue.objects.filter(valuation=valuation).order_by("position")
    figures = [(Fraction(r.value), r.standard_error) for r in rows]
    assert figures == list(zip(means, errors, strict=True))
    assert valuation.running_sums == {}
    event = Event.objects.get(type=Event.Type.ICM_VALUED)
    assert event.subject_facts["icm"] == valuation.digest
    assert event.data == {"method": "sampled", "samples": 250, "seed": valuation.seed}
    assert audit_log.verify().ok


def test_a_batch_run_again_adds_nothing(operator, snapshot_factory, settings):
    settings.ICM_SAMPLES = 200
    settlement = prepared(operator, snapshot_factory, stage="middle", entrants=200)
    valuation = IcmValuation.objects.get(settlement=settlement)
    again = icm_batch_add(valuation_id=valuation.pk, batch=0, actor=operator)
    assert again.status == "done"
    assert IcmValue.objects.filter(valuation=valuation).count() == valuation.players


def test_the_figures_are_written_once(operator, snapshot_factory):
    settlement = prepared(operator, snapshot_factory, stage="late", entrants=20)
    valuation = IcmValuation.objects.get(settlement=settlement)
    with pytest.raises(DatabaseError, match="pgtrigger"), transaction.atomic():
        IcmValue.objects.filter(valuation=valuation).update(amount=1)
    with pytest.raises(DatabaseError, match="pgtrigger"), transaction.atomic():
        IcmValuation.objects.filter(pk=valuation.pk).update(digest="0" * 64)


def test_a_changed_figure_breaks_the_seal(operator, snapshot_factory):
    settlement = prepared(operator, snapshot_factory, stage="late", entrants=20)
    with pgtrigger.ignore("settlements.IcmValue:write_once"):
        IcmValue.objects.filter(valuation__settlement=settlement, chip_rank=1).update(amount=1)
    result = audit_log.verify()
    assert not result.ok
    assert "icm" in result.problem


def test_compensation_from_the_comparison_records_its_figures(
    operator, tournament_manager, snapshot_factory, settings
):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = 1, 1
    settlement = prepared(operator, snapshot_factory, stage="late", entrants=20)
    loser = IcmValue.objects.filter(valuation__settlement=settlement).order_by("difference")[0]
    assert loser.difference < 0
    compensation = compensation_propose(
        case=settlement.case,
        actor=tournament_manager,
        reason="short of ICM",
        entries=[CompensationEntry(player=loser.player, amount=-loser.difference)],
        from_icm=True,
    )
    assert compensation.icm_figures["valuation"] == settlement.icm.pk
    assert compensation.icm_figures["flag"] == {"percent": 1, "min_amount": 1}
    assert compensation.icm_figures["players"] == {
        loser.player: {
            "policy": loser.policy_amount,
            "icm": loser.amount,
            "difference": loser.difference,
        }
    }
    event = Event.objects.get(type=Event.Type.COMPENSATION_PROPOSED)
    assert event.data["from_icm"] == settlement.icm.pk


def test_no_compensation_from_a_comparison_that_is_not_there(
    operator, tournament_manager, snapshot_factory
):
    settlement = prepared(operator, snapshot_factory, stage="early", entrants=20)
    with pytest.raises(DomainError, match="no ICM comparison"):
        compensation_propose(
            case=settlement.case,
            actor=tournament_manager,
            reason="short of ICM",
            entries=[CompensationEntry(player="p000001", amount=100)],
            from_icm=True,
        )


@pytest.mark.parametrize(("option", "valued"), [("reschedule", False), ("chip_equity", True)])
def test_a_freeroll_rescheduled_pays_nothing_and_is_not_compared(
    operator, marketing_manager, snapshot_factory, option, valued
):
    # Its players play again on the new date: there is no split to hold against their stacks.
    case = load(operator, snapshot_factory, type="freeroll", stage="middle", entrants=20)
    decision_record(
        case=case,
        actor=marketing_manager,
        option=option,
        reason="the players asked",
        reschedule_at=case.created_at.replace(year=case.created_at.year + 1)
        if option == "reschedule"
        else None,
    )
    settlement = settlement_prepare(case=case, actor=operator)
    assert IcmValuation.objects.filter(settlement=settlement).exists() == valued


def test_a_knock_outs_bounties_stay_out_of_the_comparison(operator, snapshot_factory):
    """ICM shares the prize pool only, so the policy's side is prize money too: a player's
    bounties are paid besides, and counting them would hide a shortfall as large as they are."""
    settlement = prepared(operator, snapshot_factory, stage="late", entrants=20, rebuys=True)
    valuation = IcmValuation.objects.get(settlement=settlement)
    bounties = {}
    for line in SettlementLine.objects.filter(settlement=settlement, kind__in=["bounty"]):
        bounties[line.player] = bounties.get(line.player, 0) + line.amount
    assert bounties, "the knock-out's remaining players hold bounties"
    payouts = dict(
        SettlementPayout.objects.filter(settlement=settlement).values_list("player", "cash")
    )
    rows = IcmValue.objects.filter(valuation=valuation)
    assert sum(row.policy_amount for row in rows) == valuation.prizes_in_play
    for row in rows:
        assert row.policy_amount == payouts[row.player] - bounties.get(row.player, 0)
        assert row.difference == row.policy_amount - row.amount
    shown = {row.player: row.bounty for row in icm_rows_by_loss(valuation, site_policy.icm_flag())}
    assert shown == {row.player: bounties.get(row.player, 0) for row in rows}
