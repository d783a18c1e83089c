"""An incident's own pages: the tournaments it may still hit, its latest jobs, and the
settlements chosen for one approval of many."""

from collections.abc import Collection

from django.db.models import Exists, OuterRef, Q, QuerySet

from settlements.models import Case, Incident, Job, Settlement, Tournament
from settlements.selectors.approvals import awaiting_approval
from settlements.selectors.common import with_ids
from settlements.workflow import CaseStatus


def tournaments_without_crash_case(search: str = "") -> QuerySet[Tournament]:
    """Tournaments an incident can still hit, latest first; ``search`` matches the operator's
    id or the name."""
    # A tournament crashes once. A case withdrawn as loaded in error does not count; its
    # tournament is loaded again.
    crashed = Case.objects.filter(tournament=OuterRef("pk"), kind=Case.Kind.CRASH).exclude(
        status=CaseStatus.WITHDRAWN
    )
    tournaments = Tournament.objects.filter(~Exists(crashed))
    if search:
        tournaments = tournaments.filter(
            Q(operator_id__icontains=search) | Q(name__icontains=search)
        )
    return tournaments.order_by("-scheduled_start", "operator_id")


def tournament_detail(tournament_id: int) -> Tournament:
    return Tournament.objects.get(pk=tournament_id)


def incident_jobs(incident: Incident, *, limit: int) -> QuerySet[Job]:
    """The incident's latest jobs, newest first, with who started each."""
    return incident.jobs.select_related("created_by")[:limit]


def chosen_for_approval(incident: Incident, ids: Collection[int]) -> QuerySet[Settlement]:
    """Those of ``ids`` that still await approval in ``incident``; a settlement approved,
    rejected or withdrawn since it was chosen is left out."""
    return with_ids(awaiting_approval(incident), ids)
