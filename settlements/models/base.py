"""What every audited model shares: the history they keep, id lengths, storable times."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from settlements import bounds
from settlements.triggers import (
    WriteOnceHistory,
)

USER = settings.AUTH_USER_MODEL


# Longest operator tournament id / player id that we store (the snapshot parser allows more;
# the load service rejects longer ones with the path of the offending field).
ID_MAX_LENGTH = 200
# Sentences (a reason, an outcome, a description) are kept with every record they explain and
# shown in the history: a bulk approval of a thousand settlements repeated a 1 MB reason in
# each record.
PROSE_MAX_LENGTH = 5000


def validate_storable_time(value) -> None:
    """For the times the admin may edit: the services check theirs in the same way."""
    if problem := bounds.time_problem(value):
        raise ValidationError(f"This time {problem}.", code="time_range")


def audited(**options) -> WriteOnceHistory:
    """The history of an audited model (every version kept, with its user and reason)."""
    return WriteOnceHistory(**options)


def non_negative(*fields: str, prefix: str) -> list[models.CheckConstraint]:
    return [
        models.CheckConstraint(
            condition=Q(**{f"{field}__isnull": True}) | Q(**{f"{field}__gte": 0}),
            name=f"{prefix}_{field}_non_negative",
        )
        for field in fields
    ]


# The bulk rows below (entrants, payouts, ledger lines: up to a million per settlement) keep
# their link to the parent checked by PostgreSQL triggers (settlements.triggers) rather than by a
# foreign key constraint: a foreign key checks each row on its own, which took 2 s of the 4 s
# spent writing 810,000 lines; the triggers check a whole COPY in one query and still refuse
# deleting a parent that has rows. The composite unique indexes lead with the parent, so the
# links need no index of their own.
BULK_LINK = {"on_delete": models.PROTECT, "db_index": False, "db_constraint": False}
