"""Compensation for injustice, and prizes given in error taken back."""

from django.db import models
from django.db.models import F, Q

from settlements.models.base import ID_MAX_LENGTH, USER, audited, non_negative
from settlements.models.choices import Unit
from settlements.models.crashes import Case
from settlements.triggers import (
    FollowsWorkflow,
    final_when_approved,
    fixed_fields,
    write_once,
)
from settlements.workflow import (
    COMPENSATION_FLOW,
    PRIZE_WITHDRAWAL_FLOW,
    CompensationStatus,
    PrizeWithdrawalStatus,
)


class Compensation(models.Model):
    """Money the house pays to named players for an injustice."""

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="compensations")
    status = models.CharField(max_length=16, choices=CompensationStatus.choices)
    currency = models.CharField(max_length=3)
    reason = models.TextField()
    proposed_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    proposed_at = models.DateTimeField(auto_now_add=True)
    approved_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    rejected_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_reason = models.TextField(blank=True)
    # {unit: amount} over the items.
    totals = models.JSONField(default=dict)
    # SHA-256 over the items in line order (settlements.audit_log.items_digest).
    items_digest = models.CharField(max_length=64, blank=True)
    # Proposed from the ICM second opinion: the valuation, the site's threshold then, and each
    # proposed player's figures ({player: {"policy", "icm", "difference"}}); empty otherwise.
    icm_figures = models.JSONField(default=dict, blank=True)

    history = audited()

    class Meta:
        ordering = ["-proposed_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True) | ~Q(approved_by=F("proposed_by")),
                name="compensation_approver_is_not_proposer",
            ),
            models.CheckConstraint(
                condition=Q(rejected_by__isnull=True) | ~Q(rejected_by=F("proposed_by")),
                name="compensation_rejecter_is_not_proposer",
            ),
        ]
        indexes = [models.Index(fields=["status", "-proposed_at"], name="compensation_status_idx")]
        triggers = [
            final_when_approved(),
            FollowsWorkflow(flow=COMPENSATION_FLOW, preparer="proposed_by"),
            fixed_fields(
                "case",
                "currency",
                "reason",
                "proposed_by",
                "proposed_at",
                "totals",
                "items_digest",
                "icm_figures",
            ),
        ]

    # What __str__ reads: a list of labels loads these fields alone.
    LABEL_FIELDS = ()

    def __str__(self) -> str:
        return f"Compensation #{self.pk}"


class CompensationItem(models.Model):
    compensation = models.ForeignKey(Compensation, on_delete=models.PROTECT, related_name="items")
    line_no = models.PositiveIntegerField()
    player = models.CharField(max_length=ID_MAX_LENGTH)
    unit = models.CharField(max_length=8, choices=Unit.choices, default=Unit.CASH)
    amount = models.BigIntegerField()

    class Meta:
        ordering = ["compensation", "line_no"]
        constraints = [
            models.UniqueConstraint(
                fields=["compensation", "line_no"], name="compensation_line_no_unique"
            ),
            models.UniqueConstraint(
                fields=["compensation", "player", "unit"], name="compensation_player_unit_unique"
            ),
            models.CheckConstraint(condition=Q(amount__gt=0), name="compensation_amount_positive"),
        ]
        triggers = [write_once()]

    def __str__(self) -> str:
        return f"{self.player}: {self.amount} {self.unit}"


class PrizeWithdrawal(models.Model):
    """A Tournament Manager's call on a prize given in error: take it back or leave it. Taking
    it back is a debit, proposed by one Tournament Manager (``decided_by``) and approved or
    rejected by another; leaving it is recorded at once (workflow.PrizeWithdrawalStatus)."""

    class Outcome(models.TextChoices):
        WITHDRAW = "withdraw", "Withdraw the prize"
        LEAVE = "leave", "Leave the prize"

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="prize_withdrawals")
    player = models.CharField(max_length=ID_MAX_LENGTH)
    prize = models.CharField("prize given in error", max_length=200)
    unit = models.CharField(max_length=8, choices=Unit.choices, blank=True)
    amount = models.BigIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    reason = models.TextField()
    decided_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    decided_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=16, choices=PrizeWithdrawalStatus.choices)
    approved_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    rejected_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_reason = models.TextField(blank=True)

    history = audited()

    class Meta:
        ordering = ["-decided_at", "-id"]
        constraints = [
            *non_negative("amount", prefix="prize_withdrawal"),
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True) | ~Q(approved_by=F("decided_by")),
                name="prize_withdrawal_approver_is_not_proposer",
            ),
            models.CheckConstraint(
                condition=Q(rejected_by__isnull=True) | ~Q(rejected_by=F("decided_by")),
                name="prize_withdrawal_rejecter_is_not_proposer",
            ),
            # Only a prize taken back waits for a second Tournament Manager.
            models.CheckConstraint(
                condition=Q(outcome="leave", status="recorded")
                | (Q(outcome="withdraw") & ~Q(status="recorded")),
                name="prize_withdrawal_status_fits_outcome",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "decided_at"], name="prize_withdrawal_status_idx")
        ]
        triggers = [
            final_when_approved(),
            FollowsWorkflow(flow=PRIZE_WITHDRAWAL_FLOW, preparer="decided_by"),
            fixed_fields(
                "case",
                "player",
                "prize",
                "unit",
                "amount",
                "outcome",
                "reason",
                "decided_by",
                "decided_at",
            ),
        ]

    # What __str__ reads: a list of labels loads these fields alone.
    LABEL_FIELDS = ("player",)

    def __str__(self) -> str:
        return f"Prize withdrawal #{self.pk} ({self.player})"
