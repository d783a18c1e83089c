"""A verification's checkpoint, written once it found nothing wrong.

No event records it: a checkpoint is itself a write-once, signed record of a verification
(settlements.checkpoints), and an event would move the head it has just verified.
"""

from django.db import transaction
from django.utils import timezone

from settlements import checkpoints
from settlements.models import AuditCheckpoint


@transaction.atomic
def checkpoint_record(*, outcome: checkpoints.Outcome) -> AuditCheckpoint:
    if not outcome.verification.ok:
        raise ValueError("only a verification that found nothing wrong ends with a checkpoint")
    checkpoint = checkpoints.new_checkpoint(outcome, at=timezone.now())
    checkpoint.save()
    return checkpoint
