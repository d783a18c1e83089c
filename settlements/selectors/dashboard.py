"""What is waiting for whom, and what the dashboard shows."""

from dataclasses import dataclass
from functools import partial

from django.apps import apps
from django.core.paginator import Page
from django.db import connection
from django.db.models import Count, QuerySet, Window
from django.urls import reverse

from settlements import row_stamps
from settlements.access import roles
from settlements.models import Case, Incident, Tournament
from settlements.selectors.cases import case_list, incident_list, open_incident_ids
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
    # Only what a row shows (waiting_rows) is read: whole records with their case, tournament
    # and incident took most of a dashboard's CPU.
    shown = ["status", state.since, *state.opens_with]
    if case is None:
        # What its link and label read (a rulebook version's key), in the same query.
        records = model.objects.select_related(*_joined(state.opens_with, model.LABEL_FIELDS))
        shown += model.LABEL_FIELDS
    else:
        # Every other record that waits is a case or belongs to one; the queue shows it with
        # its tournament and incident.
        records = model.objects.select_related(f"{case}tournament", f"{case}incident")
        shown += [f"{case}{path}" for path in CASE_SHOWN]
        shown += () if model is Case else model.LABEL_FIELDS
    records = records.only(*shown).filter(status__in=state.statuses, **dict(state.where))
    for field in state.not_by:
        records = records.exclude(**{field: user})
    return records.order_by(state.since, "pk")


# What a waiting row shows of its case (waiting_rows).
CASE_SHOWN = ("tournament__operator_id", "tournament__name", "incident__title")


def _joined(*paths: tuple[str, ...]) -> set[str]:
    """The relations that ``paths`` (field paths such as "rulebook__key") go through."""
    return {path.rsplit("__", 1)[0] for group in paths for path in group if "__" in path}


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
    each with its cases in workflow order, read only when its entry is drawn, and ``shown``:
    what keys its entry kept drawn (``_entry_versions``)."""
    if not paged.paginator.count:
        return []
    start = (paged.number - 1) * DASHBOARD_INCIDENTS_PER_PAGE
    ids = list(open_incident_ids()[start : start + DASHBOARD_INCIDENTS_PER_PAGE])
    # The key is read before what the entry shows: a write committed in between leaves an entry
    # newer than its key, which no later view asks for, never one older than its key.
    shown = _entry_versions(ids)
    incidents = (
        incident_list().select_related(None).select_related("reported_by").filter(pk__in=ids)
    )
    case_rows = _CaseRows(ids)
    return [
        {
            "pk": incident.pk,
            "title": incident.title,
            "started_at": incident.started_at,
            "reported_by": incident.reported_by.get_username(),
            "case_count": incident.case_count,
            "cases_in_progress": incident.cases_in_progress,
            "case_rows": partial(case_rows.of, incident.pk),
            "shown": shown.get(incident.pk),
        }
        for incident in incidents
    ]


def _entry_versions(incident_ids: list[int]) -> dict[int, str]:
    """A digest of the versions of every row an incident's entry shows (the incident, who
    reported it, its cases and their tournaments), by incident; none without row stamps.

    A write to any of them, by the services or behind their back, and a case added or taken
    away, gives another digest, so an entry kept under the old one is never shown again."""
    if not incident_ids or not row_stamps.stamped():
        return {}
    user_model = Incident._meta.get_field("reported_by").related_model
    tables = {
        name: connection.ops.quote_name(model._meta.db_table)
        for name, model in (
            ("incident", Incident),
            ("user", user_model),
            ("case", Case),
            ("tournament", Tournament),
        )
    }
    columns = {
        "reported_by": Incident._meta.get_field("reported_by").column,
        "of_incident": Case._meta.get_field("incident").column,
        "tournament": Case._meta.get_field("tournament").column,
    }
    version = row_stamps.version_of
    sql = f"""
        SELECT i.id, md5(concat_ws(' ', {version("i")}, {version("u")}, (
            SELECT string_agg(c.id || {version("c")} || {version("t")}, ' ' ORDER BY c.id)
            FROM {tables["case"]} c
            JOIN {tables["tournament"]} t ON t.id = c.{columns["tournament"]}
            WHERE c.{columns["of_incident"]} = i.id
        )))
        FROM {tables["incident"]} i
        LEFT JOIN {tables["user"]} u ON u.id = i.{columns["reported_by"]}
        WHERE i.id = ANY(%s)
    """  # noqa: S608 (names from the models, ids as a parameter)
    with connection.cursor() as cursor:
        cursor.execute(sql, [incident_ids])
        return dict(cursor.fetchall())


class _CaseRows:
    """The case rows of a page's incidents, read in one query when the first entry not kept
    drawn asks for its own."""

    def __init__(self, incident_ids: list[int]):
        self.incident_ids = incident_ids
        self.rows: dict[int, list[dict]] | None = None

    def of(self, incident_id: int) -> list[dict]:
        if self.rows is None:
            self.rows = self._read()
        return self.rows[incident_id]

    def _read(self) -> dict[int, list[dict]]:
        cases: dict[int, list[Case]] = {pk: [] for pk in self.incident_ids}
        for case in case_list().filter(incident__in=self.incident_ids):
            cases[case.incident_id].append(case)
        return {
            incident_id: [
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
                for case in in_workflow_order(listed)
            ]
            for incident_id, listed in cases.items()
        }


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
