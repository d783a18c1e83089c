"""The event log: one sealed row per business event."""

from django.db import models
from django.utils import timezone

from settlements.models.base import USER
from settlements.models.crashes import Case, Incident, Tournament
from settlements.triggers import (
    write_once,
)


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
        PRIZE_WITHDRAWAL_APPROVED = "prize_withdrawal_approved", "Prize withdrawal approved"
        PRIZE_WITHDRAWAL_REJECTED = "prize_withdrawal_rejected", "Prize withdrawal rejected"
        INDIVIDUAL_CASE_OPENED = "individual_case_opened", "Individual case opened"
        INDIVIDUAL_CASE_RESOLVED = "individual_case_resolved", "Individual case resolved"
        CASE_WITHDRAWN = "case_withdrawn", "Case withdrawn"
        PAYMENTS_CONFIRMED = "payments_confirmed", "Payments confirmed by the cashier"
        REISSUE_PROPOSED = "reissue_proposed", "Re-issue of a failed line proposed"
        REISSUE_APPROVED = "reissue_approved", "Re-issue approved"
        REISSUE_REJECTED = "reissue_rejected", "Re-issue rejected"
        API_TOKEN_CREATED = "api_token_created", "API token created"
        API_TOKEN_REVOKED = "api_token_revoked", "API token revoked"
        API_TOKEN_ROTATED = "api_token_rotated", "API token replaced by a new one"
        USER_ACCESS_CHANGED = "user_access_changed", "User's access changed"
        ADMIN_ACTION = "admin_action", "Changed in the administration site"
        BASIS_RESTORED = "basis_restored", "Statement figures restored"
        BASIS_NOT_RESTORED = "basis_not_restored", "Statement figures not restored"
        AUDIT_VERIFIED = "audit_verified", "Event log verified by the auditor"
        ICM_VALUED = "icm_valued", "Stacks valued by ICM"
        RULEBOOK_VERSION_PROPOSED = "rulebook_version_proposed", "Rulebook version proposed"
        RULEBOOK_VERSION_APPROVED = "rulebook_version_approved", "Rulebook version approved"
        RULEBOOK_VERSION_WITHDRAWN = "rulebook_version_withdrawn", "Rulebook version withdrawn"
        HISTORY_SWEPT = "history_swept", "Loose history versions sealed"
        JOB_FINISHED = "job_finished", "Background job finished"
        ACCESS_REVIEW_COMPLETED = "access_review_completed", "Access review completed"

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
    # The seal format its digests were written in (settlements.seal_formats); no default, as
    # the writer that computes them says which.
    seal_format = models.PositiveSmallIntegerField("seal format")
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
