"""The audited records of the workflow.

Headers that people move through a workflow (tournaments, incidents, cases, decisions,
settlements, compensation, prize withdrawals, API tokens) keep a full version history with
simple-history. The bulky per-player rows (a snapshot's entrants, a settlement's payouts and
ledger lines, a compensation's items) are written once in bulk and never changed, so they carry
no per-row history: their header's history and the event log already say who wrote them, when
and why. Every business event also leaves an explicit ``Event`` row.

Writes go through ``settlements.services`` only.
"""

import functools
import hashlib
import hmac
import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from simple_history.manager import HistoryManager

from settlements import bounds
from settlements.triggers import (
    KeepsRows,
    RowsHaveParent,
    RowsRecordedInBatch,
    WriteOnceHistory,
    final_when_approved,
    fixed_fields,
    write_once,
)
from settlements.wording import option_label
from settlements.workflow import CaseStatus, CompensationStatus, ReissueStatus, SettlementStatus

USER = settings.AUTH_USER_MODEL
# Longest operator tournament id / player id that we store (the snapshot parser allows more;
# the load service rejects longer ones with the path of the offending field).
ID_MAX_LENGTH = 200


def validate_storable_time(value) -> None:
    """For the times the admin may edit: the services check theirs in the same way."""
    if problem := bounds.time_problem(value):
        raise ValidationError(f"This time {problem}.", code="time_range")


class _HistoryManager(HistoryManager):
    """simple-history's manager, whose class is built once per queryset class.

    ``Model.history`` makes ``HistoryManager.from_queryset(...)``, a new class, on every access
    (about 90 µs); the history browser read it eight times a view and the dashboard twice.
    """

    @classmethod
    @functools.cache
    def from_queryset(cls, queryset_class, class_name=None):
        return super().from_queryset(queryset_class, class_name)


def audited(**options) -> WriteOnceHistory:
    """The history of an audited model (every version kept, with its user and reason)."""
    return WriteOnceHistory(history_manager=_HistoryManager, **options)


class TournamentType(models.TextChoices):
    REGULAR = "regular", "Regular"
    FREEROLL = "freeroll", "Freeroll"
    SATELLITE = "satellite", "Satellite"


class Stage(models.TextChoices):
    PRE = "pre", "Pre"
    EARLY = "early", "Early"
    MIDDLE = "middle", "Middle"
    LATE = "late", "Late"


class Unit(models.TextChoices):
    CASH = "cash", "Cash"
    TDOLLARS = "tdollars", "T$"
    TICKETS = "tickets", "Tickets"
    FPP = "fpp", "FPP"


class Source(models.TextChoices):
    POOL = "pool", "Prize pool"
    HOUSE = "house", "House"


class LineKind(models.TextChoices):
    REFUND_BUY_IN = "refund_buy_in", "Buy-in refund"
    REFUND_FEE = "refund_fee", "Fee refund"
    REFUND_FPP = "refund_fpp", "FPP refund"
    PRIZE = "prize", "Prize"
    TICKET = "ticket", "Seat ticket"
    COMPENSATION = "compensation", "Compensation"
    # A debit: the player gives back a prize given in error (negative in every export).
    PRIZE_WITHDRAWAL = "prize_withdrawal", "Prize withdrawal"


def _non_negative(*fields: str, prefix: str) -> list[models.CheckConstraint]:
    return [
        models.CheckConstraint(
            condition=Q(**{f"{field}__isnull": True}) | Q(**{f"{field}__gte": 0}),
            name=f"{prefix}_{field}_non_negative",
        )
        for field in fields
    ]


class Tournament(models.Model):
    operator_id = models.CharField(
        "operator's tournament id", max_length=ID_MAX_LENGTH, unique=True
    )
    name = models.CharField(max_length=ID_MAX_LENGTH, blank=True)
    type = models.CharField(max_length=16, choices=TournamentType.choices)
    currency = models.CharField(max_length=3)
    buy_in = models.BigIntegerField(null=True, blank=True)
    fee = models.BigIntegerField(null=True, blank=True)
    guarantee = models.BigIntegerField(null=True, blank=True)
    fpp_buy_in = models.BigIntegerField("FPP buy-in", null=True, blank=True)
    prize_pool = models.BigIntegerField("fixed prize pool", null=True, blank=True)
    payouts = models.JSONField("payout structure", default=list, blank=True)
    seat_value = models.BigIntegerField(null=True, blank=True)
    scheduled_start = models.DateTimeField(
        null=True, blank=True, validators=[validate_storable_time]
    )
    created_at = models.DateTimeField(auto_now_add=True)

    history = audited()

    class Meta:
        ordering = ["operator_id"]
        constraints = _non_negative(
            "buy_in", "fee", "guarantee", "fpp_buy_in", "prize_pool", "seat_value",
            prefix="tournament",
        )  # fmt: skip

    def __str__(self) -> str:
        return f"{self.operator_id} {self.name}".strip()


class Incident(models.Model):
    title = models.CharField(max_length=200)
    started_at = models.DateTimeField(validators=[validate_storable_time])
    description = models.TextField(blank=True)
    reported_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    reported_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    history = audited()

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["closed_at", "-started_at"], name="incident_open_idx")]

    def __str__(self) -> str:
        return f"Incident #{self.pk}: {self.title}"

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class Snapshot(models.Model):
    """A snapshot exactly as received; immutable, so it has no history of its own."""

    text = models.TextField()
    sha256 = models.CharField("SHA-256", max_length=64, db_index=True)
    size_bytes = models.PositiveBigIntegerField()
    received_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        triggers = [write_once()]

    def __str__(self) -> str:
        return f"Snapshot {self.sha256[:12]}"

    @staticmethod
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()


class Case(models.Model):
    class Kind(models.TextChoices):
        CRASH = "crash", "Crash"
        INDIVIDUAL = "individual", "Individual case"

    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.CRASH)
    incident = models.ForeignKey(
        Incident, on_delete=models.PROTECT, null=True, blank=True, related_name="cases"
    )
    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="cases")
    status = models.CharField(max_length=24, choices=CaseStatus.choices)

    # Crash cases: what the snapshot says and what the engine made of it.
    snapshot = models.OneToOneField(
        Snapshot, on_delete=models.PROTECT, null=True, blank=True, related_name="case"
    )
    crashed_at = models.DateTimeField(null=True, blank=True)
    started = models.BooleanField(null=True, blank=True)
    stage = models.CharField(max_length=8, choices=Stage.choices, blank=True)
    entrants = models.PositiveIntegerField(null=True, blank=True)
    eliminated = models.PositiveIntegerField(null=True, blank=True)
    remaining = models.PositiveIntegerField(null=True, blank=True)
    paid_places = models.PositiveIntegerField(null=True, blank=True)
    pool = models.BigIntegerField(null=True, blank=True)
    policy = models.JSONField(default=dict, blank=True)
    decision_options = models.JSONField(default=list, blank=True)
    decision = models.CharField("option in force", max_length=32, blank=True)
    engine_version = models.CharField(max_length=32, blank=True)

    # Individual cases: who was hit, what happened, how it ended.
    players = models.JSONField("players concerned", default=list, blank=True)
    description = models.TextField(blank=True)
    outcome = models.TextField(blank=True)
    resolved_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    resolved_at = models.DateTimeField(null=True, blank=True)

    # Crash cases withdrawn as loaded in error: who, when, why.
    withdrawn_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    withdrawal_reason = models.TextField(blank=True)

    created_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = audited()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # A tournament crashes once; a second snapshot of it is a mistake or a duplicate post.
            # A case withdrawn as loaded in error stays on record beside the one that replaces it.
            models.UniqueConstraint(
                fields=["tournament"],
                condition=Q(kind="crash") & ~Q(status="withdrawn"),
                name="one_live_crash_case_per_tournament",
            ),
            models.CheckConstraint(
                condition=(
                    Q(status="withdrawn", withdrawn_by__isnull=False, withdrawn_at__isnull=False)
                    & ~Q(withdrawal_reason="")
                )
                | (
                    ~Q(status="withdrawn")
                    & Q(withdrawn_by__isnull=True, withdrawn_at__isnull=True, withdrawal_reason="")
                ),
                name="withdrawn_case_says_who_when_why",
            ),
            models.CheckConstraint(
                condition=~Q(kind="crash")
                | (Q(incident__isnull=False) & Q(snapshot__isnull=False)),
                name="crash_case_has_incident_and_snapshot",
            ),
            models.CheckConstraint(
                condition=Q(entrants__isnull=True, eliminated__isnull=True, remaining__isnull=True)
                | Q(entrants=F("eliminated") + F("remaining")),
                name="case_entrants_add_up",
            ),
            *_non_negative("pool", prefix="case"),
        ]
        indexes = [
            models.Index(fields=["status", "-created_at"], name="case_status_idx"),
            models.Index(fields=["incident", "status"], name="case_incident_status_idx"),
        ]
        triggers = [KeepsRows(children=(("settlements_caseplayer", "case_id"),))]

    def __str__(self) -> str:
        return f"Case #{self.pk} ({self.tournament.operator_id})"

    @property
    def is_crash(self) -> bool:
        return self.kind == self.Kind.CRASH


# The bulk rows below (entrants, payouts, ledger lines: up to a million per settlement) keep
# their link to the parent checked by PostgreSQL triggers (settlements.triggers) rather than by a
# foreign key constraint: a foreign key checks each row on its own, which took 2 s of the 4 s
# spent writing 810,000 lines; the triggers check a whole COPY in one query and still refuse
# deleting a parent that has rows. The composite unique indexes lead with the parent, so the
# links need no index of their own.
BULK_LINK = {"on_delete": models.PROTECT, "db_index": False, "db_constraint": False}


class CasePlayer(models.Model):
    """One entrant of a crash snapshot, in snapshot order; written once in bulk.

    On PostgreSQL an index on (player in code-point order, case) finds a player's cases
    across incidents, by exact id or prefix (migration 0010; see selectors.players).
    """

    case = models.ForeignKey(Case, related_name="entries", **BULK_LINK)
    position = models.PositiveIntegerField()
    player = models.CharField(max_length=ID_MAX_LENGTH)
    chips = models.BigIntegerField()

    class Meta:
        ordering = ["case", "position"]
        constraints = [
            models.UniqueConstraint(fields=["case", "player"], name="case_player_unique"),
            *_non_negative("chips", prefix="case_player"),
        ]
        triggers = [write_once(), RowsHaveParent(link="case")]

    def __str__(self) -> str:
        return f"{self.player}: {self.chips} chips"


class Decision(models.Model):
    class InviteScope(models.TextChoices):
        ENTRANTS = "entrants", "All entrants"
        REMAINING = "remaining", "Remaining players"
        CUSTOM = "custom", "Chosen players"

    case = models.ForeignKey(Case, on_delete=models.PROTECT, related_name="decisions")
    role = models.CharField(max_length=32)
    option = models.CharField(max_length=32)
    reason = models.TextField()
    decided_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    decided_at = models.DateTimeField(auto_now_add=True)
    # Reschedule only. The default invite lists are derived from the snapshot, so only a
    # hand-picked list is stored (a freeroll may have 300,000 entrants).
    reschedule_at = models.DateTimeField(null=True, blank=True)
    invite_scope = models.CharField(max_length=16, choices=InviteScope.choices, blank=True)
    invited_players = models.JSONField(default=list, blank=True)

    history = audited()

    class Meta:
        ordering = ["-decided_at", "-id"]
        get_latest_by = ["decided_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(option="reschedule", reschedule_at__isnull=False)
                | (~Q(option="reschedule") & Q(reschedule_at__isnull=True)),
                name="reschedule_has_a_date",
            ),
        ]

    def __str__(self) -> str:
        return f"Decision #{self.pk}: {option_label(self.option)}"


SETTLEMENT_FIXED = (
    "case", "kind", "corrects", "currency", "stage", "remedy", "decision", "policy",
    "engine_version", "entrants", "eliminated", "remaining", "pool", "pool_distributed", "totals",
    "line_count", "payout_count", "ledger_digest", "note", "loaded_by", "prepared_by",
    "prepared_at",
)  # fmt: skip


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
            *_non_negative("pool", "pool_distributed", prefix="settlement"),
        ]
        indexes = [
            models.Index(fields=["status", "-prepared_at"], name="settlement_status_idx"),
        ]
        triggers = [
            KeepsRows(
                children=(
                    ("settlements_settlementpayout", "settlement_id"),
                    ("settlements_settlementline", "settlement_id"),
                )
            ),
            final_when_approved(),
            # What the engine computed and the preparer wrote; a review only adds its verdict.
            fixed_fields(*SETTLEMENT_FIXED),
        ]

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

    settlement = models.ForeignKey(Settlement, related_name="payouts", **BULK_LINK)
    # 0, 1, 2, … in the engine's order (player ids in code-point order): a review page is a
    # range of positions, found through the index however deep into 300,000 payouts it is.
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
            models.UniqueConstraint(
                fields=["settlement", "position"], name="payout_position_unique"
            ),
            *_non_negative(
                "chips", "cash", "tdollars", "tickets", "fpp", "guaranteed", prefix="payout"
            ),
        ]
        triggers = [write_once(), RowsHaveParent(link="settlement")]

    def __str__(self) -> str:
        return f"Payout to {self.player}"


class SettlementLine(models.Model):
    """One ledger line; never changed. A reversal (only in adjustments) takes money back."""

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
            models.UniqueConstraint(fields=["settlement", "line_no"], name="line_no_unique"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="line_amount_positive"),
        ]
        indexes = [models.Index(fields=["settlement", "player"], name="line_player_idx")]
        triggers = [write_once(), RowsHaveParent(link="settlement")]

    def __str__(self) -> str:
        return f"Line {self.line_no}: {self.player} {self.kind} {self.signed_amount} {self.unit}"

    @property
    def signed_amount(self) -> int:
        return -self.amount if self.reversal else self.amount


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
            fixed_fields(
                "case",
                "currency",
                "reason",
                "proposed_by",
                "proposed_at",
                "totals",
                "items_digest",
            ),  # fmt: skip
        ]

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
    """A Tournament Manager's call on a prize given in error: take it back or leave it."""

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

    history = audited()

    class Meta:
        ordering = ["-decided_at", "-id"]
        constraints = _non_negative("amount", prefix="prize_withdrawal")

    def __str__(self) -> str:
        return f"Prize withdrawal #{self.pk} ({self.player})"


class Event(models.Model):
    """One business event, written in the transaction that made it happen; never changed.

    Events form a hash chain (settlements.audit_log): ``seq`` numbers them from 1 without gaps,
    ``hash`` covers the event's content, what it seals of its subject, and ``prev_hash``.
    """

    class Type(models.TextChoices):
        INCIDENT_REPORTED = "incident_reported", "Incident reported"
        INCIDENT_CLOSED = "incident_closed", "Incident closed"
        TOURNAMENT_CREATED = "tournament_created", "Tournament created"
        TOURNAMENT_UPDATED = "tournament_updated", "Tournament updated from a snapshot"
        SNAPSHOT_LOADED = "snapshot_loaded", "Snapshot loaded"
        DECISION_RECORDED = "decision_recorded", "Decision recorded"
        SETTLEMENT_PREPARED = "settlement_prepared", "Settlement prepared"
        SETTLEMENT_SUBMITTED = "settlement_submitted", "Settlement submitted"
        SETTLEMENT_APPROVED = "settlement_approved", "Settlement approved"
        SETTLEMENT_REJECTED = "settlement_rejected", "Settlement rejected"
        ADJUSTMENT_PREPARED = "adjustment_prepared", "Adjustment prepared"
        COMPENSATION_PROPOSED = "compensation_proposed", "Compensation proposed"
        COMPENSATION_APPROVED = "compensation_approved", "Compensation approved"
        COMPENSATION_REJECTED = "compensation_rejected", "Compensation rejected"
        PRIZE_WITHDRAWAL_DECIDED = "prize_withdrawal_decided", "Prize withdrawal decided"
        INDIVIDUAL_CASE_OPENED = "individual_case_opened", "Individual case opened"
        INDIVIDUAL_CASE_RESOLVED = "individual_case_resolved", "Individual case resolved"
        CASE_WITHDRAWN = "case_withdrawn", "Case withdrawn"
        PAYMENTS_CONFIRMED = "payments_confirmed", "Payments confirmed by the cashier"
        REISSUE_PROPOSED = "reissue_proposed", "Re-issue of a failed line proposed"
        REISSUE_APPROVED = "reissue_approved", "Re-issue approved"
        REISSUE_REJECTED = "reissue_rejected", "Re-issue rejected"
        API_TOKEN_CREATED = "api_token_created", "API token created"
        API_TOKEN_REVOKED = "api_token_revoked", "API token revoked"
        USER_ACCESS_CHANGED = "user_access_changed", "User's access changed"
        BASIS_RESTORED = "basis_restored", "Statement figures restored"
        BASIS_NOT_RESTORED = "basis_not_restored", "Statement figures not restored"

    type = models.CharField(max_length=32, choices=Type.choices)
    # The foreign keys are covered by the composite indexes in Meta.
    actor = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+", db_index=False
    )
    # Set before the hash is computed, so not auto_now_add (which sets it only on save).
    at = models.DateTimeField(default=timezone.now)
    incident = models.ForeignKey(
        Incident,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="events",
        db_index=False,
    )
    case = models.ForeignKey(
        Case, on_delete=models.PROTECT, null=True, blank=True, related_name="events", db_index=False
    )
    tournament = models.ForeignKey(
        Tournament,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="events",
        db_index=False,
    )
    # The record the event is about, as "model:pk" parts (e.g. settlement, 42).
    subject_type = models.CharField(max_length=32, blank=True)
    subject_id = models.BigIntegerField(null=True, blank=True)
    reason = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    # What the subject is that must never change, as this event sealed it.
    subject_facts = models.JSONField(default=dict, blank=True)
    seq = models.PositiveBigIntegerField("number in the chain", unique=True)
    prev_hash = models.CharField("previous event's hash", max_length=64)
    hash = models.CharField("SHA-256", max_length=64)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["-at"], name="event_at_idx"),
            models.Index(fields=["incident", "-at"], name="event_incident_idx"),
            models.Index(fields=["case", "-at"], name="event_case_idx"),
            models.Index(fields=["tournament", "-at"], name="event_tournament_idx"),
            models.Index(fields=["actor", "-at"], name="event_actor_idx"),
            models.Index(fields=["type", "-at"], name="event_type_idx"),
        ]
        triggers = [write_once()]

    def __str__(self) -> str:
        return f"{self.get_type_display()} #{self.pk}"


class Profile(models.Model):
    """A user's own settings. A user without one sees the site's defaults."""

    user = models.OneToOneField(USER, on_delete=models.PROTECT, related_name="profile")
    # An IANA zone name ("Europe/Paris"); empty for the site's TIME_ZONE.
    time_zone = models.CharField(max_length=64, blank=True)

    history = audited()

    def __str__(self) -> str:
        return f"Profile of {self.user}"


TOKEN_TAG = "cdk_"
TOKEN_PREFIX_LENGTH = 8


class ApiToken(models.Model):
    """A bearer token of a game server; only its SHA-256 is stored.

    Record use with ``ApiToken.objects.filter(pk=...).update(last_used_at=...)`` so that
    routine use does not add a history version per request.
    """

    user = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="api_tokens")
    name = models.CharField(max_length=100)
    # The token's public part, stored in clear: it finds the candidate rows and names the token
    # in listings and revocations without revealing the secret part.
    prefix = models.CharField(max_length=16, db_index=True, blank=True)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    history = audited(excluded_fields=["last_used_at"])

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"API token {self.name} ({self.user})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    @staticmethod
    def hash(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()

    @staticmethod
    def new_raw() -> tuple[str, str]:
        """A fresh token and its prefix: "cdk_" + 8 hex characters + "_" + 43 random ones."""
        prefix = secrets.token_hex(4)
        return f"{TOKEN_TAG}{prefix}_{secrets.token_urlsafe(32)}", prefix

    @staticmethod
    def prefix_of(raw: str) -> str | None:
        """The prefix of a token in our format, else None (then no row can match)."""
        start = len(TOKEN_TAG)
        end = start + TOKEN_PREFIX_LENGTH
        if not raw.startswith(TOKEN_TAG) or raw[end : end + 1] != "_":
            return None
        prefix = raw[start:end]
        return prefix if all(c in "0123456789abcdef" for c in prefix) else None

    def matches(self, raw: str) -> bool:
        # Constant-time, so response timing tells nothing about how much of a guess was right.
        return hmac.compare_digest(self.token_hash, self.hash(raw))


class Job(models.Model):
    """A piece of background work (a large prepare, a bulk action, a batch of snapshots) and
    its progress, one ``JobItem`` per case, settlement or file it goes through.

    A job is not itself audited: every step goes through the service that writes the business
    event, as the steps done one at a time would. At most one job of a kind is queued or
    running per target, which the database enforces, so a second click cannot start the same
    work twice.
    """

    class Kind(models.TextChoices):
        PREPARE = "prepare", "Prepare settlements"
        SUBMIT = "submit", "Submit settlements"
        APPROVE = "approve", "Approve settlements"
        DECIDE = "decide", "Record decisions"
        UPLOAD = "upload", "Load snapshots"

    class Status(models.TextChoices):
        QUEUED = "queued", "Waiting for a worker"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Stopped by an error"

    ACTIVE = (Status.QUEUED, Status.RUNNING)

    kind = models.CharField(max_length=16, choices=Kind.choices)
    # What the work is about, e.g. "incident:12" or "case:40"; one active job per kind and target.
    target = models.CharField(max_length=64)
    incident = models.ForeignKey(
        Incident, on_delete=models.PROTECT, null=True, blank=True, related_name="jobs"
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.QUEUED)
    # What every step needs besides its item: the reason, the option chosen, ...
    params = models.JSONField(default=dict, blank=True)
    error = models.TextField("why it stopped", blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # Carried by every task of the job's current run; a new run (retry, recovery) takes a new
    # one, and a task with an older token does nothing.
    run_token = models.CharField(max_length=64, blank=True)
    created_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "target"],
                condition=Q(status__in=["queued", "running"]),
                name="one_active_job_per_kind_and_target",
            )
        ]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="job_status_idx")]

    def __str__(self) -> str:
        return f"Job #{self.pk} ({self.get_kind_display().lower()})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE


class JobItem(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Waiting"
        DONE = "done", "Done"
        SKIPPED = "skipped", "Skipped"
        FAILED = "failed", "Failed"

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    # The case or settlement id, or the file name of an upload.
    key = models.CharField(max_length=255)
    label = models.CharField(max_length=255)
    # An uploaded file's bytes, dropped once the file is loaded.
    payload = models.BinaryField(null=True, blank=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    message = models.TextField(blank=True)
    case = models.ForeignKey(Case, on_delete=models.SET_NULL, null=True, blank=True)

    class Meta:
        ordering = ["job", "position"]
        constraints = [
            models.UniqueConstraint(fields=["job", "position"], name="job_item_position_unique")
        ]
        indexes = [models.Index(fields=["job", "status"], name="job_item_status_idx")]

    def __str__(self) -> str:
        return f"{self.label} ({self.get_status_display().lower()})"


# --- Payments: what the cashier is handed and what it answers ---------------------------------


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
        triggers = [write_once()]

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
            ),  # fmt: skip
        ]

    def __str__(self) -> str:
        return f"Re-issue #{self.pk} of {self.original_key}"


class SignInEpoch(models.Model):
    """How many times a user has signed out. Sessions live in a signed cookie, which the
    server cannot take back; each carries the epoch it was issued in, and a cookie of an
    earlier epoch is refused (see settlements.auth). Not business data, so not audited."""

    user = models.OneToOneField(
        USER, on_delete=models.CASCADE, primary_key=True, related_name="signin_epoch"
    )
    epoch = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"Sign-in epoch {self.epoch} of user #{self.user_id}"
