"""What the cashier is told (releases and their keys) and what it says back."""

from django.db import models
from django.db.models import F, Q

from settlements.models.base import BULK_LINK, ID_MAX_LENGTH, USER, audited
from settlements.models.choices import LineKind, Source, Unit
from settlements.models.compensation import Compensation, PrizeWithdrawal
from settlements.models.crashes import Case, Incident
from settlements.models.settlements import Settlement
from settlements.triggers import (
    FollowsWorkflow,
    ReleasedOnApproval,
    ReleaseMatchesLines,
    RowsRecordedInBatch,
    final_when_approved,
    fixed_fields,
    write_once,
)
from settlements.workflow import REISSUE_FLOW, ReissueStatus


class LedgerRelease(models.Model):
    """The lines of one approved record, handed to the cashier; written once, never changed.

    Every approved line has a place in one sequence that the ledger feed follows: a release
    holds places ``first_position`` to ``last_position``, in its record's line order. Places
    are handed out under the lock that orders commits (``settlements.changes``), so a release
    commits only after every release with lower places has: a reader that has seen place n
    has seen every place below it, and nothing is ever inserted behind it.
    """

    class Record(models.TextChoices):
        SETTLEMENT = "settlement", "Settlement"
        ADJUSTMENT = "adjustment", "Adjustment"
        COMPENSATION = "compensation", "Compensation"
        PRIZE_WITHDRAWAL = "prize_withdrawal", "Prize withdrawal"
        REISSUE = "reissue", "Re-issue"

    record = models.CharField(max_length=16, choices=Record.choices)
    first_position = models.BigIntegerField(unique=True)
    last_position = models.BigIntegerField(unique=True)
    line_count = models.PositiveIntegerField()
    settlement = models.OneToOneField(
        Settlement, on_delete=models.PROTECT, null=True, blank=True, related_name="release"
    )
    compensation = models.OneToOneField(
        Compensation, on_delete=models.PROTECT, null=True, blank=True, related_name="release"
    )
    prize_withdrawal = models.OneToOneField(
        PrizeWithdrawal, on_delete=models.PROTECT, null=True, blank=True, related_name="release"
    )
    reissue = models.OneToOneField(
        "Reissue", on_delete=models.PROTECT, null=True, blank=True, related_name="release"
    )
    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="releases")
    incident = models.ForeignKey(
        Incident, on_delete=models.PROTECT, null=True, blank=True, related_name="releases"
    )
    currency = models.CharField(max_length=3)
    # {unit: amount} over the lines, signed (debits negative).
    totals = models.JSONField(default=dict)
    released_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    released_at = models.DateTimeField()

    class Meta:
        ordering = ["first_position"]
        constraints = [
            models.CheckConstraint(
                condition=Q(line_count__gte=1, first_position__gte=1)
                & Q(last_position=F("first_position") + F("line_count") - 1),
                name="release_places_add_up",
            ),
            models.CheckConstraint(
                condition=(
                    Q(record__in=["settlement", "adjustment"], settlement__isnull=False)
                    & Q(compensation__isnull=True, prize_withdrawal__isnull=True)
                    & Q(reissue__isnull=True)
                )
                | (
                    Q(record="compensation", compensation__isnull=False)
                    & Q(settlement__isnull=True, prize_withdrawal__isnull=True)
                    & Q(reissue__isnull=True)
                )
                | (
                    Q(record="prize_withdrawal", prize_withdrawal__isnull=False)
                    & Q(settlement__isnull=True, compensation__isnull=True, reissue__isnull=True)
                )
                | (
                    Q(record="reissue", reissue__isnull=False)
                    & Q(settlement__isnull=True, compensation__isnull=True)
                    & Q(prize_withdrawal__isnull=True)
                ),
                name="release_has_one_record",
            ),
        ]
        indexes = [
            models.Index(fields=["incident", "first_position"], name="release_incident_idx"),
            models.Index(fields=["case", "first_position"], name="release_case_idx"),
            models.Index(fields=["released_at"], name="release_at_idx"),
        ]
        triggers = [
            write_once(),
            ReleasedOnApproval(
                event_table="settlements_event",
                links=(
                    ("settlement", "settlement_approved"),
                    ("compensation", "compensation_approved"),
                    ("prize_withdrawal", "prize_withdrawal_approved"),
                    ("reissue", "reissue_approved"),
                ),
            ),
            # Each record's lines as (unit, signed amount): what the feed hands the cashier.
            ReleaseMatchesLines(
                lines=(
                    (
                        "settlement",
                        "SELECT unit, CASE WHEN reversal THEN -amount ELSE amount END AS amount"
                        " FROM settlements_settlementline WHERE settlement_id = {record}",
                    ),
                    (
                        "compensation",
                        "SELECT unit, amount FROM settlements_compensationitem"
                        " WHERE compensation_id = {record}",
                    ),
                    (
                        "prize_withdrawal",
                        "SELECT unit, -amount AS amount FROM settlements_prizewithdrawal"
                        " WHERE id = {record}",
                    ),
                    ("reissue", "SELECT unit, amount FROM settlements_reissue WHERE id = {record}"),
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"Release #{self.pk} ({self.get_record_display().lower()})"

    @property
    def record_id(self) -> int:
        return (
            self.settlement_id
            or self.compensation_id
            or self.prize_withdrawal_id
            or self.reissue_id
        )

    def key(self, line_no: int) -> str:
        """The idempotency key of one of its lines (the format the ledger CSVs always had)."""
        return idempotency_key(self.record, self.record_id, line_no)


KEY_PREFIXES = {
    LedgerRelease.Record.SETTLEMENT: "",
    LedgerRelease.Record.ADJUSTMENT: "",
    LedgerRelease.Record.COMPENSATION: "C",
    LedgerRelease.Record.PRIZE_WITHDRAWAL: "W",
    LedgerRelease.Record.REISSUE: "R",
}


def idempotency_key(record: str, record_id: int, line_no: int) -> str:
    """ "42-7" (settlement or adjustment 42, line 7), "C5-1" compensation, "W3-1" prize
    withdrawal, "R9-1" re-issue."""
    return f"{KEY_PREFIXES[record]}{record_id}-{line_no}"


class PaymentTally(models.Model):
    """Running counts of what the cashier said about a release's lines, kept by the payment
    services under a lock on this row, so the pages never count 810,000 confirmations.

    Every line is in one state: unconfirmed, paid, failed (and not re-issued), or re-issued
    (failed, then replaced by an approved re-issue). Amounts are {unit: signed amount}.
    """

    # The states counted, each as a number of lines ("paid_lines") and amounts ("paid").
    STATES = ("paid", "failed", "reissued")
    FIELDS = (*(f"{state}_lines" for state in STATES), *STATES)

    release = models.OneToOneField(
        LedgerRelease, on_delete=models.PROTECT, primary_key=True, related_name="tally"
    )
    paid_lines = models.PositiveIntegerField(default=0)
    failed_lines = models.PositiveIntegerField(default=0)
    reissued_lines = models.PositiveIntegerField(default=0)
    paid = models.JSONField(default=dict)
    failed = models.JSONField(default=dict)
    reissued = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Payments of {self.release}"


class PaymentConfirmation(models.Model):
    """What the cashier said about one line: paid or failed, with its own reference; written
    once, never changed. Repeating a confirmation writes nothing."""

    class Status(models.TextChoices):
        PAID = "paid", "Paid"
        FAILED = "failed", "Failed"

    # The links are checked once per batch by a trigger (RowsRecordedInBatch), not per row.
    release = models.ForeignKey(LedgerRelease, related_name="confirmations", **BULK_LINK)
    line_no = models.PositiveIntegerField()
    idempotency_key = models.CharField(max_length=40)
    player = models.CharField(max_length=ID_MAX_LENGTH)
    unit = models.CharField(max_length=8, choices=Unit.choices)
    amount = models.BigIntegerField()
    status = models.CharField(max_length=8, choices=Status.choices)
    external_reference = models.CharField(max_length=200)
    # When the cashier paid or gave up, by its clock; ``recorded_at`` is ours.
    at = models.DateTimeField()
    recorded_at = models.DateTimeField()
    # The actor of ``event``.
    recorded_by = models.ForeignKey(USER, related_name="+", **BULK_LINK)
    # The batch's business event (one per batch: who sent it, when, what it changed).
    event = models.ForeignKey("Event", related_name="confirmations", **BULK_LINK)

    class Meta:
        ordering = ["release", "line_no", "recorded_at", "id"]
        constraints = [
            # The auditor's question, answered by the database: no line is paid twice.
            models.UniqueConstraint(
                fields=["release", "line_no"], condition=Q(status="paid"), name="line_paid_once"
            ),
            models.UniqueConstraint(
                fields=["release", "line_no", "status", "external_reference"],
                name="confirmation_said_once",
            ),
            models.CheckConstraint(condition=~Q(external_reference=""), name="confirmation_ref"),
        ]
        indexes = [
            models.Index(
                fields=["release", "line_no"],
                condition=Q(status="failed"),
                name="confirmation_failed_idx",
            ),
            models.Index(fields=["event"], name="confirmation_event_idx"),
        ]
        triggers = [
            write_once(),
            RowsRecordedInBatch(parent="release", batch="event", recorder="recorded_by"),
        ]

    def __str__(self) -> str:
        return f"{self.idempotency_key} {self.status} ({self.external_reference})"


class Reissue(models.Model):
    """A failed line paid again under a new line and key, linked to the failed one: proposed
    with a reason, approved by a Tournament Manager other than the proposer. The failed
    line itself is never changed."""

    original_release = models.ForeignKey(
        LedgerRelease, on_delete=models.PROTECT, related_name="reissues"
    )
    original_line_no = models.PositiveIntegerField()
    original_key = models.CharField(max_length=40)
    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="reissues")
    incident = models.ForeignKey(
        Incident, on_delete=models.PROTECT, null=True, blank=True, related_name="reissues"
    )
    # The line again, as the feed showed it.
    player = models.CharField(max_length=ID_MAX_LENGTH)
    kind = models.CharField(max_length=16, choices=LineKind.choices)
    unit = models.CharField(max_length=8, choices=Unit.choices)
    amount = models.BigIntegerField()
    source = models.CharField(max_length=8, choices=Source.choices)
    currency = models.CharField(max_length=3)

    status = models.CharField(max_length=16, choices=ReissueStatus.choices)
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

    history = audited()

    class Meta:
        ordering = ["-proposed_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["original_release", "original_line_no"],
                condition=Q(status__in=["proposed", "approved"]),
                name="one_live_reissue_per_line",
            ),
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True) | ~Q(approved_by=F("proposed_by")),
                name="reissue_approver_is_not_proposer",
            ),
            models.CheckConstraint(
                condition=Q(rejected_by__isnull=True) | ~Q(rejected_by=F("proposed_by")),
                name="reissue_rejecter_is_not_proposer",
            ),
        ]
        indexes = [models.Index(fields=["status", "-proposed_at"], name="reissue_status_idx")]
        triggers = [
            final_when_approved(),
            FollowsWorkflow(flow=REISSUE_FLOW, preparer="proposed_by"),
            fixed_fields(
                "original_release",
                "original_line_no",
                "original_key",
                "case",
                "player",
                "kind",
                "unit",
                "amount",
                "source",
                "currency",
                "reason",
                "proposed_by",
                "proposed_at",
            ),
        ]

    # What __str__ reads: a list of labels loads these fields alone.
    LABEL_FIELDS = ("original_key",)

    def __str__(self) -> str:
        return f"Re-issue #{self.pk} of {self.original_key}"
