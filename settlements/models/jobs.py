"""Background and bulk work: a job and its items."""

from django.db import models
from django.db.models import Q

from settlements.models.base import USER
from settlements.models.crashes import Case, Incident


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
        VERIFY = "verify", "Verify the event log"
        ICM = "icm", "Value stacks by ICM"
        SIMULATE = "simulate", "Simulate a rulebook version"

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
    created_by = models.ForeignKey(USER, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
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
        indexes = [
            models.Index(fields=["status"], name="job_status_idx"),
            # A page finds the job of what it shows by its target, finished or not (the review's
            # ICM valuation while it is sampled, a case's prepare): one row, not a scan of every
            # job the desk ever ran.
            models.Index(fields=["kind", "target"], name="job_target_idx"),
        ]

    def __str__(self) -> str:
        return f"Job #{self.pk} ({self.get_kind_display().lower()})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE


class JobItem(models.Model):
    """One step of a job. A worker leases pending items for JOB_LEASE_SECONDS before it runs
    them: any worker takes over an item whose lease ran out (its worker killed, frozen, its
    machine lost), unless the item's row is still locked by the batch running it."""

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
    leased_until = models.DateTimeField(null=True, blank=True)
    # Leases taken on the item: one that keeps losing its worker fails after JOB_ITEM_ATTEMPTS.
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["job", "position"]
        constraints = [
            models.UniqueConstraint(fields=["job", "position"], name="job_item_position_unique")
        ]
        indexes = [models.Index(fields=["job", "status"], name="job_item_status_idx")]

    def __str__(self) -> str:
        return f"{self.label} ({self.get_status_display().lower()})"


# --- Payments: what the cashier is handed and what it answers ---------------------------------
