"""The lists work is picked from: each "waiting for you" list in full, every case or incident
by state, the queue of compensation proposals, and how many payment lines are overdue."""

from datetime import datetime

from django.db.models import QuerySet

from settlements.models import Case, Compensation, Incident, LedgerRelease
from settlements.selectors.cases import case_list, incident_list
from settlements.selectors.compensation import compensation_list
from settlements.selectors.dashboard import case_path, waiting_records
from settlements.selectors.payments.queues import overdue_releases
from settlements.workflow import Awaits, CompensationStatus

# The incidents a list can be narrowed to: the open ones, newest first, as many as a menu holds.
INCIDENT_CHOICES = 50


# What the lists can be sorted by, field paths from a case: the longest waiting first unless
# asked otherwise.
WAITING_SORTS = {
    "waiting": None,
    "tournament": "tournament__operator_id",
    "incident": "incident__started_at",
}
CASE_SORTS = {
    "created": "created_at",
    "case": "pk",
    "tournament": "tournament__operator_id",
    "incident": "incident__started_at",
    "status": "status",
}


def waiting_queue(
    user,
    state: Awaits,
    *,
    incident: int | None = None,
    sort: str = "waiting",
    descending: bool = False,
) -> QuerySet:
    """The records waiting in ``state`` for ``user``, narrowed to one incident if given,
    sorted by ``sort`` (a key of WAITING_SORTS)."""
    records = waiting_records(state, user)
    case = case_path(records.model)
    if incident is not None:
        # A record with no case (a rulebook version) belongs to no incident.
        in_incident = {f"{case}incident_id": incident}
        records = records.none() if case is None else records.filter(**in_incident)
    by_case = WAITING_SORTS[sort] is not None and case is not None
    field = case + WAITING_SORTS[sort] if by_case else state.since
    return records.order_by(f"-{field}" if descending else field, "pk")


def case_queue(
    *,
    status: str | None = None,
    incident: int | None = None,
    sort: str = "created",
    descending: bool = False,
) -> QuerySet[Case]:
    """Every case, or those of one status or incident, oldest first as in the queues (the
    longest waiting is the first to see to) unless sorted by another key of CASE_SORTS."""
    field = CASE_SORTS[sort]
    return case_list(status=status, incident=incident).order_by(
        f"-{field}" if descending else field, "pk"
    )


def incident_queue(state: str) -> QuerySet[Incident]:
    """Incidents, newest first: the open ones ("open"), the closed ones ("closed") or all."""
    incidents = incident_list(open_only=state == "open")
    if state == "closed":
        incidents = incidents.filter(closed_at__isnull=False)
    return incidents


def incident_choices() -> QuerySet[Incident]:
    return incident_list(open_only=True)[:INCIDENT_CHOICES]


def compensation_queue(status: str | None) -> QuerySet[Compensation]:
    """Compensation of one status (every one for None): the proposals oldest first, as they
    are worked, the rest newest first."""
    queue = compensation_list(status=status)
    if status != CompensationStatus.PROPOSED:
        queue = queue.order_by("-proposed_at", "-id")
    return queue


def overdue_line_count(cutoff: datetime, releases: QuerySet[LedgerRelease] | None = None) -> int:
    """How many lines handed to the cashier before ``cutoff`` it has not confirmed."""
    return sum(overdue_releases(cutoff, releases).values_list("overdue", flat=True))
