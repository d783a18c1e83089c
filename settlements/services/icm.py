"""The ICM second opinion: each remaining player's stack valued when the settlement is prepared.

A small field is valued exactly inside the prepare's own transaction, so the prepare's event
seals the figures with the rest. A large one is sampled in the background: the prepare writes
the valuation with its seed and sends ``valuation_started``, on which ``services.jobs`` starts a
job with one item per batch of samples (``icm_batch_add``); the last batch writes the figures
and records their own sealed event.
"""

import secrets
from collections.abc import Sequence
from fractions import Fraction

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.dispatch import Signal
from django.utils import timezone

from settlements import audit_log
from settlements.models import (
    Event,
    IcmValuation,
    IcmValue,
    Settlement,
    SettlementPayout,
)
from settlements.rules import icm, parse_snapshot
from settlements.rules.formulas import tie_break_order
from settlements.rules.terms import terms_of
from settlements.selectors.icm import bounty_lines
from settlements.services.common import insert_rows, record_event, save_with_history

# Sent (valuation=, actor=) in the transaction that began a sampled valuation.
valuation_started = Signal()

ICM_VALUE_FIELDS = (
    "valuation",
    "position",
    "player",
    "chips",
    "chip_rank",
    "value",
    "amount",
    "standard_error",
    "policy_amount",
    "difference",
)


def icm_valuation_begin(*, settlement: Settlement, snapshot, actor) -> IcmValuation | None:
    """Value the stacks of a settlement being prepared (called inside the prepare, after its
    payouts are written); None where chips decide nothing or the policy pays no prize."""
    prizes = icm.field_prizes(snapshot, settlement.stage)
    if prizes is None or not settlement.pool_distributed:
        return None
    valuation = IcmValuation(
        settlement=settlement,
        players=len(prizes),
        prizes_in_play=sum(prizes),
        status=IcmValuation.Status.RUNNING,
    )
    if icm.fits_exact(len(prizes), prizes):
        # Only a field valued here and now is listed: a sampled one is listed by its batches.
        field = icm.field_of(snapshot, settlement.stage)
        valuation.method = IcmValuation.Method.EXACT
        save_with_history(valuation, actor=actor, reason="Stacks valued by ICM, exactly")
        values = icm.exact_equity(field.chips, field.prizes)
        seat_value = terms_of(snapshot).seat_value
        _write_values(valuation, field, values, [0] * len(values), seat_value, actor=actor)
        return valuation
    valuation.method = IcmValuation.Method.SAMPLED
    valuation.seed = secrets.randbits(62)
    valuation.samples = settings.ICM_SAMPLES
    save_with_history(valuation, actor=actor, reason="Stacks to be valued by ICM, by sampling")
    valuation_started.send(sender=IcmValuation, valuation=valuation, actor=actor)
    return valuation


def batch_labels(valuation: IcmValuation) -> list[tuple[int, str]]:
    """(batch number, label) of each batch of a sampled valuation."""
    labels, start = [], 0
    for batch, size in enumerate(icm.batch_sizes(valuation.samples)):
        labels.append((batch, f"Samples {start + 1}–{start + size}"))
        start += size
    return labels


@transaction.atomic
def icm_batch_add(*, valuation_id: int, batch: int, actor) -> IcmValuation:
    """Draw one batch of a sampled valuation and fold it in; the last one writes the figures.

    The drawing happens before the valuation is locked, so batches run side by side; a batch
    already folded in (a step run again after its worker was lost) adds nothing."""
    valuation = IcmValuation.objects.select_related("settlement__case__snapshot").get(
        pk=valuation_id
    )
    sizes = icm.batch_sizes(valuation.samples)
    if valuation.status == IcmValuation.Status.DONE or batch in valuation.batches_done:
        return valuation
    snapshot = parse_snapshot(valuation.settlement.case.snapshot.text)
    field = icm.field_of(snapshot, valuation.settlement.stage)
    sums, squares = icm.sample_batch(
        field.chips, field.prizes, seed=valuation.seed, batch=batch, size=sizes[batch]
    )
    valuation = IcmValuation.objects.select_for_update().get(pk=valuation_id)
    if batch in valuation.batches_done:
        return valuation
    running = valuation.running_sums or {"sums": [0] * len(sums), "squares": [0] * len(sums)}
    running = {
        "sums": [a + b for a, b in zip(running["sums"], sums, strict=True)],
        "squares": [a + b for a, b in zip(running["squares"], squares, strict=True)],
    }
    done = sorted([*valuation.batches_done, batch])
    if len(done) < len(sizes):
        # Progress, not a business change: kept out of the history (see the model).
        IcmValuation.objects.filter(pk=valuation_id).update(batches_done=done, running_sums=running)
        valuation.batches_done, valuation.running_sums = done, running
        return valuation
    means, errors = icm.estimate(
        icm.sure_prize(field.prizes, len(field.chips)),
        running["sums"],
        running["squares"],
        valuation.samples,
    )
    valuation.batches_done, valuation.running_sums = done, {}
    _write_values(valuation, field, means, errors, terms_of(snapshot).seat_value, actor=actor)
    record_event(
        Event.Type.ICM_VALUED,
        actor=actor,
        case=valuation.settlement.case,
        subject=valuation.settlement,
        sealed=[valuation],
        data={"method": valuation.method, "samples": valuation.samples, "seed": valuation.seed},
    )
    return valuation


def _write_values(
    valuation: IcmValuation,
    field: icm.Field,
    values: Sequence[Fraction],
    errors: Sequence[int],
    seat_value: int,
    *,
    actor,
) -> None:
    amounts = icm.round_to_units(values, field.chips, field.ids)
    policy = _policy_amounts(valuation.settlement_id, seat_value)
    ranks = [0] * len(field.ids)
    for rank, i in enumerate(tie_break_order(field.chips, field.ids, ids_sorted=True), start=1):
        ranks[i] = rank
    rows = [
        (
            valuation.pk,
            position,
            player,
            field.chips[position],
            ranks[position],
            f"{values[position].numerator}/{values[position].denominator}",
            amounts[position],
            errors[position],
            policy.get(player, 0),
            policy.get(player, 0) - amounts[position],
        )
        for position, player in enumerate(field.ids)
    ]
    insert_rows(IcmValue, ICM_VALUE_FIELDS, rows)
    valuation.digest = audit_log.icm_digest(row[1:] for row in rows)
    valuation.status = IcmValuation.Status.DONE
    valuation.finished_at = timezone.now()
    save_with_history(valuation, actor=actor, reason="ICM figures written")


def _policy_amounts(settlement_id: int, seat_value: int) -> dict[str, int]:
    """What the policy pays each remaining player from the prize pool, a seat counted at its
    value: the prize money the ICM value shares, so that the two compare like for like. A
    knock-out's bounties (the player's own and those won) are paid beside the pool, so they
    stay out of it; the review shows them apart.

    In the stages valued (middle, late) nothing is refunded from the house."""
    payouts = SettlementPayout.objects.filter(settlement_id=settlement_id, chips__gt=0)
    amounts = {
        player: cash + tdollars + tickets * seat_value
        for player, cash, tdollars, tickets in payouts.values_list(
            "player", "cash", "tdollars", "tickets"
        ).iterator(chunk_size=10_000)
    }
    bounties = (
        bounty_lines(settlement_id)
        .values("player")
        .annotate(total=Sum("amount"))
        .values_list("player", "total")
    )
    for player, total in bounties.iterator(chunk_size=10_000):
        if player in amounts:
            amounts[player] -= total
    return amounts
