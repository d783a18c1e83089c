"""The second opinion on a settlement: each remaining player's stack valued by the Independent
Chip Model (settlements.rules.icm), beside what the policy pays them.

A reference for the Tournament Manager, never a payment: nothing here reaches the ledger.
Computed once, when the settlement is prepared (a large field in the background), and kept
like the settlement's other figures: the per-player rows are written once, and the events
about the settlement seal their digest (settlements.audit_log).
"""

import pgtrigger
from django.db import models
from django.db.models import Q

from settlements.models.base import BULK_LINK, ID_MAX_LENGTH, audited, non_negative
from settlements.models.settlements import Settlement
from settlements.triggers import KeepsRows, RowsHaveParent, fixed_fields, write_once


class IcmValuation(models.Model):
    class Method(models.TextChoices):
        EXACT = "exact", "Exact"
        SAMPLED = "sampled", "Sampled"

    class Status(models.TextChoices):
        RUNNING = "running", "Being computed"
        DONE = "done", "Done"

    settlement = models.OneToOneField(Settlement, on_delete=models.PROTECT, related_name="icm")
    method = models.CharField(max_length=8, choices=Method.choices)
    status = models.CharField(max_length=8, choices=Status.choices)
    players = models.PositiveIntegerField()
    # What the remaining players play for: the prizes of places 1..R (satellite seats at V).
    prizes_in_play = models.BigIntegerField()
    # Sampled only: the generator's seed and how many finishing orders are drawn, in batches.
    seed = models.BigIntegerField(null=True, blank=True)
    samples = models.PositiveIntegerField(default=0)
    # Sampled, while running: the batches folded in so far and their per-player sums, in
    # player id order; emptied when the figures are written.
    batches_done = models.JSONField(default=list, blank=True)
    running_sums = models.JSONField(default=dict, blank=True)
    # SHA-256 over the per-player rows (settlements.audit_log.icm_digest), once done.
    digest = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    history = audited(excluded_fields=["running_sums"])

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(method="exact", seed__isnull=True, samples=0)
                | Q(method="sampled", seed__isnull=False, samples__gte=2),
                name="icm_sampled_has_seed",
            ),
            models.CheckConstraint(
                condition=Q(status="running") | ~Q(digest=""), name="icm_done_has_digest"
            ),
        ]
        triggers = [
            KeepsRows(children=(("settlements_icmvalue", "valuation_id"),)),
            fixed_fields("settlement", "method", "players", "prizes_in_play", "seed", "samples"),
            # Done is final, like an approved settlement.
            pgtrigger.Protect(
                name="final_when_done",
                operation=pgtrigger.Update | pgtrigger.Delete,
                condition=pgtrigger.Q(old__status="done"),
            ),
        ]

    def __str__(self) -> str:
        return f"ICM of {self.settlement}"


class IcmValue(models.Model):
    """One remaining player's ICM value beside the policy's amount (minor units, seats at V)."""

    valuation = models.ForeignKey(IcmValuation, related_name="values", **BULK_LINK)
    # 0, 1, 2, … in player id order.
    position = models.PositiveIntegerField()
    player = models.CharField(max_length=ID_MAX_LENGTH)
    chips = models.BigIntegerField()
    chip_rank = models.PositiveIntegerField()  # 1 = most chips; ties by player id
    value = models.TextField()  # exact, "numerator/denominator" (the sample mean if sampled)
    amount = models.BigIntegerField()  # value rounded; the amounts add up to the prizes in play
    standard_error = models.BigIntegerField(default=0)  # 0 when exact
    policy_amount = models.BigIntegerField()
    # policy_amount - amount: below zero the policy pays less than the stack's ICM value.
    difference = models.BigIntegerField()

    class Meta:
        ordering = ["valuation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["valuation", "position"], name="icm_position_unique"),
            models.UniqueConstraint(fields=["valuation", "player"], name="icm_player_unique"),
            *non_negative("chips", "amount", "standard_error", "policy_amount", prefix="icm"),
        ]
        indexes = [
            # The panel lists who loses most first, a page at a time.
            models.Index(fields=["valuation", "difference", "position"], name="icm_loss_idx"),
        ]
        triggers = [write_once(), RowsHaveParent(link="valuation")]

    def __str__(self) -> str:
        return f"ICM value of {self.player}"
