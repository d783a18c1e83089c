"""What is waiting for whom, and what the dashboard shows."""

from dataclasses import dataclass

from django.apps import apps
from django.core.paginator import Page
from django.db.models import Count, QuerySet, Window
from django.urls import reverse

from settlements.access import roles
from settlements.models import Case, Incident
from settlements.selectors.cases import case_list, incident_list
from settlements.selectors.common import lean
from settlements.workflow import AWAITING, CASE_WORK_ORDER, Awaits


@dataclass(frozen=True)
class WaitingFor:
    """Work waiting for one user: each queue of theirs (``workflow.AWAITING``, for the roles
    they hold) by name, a queryset the page may paginate."""

    queues: dict[str, QuerySet]

    def __getitem__(self, name: str) -> QuerySet:
        return self.queues[name]

    def __contains__(self, name: str) -> bool:
        return name in self.queues

    @property
    def total(self) -> int:
        return sum(queryset.count() for queryset in self.queues.values())


def awaiting(name: str) -> Awaits | None:
    """The waiting state behind the queue called ``name``, if there is one."""
    return next((state for state in AWAITING if state.name == name), None)


def waiting_for(user) -> WaitingFor:
    """Every record in a state the user's roles answer, never their own work."""
    held = roles.user_roles(user)
    return WaitingFor(
        {state.name: waiting_records(state, user) for state in AWAITING if state.role in held}
    )


def case_path(model) -> str | None:
    """How a waiting record of ``model`` reaches its case: "" for a case, "case__" for a
    record of one, None for a record on its own (a rulebook version)."""
    if model is Case:
        return ""
    fields = {field.name for field in model._meta.get_fields()}
    return "case__" if "case" in fields else None


def waiting_records(state: Awaits, user) -> QuerySet:
    """The records waiting in ``state`` for ``user``, oldest first."""
    model = apps.get_model(state.model)
    case = case_path(model)
    if case is None:
        # What its link and label read (a rulebook version's key), in the same query.
        related = {path.rsplit("__", 1)[0] for path in state.opens_with if "__" in path}
        records = model.objects.select_related(*related)
    else:
        # Every other record that waits is a case or belongs to one; the queue shows it with
        # its tournament and incident (without the tournament's bulky fields).
        records = lean(
            model.objects.select_related(f"{case}tournament", f"{case}incident"),
            f"{case}tournament",
        )
    records = records.filter(status__in=state.statuses, **dict(state.where))
    for field in state.not_by:
        records = records.exclude(**{field: user})
    return records.order_by(state.since, "pk")


def waiting_rows(state: Awaits, records) -> list[dict]:
    """What a queue shows of each of ``records`` (waiting in ``state``)."""
    rows = []
    for record in records:
        case = record if isinstance(record, Case) else getattr(record, "case", None)
        row = {
            "url": reverse(state.opens, args=state.opens_args(record)),
            "label": f"Case #{record.pk}" if case is record else str(record),
            "operator_id": "",
            "tournament_name": "",
            "incident_title": None,
            "incident_id": None,
            "together": ("", ""),
            "status": record.status,
            "status_display": record.get_status_display(),
            "since": getattr(record, state.since),
        }
        if case is not None:
            row.update(
                operator_id=case.tournament.operator_id,
                tournament_name=case.tournament.name,
                incident_title=case.incident.title if case.incident else None,
                incident_id=case.incident_id,
                # (URL name, words) of the page answering the incident's records together.
                together=state.together if case.incident_id else ("", ""),
            )
        rows.append(row)
    return rows


DASHBOARD_INCIDENTS_PER_PAGE = 10


DASHBOARD_WAITING_SHOWN = 5


_STATUS_ORDER = {status: rank for rank, status in enumerate(CASE_WORK_ORDER)}


def in_workflow_order(cases) -> list:
    return sorted(cases, key=lambda case: (_STATUS_ORDER[case.status], case.pk))


def open_incident_count() -> int:
    return Incident.objects.filter(closed_at__isnull=True).count()


def dashboard_incidents(paged: Page) -> list[dict]:
    """The open incidents on dashboard page ``paged`` (a page of the open incidents' count),
    each with its cases in workflow order."""
    if not paged.paginator.count:
        return []
    start = (paged.number - 1) * DASHBOARD_INCIDENTS_PER_PAGE
    incidents = list(
        incident_list(open_only=True)
        .select_related(None)
        .select_related("reported_by")[start : start + DASHBOARD_INCIDENTS_PER_PAGE]
    )
    cases: dict[int, list[Case]] = {incident.pk: [] for incident in incidents}
    for case in case_list().filter(incident__in=list(cases)):
        cases[case.incident_id].append(case)
    return [
        {
            "pk": incident.pk,
            "title": incident.title,
            "started_at": incident.started_at,
            "reported_by": incident.reported_by.get_username(),
            "case_count": incident.case_count,
            "cases_in_progress": incident.cases_in_progress,
            "case_rows": [
                {
                    "pk": case.pk,
                    "operator_id": case.tournament.operator_id,
                    "tournament_name": case.tournament.name,
                    "type_display": case.tournament.get_type_display(),
                    "stage": case.stage,
                    "entrants": case.entrants,
                    "pool": case.pool,
                    "currency": case.tournament.currency,
                    "status": case.status,
                    "status_display": case.get_status_display(),
                }
                for case in in_workflow_order(cases[incident.pk])
            ],
        }
        for incident in incidents
    ]


@dataclass(frozen=True)
class DashboardQueues:
    """The "waiting for you" queues of one user: ``queues`` as (title, count, the oldest
    items, queue name), and how many items wait in all."""

    queues: list[tuple[str, int, list[dict], str]]

    @property
    def total(self) -> int:
        return sum(count for _, count, *_ in self.queues)


def dashboard_queues(user) -> DashboardQueues:
    waiting = waiting_for(user)
    queues = []
    for state in AWAITING:
        if state.name in waiting:
            # The queue's length rides along with its oldest records: one query a queue.
            oldest = list(
                waiting[state.name].annotate(waiting=Window(Count("pk")))[:DASHBOARD_WAITING_SHOWN]
            )
            count = oldest[0].waiting if oldest else 0
            queues.append((state.title, count, waiting_rows(state, oldest), state.name))
    return DashboardQueues(queues)
