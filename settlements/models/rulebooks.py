"""Rulebooks: an operator's crash policy as a record, in numbered versions.

A version holds every engine policy parameter, the text shown to players, and when it takes
effect. A Tournament Manager proposes it; another approves it (the database refuses the same
person, as for compensation). Once approved, a version never changes: it may only be withdrawn,
and only before it takes effect. A case is settled under the version in force when its
tournament started (``Case.rulebook_version``).
"""

import pgtrigger
from django.db import models
from django.db.models import F, Q

from settlements.models.base import USER, audited
from settlements.triggers import FollowsWorkflow, fixed_fields, write_once
from settlements.workflow import RULEBOOK_VERSION_FLOW, RulebookVersionStatus

KEY_MAX_LENGTH = 64


class Rulebook(models.Model):
    key = models.CharField(max_length=KEY_MAX_LENGTH, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    history = audited()

    class Meta:
        ordering = ["key"]
        triggers = [
            fixed_fields("key", "created_at"),
            pgtrigger.Protect(name="never_deleted", operation=pgtrigger.Delete),
        ]

    def __str__(self) -> str:
        return self.key


class RulebookVersion(models.Model):
    rulebook = models.ForeignKey(Rulebook, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=RulebookVersionStatus.choices)
    # Every engine policy parameter, defaults filled in (settlements.rules.parse_policy).
    parameters = models.JSONField()
    # Markdown shown to players; rendered by settlements.markdown.
    text = models.TextField()
    effective_from = models.DateTimeField()
    # Empty for the first version of `default`, made by the migration from the old settings.
    proposed_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    proposed_at = models.DateTimeField()
    proposal_reason = models.TextField()
    approved_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)
    approval_reason = models.TextField(blank=True)
    withdrawn_by = models.ForeignKey(
        USER, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    withdrawal_reason = models.TextField(blank=True)

    history = audited()

    class Meta:
        ordering = ["rulebook__key", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["rulebook", "number"], name="rulebook_version_number"),
            # Four eyes, held by the database as for compensation.
            models.CheckConstraint(
                condition=Q(approved_by__isnull=True) | ~Q(approved_by=F("proposed_by")),
                name="rulebook_approver_is_not_proposer",
            ),
            models.CheckConstraint(
                condition=~Q(status="approved") | Q(approved_at__isnull=False),
                name="rulebook_approved_has_time",
            ),
            # No change reaches back over tournaments already running.
            models.CheckConstraint(
                condition=Q(approved_at__isnull=True)
                | Q(approved_by__isnull=True)
                | Q(effective_from__gt=F("approved_at")),
                name="rulebook_effective_after_approval",
            ),
        ]
        indexes = [
            models.Index(fields=["status", "effective_from"], name="rulebook_version_status_idx")
        ]
        triggers = [
            fixed_fields(
                "rulebook",
                "number",
                "parameters",
                "text",
                "effective_from",
                "proposed_by",
                "proposed_at",
                "proposal_reason",
            ),
            pgtrigger.Protect(name="never_deleted", operation=pgtrigger.Delete),
            # Written as proposed, approved by another than its proposer: the versions made
            # by migration 0044 from the old settings, approved by nobody, are its only
            # exception (written by the tables' owner past this trigger).
            FollowsWorkflow(flow=RULEBOOK_VERSION_FLOW, preparer="proposed_by"),
            pgtrigger.Protect(
                name="final_when_withdrawn",
                operation=pgtrigger.Update,
                condition=pgtrigger.Q(old__status="withdrawn"),
            ),
            # Approved is final but for a withdrawal before it takes effect.
            pgtrigger.Protect(
                name="approved_only_withdrawn_before_effect",
                operation=pgtrigger.Update,
                condition=pgtrigger.Condition(
                    "OLD.status = 'approved' AND "
                    "(NEW.status <> 'withdrawn' OR OLD.effective_from <= now() "
                    "OR NEW.approved_by_id IS DISTINCT FROM OLD.approved_by_id "
                    "OR NEW.approved_at IS DISTINCT FROM OLD.approved_at "
                    "OR NEW.approval_reason IS DISTINCT FROM OLD.approval_reason)"
                ),
            ),
        ]

    # What __str__ reads: a list of labels loads these fields alone.
    LABEL_FIELDS = ("rulebook__key", "number")

    def __str__(self) -> str:
        return f"{self.rulebook.key} v{self.number}"


class Simulation(models.Model):
    """What a rulebook version would have paid on past cases: each stored snapshot settled
    again under it in a background job. Nothing about the cases changes; the simulation
    itself is the record (who asked, when, over which cases)."""

    version = models.ForeignKey(
        RulebookVersion, on_delete=models.PROTECT, related_name="simulations"
    )
    job = models.OneToOneField(
        "settlements.Job", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    requested_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    requested_at = models.DateTimeField(auto_now_add=True)
    # How the cases were picked (incident, crash dates, rulebook), as asked.
    selection = models.JSONField(default=dict, blank=True)
    case_count = models.PositiveIntegerField()
    # Once every case is simulated (services.rulebooks.simulation_summary).
    summary = models.JSONField(default=dict, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    history = audited()

    class Meta:
        ordering = ["-requested_at", "-id"]
        triggers = [
            fixed_fields("version", "requested_by", "requested_at", "selection", "case_count"),
            pgtrigger.Protect(name="never_deleted", operation=pgtrigger.Delete),
        ]

    def __str__(self) -> str:
        return f"Simulation #{self.pk} of {self.version}"


class SimulationResult(models.Model):
    """One case under its own version and under the simulated one; written once."""

    simulation = models.ForeignKey(Simulation, on_delete=models.PROTECT, related_name="results")
    case = models.ForeignKey("settlements.Case", on_delete=models.PROTECT, related_name="+")
    stage_then = models.CharField(max_length=8)
    remedy_then = models.CharField(max_length=32, blank=True)
    totals_then = models.JSONField(default=dict)
    stage_draft = models.CharField(max_length=8)
    remedy_draft = models.CharField(max_length=32, blank=True)
    totals_draft = models.JSONField(default=dict)
    # The draft no longer offers the case's recorded decision: someone would decide again.
    needs_decision = models.BooleanField(default=False)
    # {unit: [player differences draft − then, one per player paid under either]}.
    differences = models.JSONField(default=dict)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["simulation", "case"], name="simulation_case_once")
        ]
        triggers = [write_once()]

    def __str__(self) -> str:
        return f"Case #{self.case_id} in simulation #{self.simulation_id}"
