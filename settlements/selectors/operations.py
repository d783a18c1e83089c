"""The desk's figures for monitoring (``settlements.monitoring`` serves them to Prometheus):
work by state and the age of what waits longest, each a handful of aggregate queries."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.apps import apps
from django.db.models import Count, Min, Q, QuerySet
from django.utils import timezone

from settlements import audit_log
from settlements.access import roles
from settlements.models import Job, JobItem, Settlement
from settlements.selectors.payments.queues import failed_lines, overdue_releases
from settlements.workflow import AWAITING, Awaits, SettlementStatus

# Releases "overdue" from the far future on: every release with lines not yet confirmed.
_ANY_TIME = timedelta(days=365 * 100)


@dataclass(frozen=True)
class DeskFigures:
    jobs: dict[str, int]  # by status, every status present
    job_oldest: dict[str, datetime]  # queued: since created; running: since started
    job_lease_expired_oldest: datetime | None  # the oldest run-out lease of a pending item
    settlements: dict[str, int]  # by status, every status present
    lines: dict[str, int]  # unconfirmed, failed, awaiting_reissue
    line_failed_oldest: datetime | None  # when the longest-failed line's failure was recorded
    waiting_oldest: dict[str, datetime]  # by role: since when its oldest work item waits
    audit: audit_log.Status | None


def desk_figures(*, cache) -> DeskFigures:
    jobs = _by_status(Job.objects.all(), Job.Status.values)
    active = Job.objects.filter(status__in=Job.ACTIVE).aggregate(
        queued=Min("created_at", filter=Q(status=Job.Status.QUEUED)),
        running=Min("started_at", filter=Q(status=Job.Status.RUNNING)),
    )
    # An item's lease runs out when its worker is lost; a live worker takes it over at once,
    # so one run out for long means no worker runs.
    expired = JobItem.objects.filter(
        job__status__in=Job.ACTIVE,
        status=JobItem.Status.PENDING,
        leased_until__lt=timezone.now(),
    ).aggregate(oldest=Min("leased_until"))
    failed = failed_lines()
    failures = failed.aggregate(
        failed=Count("pk", filter=Q(pending_reissue__isnull=True)),
        awaiting=Count("pk", filter=Q(pending_reissue__isnull=False)),
        oldest=Min("recorded_at"),
    )
    unconfirmed = overdue_releases(timezone.now() + _ANY_TIME)
    return DeskFigures(
        jobs=jobs,
        job_oldest={status: active[status] for status in ("queued", "running") if active[status]},
        job_lease_expired_oldest=expired["oldest"],
        settlements=_by_status(Settlement.objects.all(), SettlementStatus.values),
        lines={
            "unconfirmed": sum(unconfirmed.values_list("overdue", flat=True)),
            "failed": failures["failed"],
            "awaiting_reissue": failures["awaiting"],
        },
        line_failed_oldest=failures["oldest"],
        waiting_oldest=_waiting_oldest(unconfirmed),
        audit=audit_log.last_verification(cache=cache),
    )


def _by_status(queryset: QuerySet, statuses: list[str]) -> dict[str, int]:
    counts = dict(queryset.order_by().values_list("status").annotate(n=Count("pk")))
    return {status: counts.get(status, 0) for status in statuses}


def _waiting_oldest(unconfirmed: QuerySet) -> dict[str, datetime]:
    """For each role, since when the oldest item of its work has been waiting: the dashboard's
    queues (``workflow.AWAITING``), without the four-eyes exclusions, which depend on the user;
    one aggregate per kind of record."""
    by_model: dict[str, list[Awaits]] = {}
    for state in AWAITING:
        by_model.setdefault(state.model, []).append(state)
    found: dict[str, list[datetime | None]] = {
        roles.CASHIER: [unconfirmed.aggregate(at=Min("released_at"))["at"]]
    }
    for label, states in by_model.items():
        oldest = apps.get_model(label).objects.aggregate(
            **{
                f"oldest_{state.name}": Min(
                    state.since, filter=Q(status__in=state.statuses, **dict(state.where))
                )
                for state in states
            }
        )
        for state in states:
            found.setdefault(state.role, []).append(oldest[f"oldest_{state.name}"])
    return {
        role: min(times)
        for role, at in found.items()
        if (times := [time for time in at if time is not None])
    }
