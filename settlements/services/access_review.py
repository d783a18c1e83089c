"""The auditor's access review, recorded: who reviewed, over which period, with their note.

The review itself is reading (selectors.access_review); completing it is the business event
regulators ask to see, and what the next due date counts from (selectors.access_review_due).
"""

from datetime import date

from django.db import transaction
from django.utils import timezone

from settlements.access import permissions
from settlements.errors import DomainError
from settlements.models import Event
from settlements.services.common import record_event, required_text

NOTE_MAX_LENGTH = 5000


@transaction.atomic
def access_review_complete(*, actor, start: date, end: date, note: str) -> Event:
    """Record that ``actor`` reviewed everyone's access and the changes from ``start`` to
    ``end``, with what they found (``note``, required: a review says what it concluded)."""
    permissions.enforce(permissions.access_review(user=actor))
    note = required_text(note, "note", max_length=NOTE_MAX_LENGTH)
    if start > end:
        raise DomainError("The period must start on or before its end.", field="start")
    if end > timezone.localdate():
        raise DomainError("The period cannot end after today.", field="end")
    return record_event(
        Event.Type.ACCESS_REVIEW_COMPLETED,
        actor=actor,
        reason=note,
        data={"from": start.isoformat(), "to": end.isoformat()},
    )
