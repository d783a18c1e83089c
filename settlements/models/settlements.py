"""Settlements: the approved answer for a case, with each player's payout and ledger lines."""

from django.db import models
from django.db.models import F, Q

from settlements.models.base import BULK_LINK, ID_MAX_LENGTH, USER, audited, non_negative
from settlements.models.choices import LineKind, Source, Stage, Unit
from settlements.models.crashes import Case
from settlements.triggers import (
    FollowsWorkflow,
    KeepsRows,
    RowsHaveParent,
    final_when_approved,
    fixed_fields,
    write_once,
)
from settlements.workflow import SETTLEMENT_FLOW, SettlementStatus

SETTLEMENT_FIXED = (
    "case",
    "kind",
    "corrects",
    "currency",
    "stage",
    "remedy",
    "decision",
    "policy",
    "engine_version",
    "entrants",
    "eliminated",
    "remaining",
    "pool",
    "pool_distributed",
    "totals",
    "line_count",
    "payout_count",
    "ledger_digest",
    "note",
    "loaded_by",
    "prepared_by",
    "prepared_at",
)


class Settlement(models.Model):
    class Kind(models.TextChoices):
        SETTLEMENT = "settlement", "Settlement"
        ADJUSTMENT = "adjustment", "Adjustment"

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="settlements")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.SETTLEMENT)
    corrects = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="adjustments"
    )
    status = models.CharField(max_length=24, choices=SettlementStatus.choices)

    # The engine's output (for an adjustment: copied from the settlement it corrects).
    currency = models.CharField(max_length=3)
    stage = models.CharField(max_length=8, choices=Stage.choices)
    remedy = models.CharField(max_length=32, blank=True)
    decision = models.CharField(max_length=32, blank=True)
    policy = models.JSONField(default=dict)
    engine_version = models.CharField(max_length=32, blank=True)
    entrants = models.PositiveIntegerField()
    eliminated = models.PositiveIntegerField()
    remaining = models.PositiveIntegerField()
    pool = models.BigIntegerField()
    # Empty for an adjustment: its effect on the pool is in ``totals`` (it may be negative).
    pool_distributed = models.BigIntegerField(null=True, blank=True)
    # {unit: {source: amount}} over the lines (reversals of an adjustment count negative).
    totals = models.JSONField(default=dict)
    # What the engine built the amounts from (rules.Basis as JSON): the tournament's figures
    # and its split's; the players' statements show them. Empty for an adjustment.
    basis = models.JSONField(default=dict, blank=True)
    line_count = models.PositiveIntegerField(default=0)
    payout_count = models.PositiveIntegerField(default=0)
    # SHA-256 over the ledger lines in line order (settlements.audit_log.ledger_digest).
    ledger_digest = models.CharField(max_length=64, blank=True)

    note = models.TextField("preparer's note or reason", blank=True)
    # Who loaded the case's snapshot, which set every amount: kept here so that the database
    # can refuse them as the approver (approver_is_not_loader). Empty only on a settlement its
    # loader approved before that rule (migration 0019 leaves those as they were).
    loaded_by = models.ForeignKey(
        USER,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name="snapshot loaded by",
    )
    prepared_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    prepared_at = models.DateTimeField(auto_now_add=True)
    submitted_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    submitted_at = models.DateTimeField(null=True, blank=True)
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
        ordering = ["-prepared_at", "-id"]
        constraints = [
            # Adjustments are separate approved records, so they are outside this rule.
            models.UniqueConstraint(
                fields=["case"],
                condition=Q(kind="settlement", status="approved"),
                name="one_approved_settlement_per_case",
            ),
            # At most one settlement in flight per case: a double-clicked "prepare" makes one.
            models.UniqueConstraint(
                fields=["case"],
                condition=Q(kind="settlement", status__in=["prepared", "awaiting_approval"]),
                name="one_open_settlement_per_case",
            ),
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True) | ~Q(approved_by=F("prepared_by")),
                name="approver_is_not_preparer",
            ),
            models.CheckConstraint(
                condition=Q(rejected_by__isnull=True) | ~Q(rejected_by=F("prepared_by")),
                name="rejecter_is_not_preparer",
            ),
            # Separation of duties on the data: whoever set the amounts (loading the snapshot)
            # or sent them for approval does not approve them.
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True) | ~Q(approved_by=F("loaded_by")),
                name="approver_is_not_loader",
            ),
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True)
                | Q(submitted_by__isnull=True)
                | ~Q(approved_by=F("submitted_by")),
                name="approver_is_not_submitter",
            ),
            models.CheckConstraint(
                condition=Q(status="approved", approved_by__isnull=False)
                | (~Q(status="approved") & Q(approved_by__isnull=True)),
                name="approved_settlement_has_approver",
            ),
            models.CheckConstraint(
                condition=Q(kind="settlement", corrects__isnull=True)
                | Q(kind="adjustment", corrects__isnull=False),
                name="adjustment_corrects_a_settlement",
            ),
            *non_negative("pool", "pool_distributed", prefix="settlement"),
        ]
        indexes = [
            models.Index(fields=["status", "-prepared_at"], name="settlement_status_idx"),
            # An incident's settlements in one state (the approval of an outage's 2,000): one
            # probe per case, whatever PostgreSQL's statistics say. Without it, on figures not
            # yet analysed after a large load, the planner looped over the cases scanning
            # every settlement in that state for each (180 ms at 2,000).
            models.Index(fields=["case", "status"], name="settlement_case_status_idx"),
        ]
        triggers = [
            KeepsRows(
                children=(
                    ("settlements_settlementpayout", "settlement_id"),
                    ("settlements_settlementline", "settlement_id"),
                )
            ),
            final_when_approved(),
            FollowsWorkflow(flow=SETTLEMENT_FLOW, preparer="prepared_by"),
            # What the engine computed and the preparer wrote; a review only adds its verdict.
            fixed_fields(*SETTLEMENT_FIXED),
        ]

    # What __str__ reads: a list of labels loads these fields alone.
    LABEL_FIELDS = ("kind",)

    def __str__(self) -> str:
        label = "Adjustment" if self.kind == self.Kind.ADJUSTMENT else "Settlement"
        return f"{label} #{self.pk}"

    @property
    def is_adjustment(self) -> bool:
        return self.kind == self.Kind.ADJUSTMENT


class SettlementPayout(models.Model):
    """One player's totals in a settlement with the engine's explanation of the amount.

    The explanation fields are empty for players paid only refunds. Fractions are stored
    exactly as "numerator/denominator". ``weight`` is filled for chip position only (the chip
    formulas weigh players by their chips); the places by chips for chip position and for a
    satellite's seats by rank.
    """

    # Keyed like the entrants (models.crashes.CasePlayer), by the settlement and a position 0,
    # 1, 2, … in the engine's order (player ids in code-point order): a review page is a range
    # of positions, found through the key however deep into 300,000 payouts it is.
    pk = models.CompositePrimaryKey("settlement", "position")
    settlement = models.ForeignKey(Settlement, related_name="payouts", **BULK_LINK)
    position = models.PositiveIntegerField()
    player = models.CharField(max_length=ID_MAX_LENGTH)
    chips = models.BigIntegerField()
    cash = models.BigIntegerField(default=0)
    tdollars = models.BigIntegerField(default=0)
    tickets = models.BigIntegerField(default=0)
    fpp = models.BigIntegerField(default=0)
    guaranteed = models.BigIntegerField(null=True, blank=True)
    share = models.TextField(blank=True)
    exact = models.TextField(blank=True)
    capped = models.BooleanField(null=True, blank=True)
    rounding_cent = models.SmallIntegerField(null=True, blank=True)
    weight = models.TextField(blank=True)
    place_first = models.PositiveIntegerField(null=True, blank=True)
    place_last = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["settlement", "position"]
        constraints = [
            models.UniqueConstraint(fields=["settlement", "player"], name="payout_player_unique"),
            *non_negative(
                "chips", "cash", "tdollars", "tickets", "fpp", "guaranteed", prefix="payout"
            ),
        ]
        triggers = [write_once(), RowsHaveParent(link="settlement")]

    def __str__(self) -> str:
        return f"Payout to {self.player}"


class SettlementLine(models.Model):
    """One ledger line; never changed. A reversal (only in adjustments) takes money back."""

    # Keyed by the settlement and the line's number, the order of the ledger, its digest and
    # the payments' links to released lines (models.crashes.CasePlayer says why no id).
    pk = models.CompositePrimaryKey("settlement", "line_no")
    settlement = models.ForeignKey(Settlement, related_name="lines", **BULK_LINK)
    line_no = models.PositiveIntegerField()
    player = models.CharField(max_length=ID_MAX_LENGTH)
    kind = models.CharField(max_length=16, choices=LineKind.choices)
    unit = models.CharField(max_length=8, choices=Unit.choices)
    amount = models.BigIntegerField()
    source = models.CharField(max_length=8, choices=Source.choices)
    reversal = models.BooleanField(default=False)

    class Meta:
        ordering = ["settlement", "line_no"]
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="line_amount_positive"),
        ]
        indexes = [
            # Player first: a player's lines across every settlement (the players page's
            # totals) read through it, and so does every look-up of some players' lines within
            # one settlement (the review, a statement, an adjustment's check). One index for
            # both, since each costs a second of COPY per 810,000 lines. Settlement first would
            # append a new settlement's lines at the end, where player first puts them among
            # every earlier settlement's lines of the same players (0.8-1.0 CPU s for 360,000
            # lines with a few settlements there, against 0.4-0.6), but a player's totals
            # over 4,000 cases would take 19.5 ms instead of 1.5 (docs/benchmarks.md).
            models.Index(fields=["player", "settlement"], name="line_by_player_idx"),
        ]
        triggers = [write_once(), RowsHaveParent(link="settlement")]

    def __str__(self) -> str:
        return f"Line {self.line_no}: {self.player} {self.kind} {self.signed_amount} {self.unit}"

    @property
    def signed_amount(self) -> int:
        return -self.amount if self.reversal else self.amount
