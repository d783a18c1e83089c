"""Tournaments, incidents, snapshots, cases, their entrants and the decisions taken on them."""

import hashlib

import pgtrigger
from django.db import models
from django.db.models import F, Q

from settlements.models.base import (
    BULK_LINK,
    ID_MAX_LENGTH,
    USER,
    audited,
    non_negative,
    validate_storable_time,
)
from settlements.models.choices import Stage, TournamentType
from settlements.triggers import (
    KeepsRows,
    RowsHaveParent,
    write_once,
)
from settlements.wording import option_label
from settlements.workflow import CaseStatus


class Tournament(models.Model):
    operator_id = models.CharField(
        "operator's tournament id", max_length=ID_MAX_LENGTH, unique=True
    )
    # player_ids.tournament_key of operator_id: unique, so that a look-alike id cannot
    # register the same tournament twice. Derived from operator_id, so its history is
    # operator_id's and it is kept out of the versions.
    key = models.TextField("comparison key", unique=True, editable=False)
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
    # RULES.md §8, from a crash-snapshot/2: K, A and G; empty where the tournament has none.
    entry_bounty = models.BigIntegerField(null=True, blank=True)
    add_on = models.BigIntegerField("add-on price", null=True, blank=True)
    add_on_fee = models.BigIntegerField("add-on fee", null=True, blank=True)
    scheduled_start = models.DateTimeField(
        null=True, blank=True, validators=[validate_storable_time]
    )
    created_at = models.DateTimeField(auto_now_add=True)

    history = audited(excluded_fields=["key"])

    class Meta:
        ordering = ["operator_id"]
        constraints = non_negative(
            "buy_in",
            "fee",
            "guarantee",
            "fpp_buy_in",
            "prize_pool",
            "seat_value",
            "entry_bounty",
            "add_on",
            "add_on_fee",
            prefix="tournament",
        )

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
    def digest(content: str | bytes) -> str:
        """SHA-256 of the snapshot's UTF-8 bytes, given as text or as those bytes."""
        return hashlib.sha256(
            content if isinstance(content, bytes) else content.encode()
        ).hexdigest()


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
    # The rulebook version in force when the tournament started: the case keeps it for good.
    rulebook_version = models.ForeignKey(
        "settlements.RulebookVersion",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="cases",
    )
    decision_options = models.JSONField(default=list, blank=True)
    decision = models.CharField("option in force", max_length=32, blank=True)
    engine_version = models.CharField(max_length=32, blank=True)
    # A crash-snapshot/2 case: SHA-256 over its entrants with their entries, add-ons and
    # bounties as loaded (audit_log.entrants_digest); empty for a version 1 snapshot, so it also
    # tells which cases have them. The rows themselves are sealed like every entrant row
    # (settlements.seals), and this field with the case's other fixed fields.
    entrants_digest = models.CharField(max_length=64, blank=True)

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
            *non_negative("pool", prefix="case"),
        ]
        indexes = [
            models.Index(fields=["status", "-created_at"], name="case_status_idx"),
            models.Index(fields=["incident", "status"], name="case_incident_status_idx"),
        ]
        triggers = [
            KeepsRows(children=(("settlements_caseplayer", "case_id"),)),
            # Set once: re-settlements and adjustments use the version the case was settled by.
            pgtrigger.Protect(
                name="keeps_its_rulebook_version",
                operation=pgtrigger.Update,
                condition=pgtrigger.Condition(
                    "OLD.rulebook_version_id IS NOT NULL AND "
                    "NEW.rulebook_version_id IS DISTINCT FROM OLD.rulebook_version_id"
                ),
            ),
        ]

    def __str__(self) -> str:
        return f"Case #{self.pk} ({self.tournament.operator_id})"

    @property
    def is_crash(self) -> bool:
        return self.kind == self.Kind.CRASH


class CasePlayer(models.Model):
    """One entrant of a crash snapshot, in snapshot order; written once in bulk.

    On PostgreSQL an index on (player in code-point order, case) finds a player's cases
    across incidents, by exact id or prefix (migration 0010; see selectors.players).
    """

    # Keyed by what makes a row unique, one player per case: that index serves every look-up
    # of a player within a case, and a surrogate id would be a second index and a sequence on
    # each of 300,000 rows (docs/benchmarks.md). The admin cannot list such a key; the case
    # page does.
    pk = models.CompositePrimaryKey("case", "player")
    case = models.ForeignKey(Case, related_name="entries", **BULK_LINK)
    position = models.PositiveIntegerField()
    player = models.CharField(max_length=ID_MAX_LENGTH)
    chips = models.BigIntegerField()
    # RULES.md §8: paid entries (first + rebuys or re-entries), add-ons, and the bounty on the
    # player's head at the crash. Database defaults, so that a version 1 snapshot's rows are
    # copied in without them.
    entries = models.BigIntegerField(default=1, db_default=1)
    add_ons = models.BigIntegerField("add-ons", default=0, db_default=0)
    bounty = models.BigIntegerField(default=0, db_default=0)

    class Meta:
        ordering = ["case", "position"]
        constraints = [
            *non_negative("chips", "add_ons", "bounty", prefix="case_player"),
            models.CheckConstraint(condition=Q(entries__gte=1), name="case_player_entries_min"),
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
