"""An incident's own pages: the tournaments it may still hit, its latest jobs, the files its
loads refused, and the settlements chosen for one approval of many."""

from collections.abc import Collection

from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from settlements.models import Case, Incident, Job, JobItem, Settlement, Tournament
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
    """The incident's latest jobs, newest first, with who started each and how many of its
    items failed: a load that is "done" may still have refused files."""
    failed = Count("items", filter=Q(items__status=JobItem.Status.FAILED))
    return incident.jobs.select_related("created_by").annotate(failed=failed)[:limit]


def incident_refused_files(incident: Incident, *, limit: int) -> list[JobItem]:
    """Files the incident's loads refused, newest load first, up to ``limit`` and one more
    (the page says there are more). A file of the same name a later load took is left out:
    its tournament is in a case by now."""
    # Without this list a refused file is seen only on its job's page, and a crashed
    # tournament that is in no case can be forgotten.
    uploads = JobItem.objects.filter(job__incident=incident, job__kind=Job.Kind.UPLOAD)
    loaded_later = uploads.filter(
        key=OuterRef("key"), status=JobItem.Status.DONE, job_id__gt=OuterRef("job_id")
    )
    refused = (
        uploads.filter(status=JobItem.Status.FAILED)
        .filter(~Exists(loaded_later))
        .select_related("job")
        .only("label", "message", "job", "job__created_at")
        .order_by("-job__created_at", "-job_id", "position")
    )
    return list(refused[: limit + 1])


def chosen_for_approval(incident: Incident, ids: Collection[int]) -> QuerySet[Settlement]:
    """Those of ``ids`` that still await approval in ``incident``; a settlement approved,
    rejected or withdrawn since it was chosen is left out."""
    return with_ids(awaiting_approval(incident), ids)
