"""Checkpoints of the event log: where each verification stopped, signed."""

from django.db import models

from settlements.triggers import write_once


class AuditCheckpoint(models.Model):
    """One verification's end: the head it reached, the events it read, how many of each type
    the chain held, when; signed with a key kept outside the database
    (settlements.checkpoints), so that a row altered here is caught. Written once, never
    changed or removed."""

    at = models.DateTimeField()
    # The chain up to event ``events`` (its hash ``head``) was verified.
    events = models.PositiveBigIntegerField("events in the chain")
    head = models.CharField("head hash", max_length=64)
    # What this verification read: every event from ``first`` to ``events`` (1 for a whole
    # verification), and the numbers of the older events drawn at random and checked again.
    first = models.PositiveBigIntegerField("first event read")
    sampled = models.JSONField("older events sampled", default=list, blank=True)
    full = models.BooleanField("whole chain read")
    # {event type: number of events of that type in the chain up to the head}.
    counts = models.JSONField("events by type", default=dict)
    # Every row this verification could not see was written by a transaction at or after
    # ``horizon``; it looked for rows no event names among those written at or after
    # ``rows_since`` (both PostgreSQL transaction ids, settlements.row_stamps), or among every
    # row when that is empty.
    horizon = models.BigIntegerField("row stamp horizon", null=True, blank=True)
    rows_since = models.BigIntegerField("rows read from", null=True, blank=True)
    signature = models.CharField(max_length=64)

    class Meta:
        ordering = ["-id"]
        triggers = [write_once()]

    def __str__(self) -> str:
        return f"Checkpoint #{self.pk} (event {self.events})"
