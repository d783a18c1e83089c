"""An incident's own pages: the tournaments it may still hit, its latest jobs, and the
settlements chosen for one approval of many."""

import json
from collections.abc import Collection

from django.db.models import BooleanField, Exists, F, Func, OuterRef, Q, QuerySet

from settlements.models import Case, Incident, Job, Settlement, Tournament
from settlements.selectors.approvals import awaiting_approval
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
    return awaiting_approval(incident).filter(_AmongIds(F("pk"), ids=ids))


class _AmongIds(Func):
    """The column is one of ``ids``, sent as one parameter: an outage's approval posts 2,000
    ids, and as 2,000 placeholders the driver spends 9 ms a query splitting the statement
    around them."""

    output_field = BooleanField()

    def __init__(self, column, *, ids: Collection[int]):
        super().__init__(column)
        self.ids = sorted(ids)

    def as_sql(self, compiler, connection, **extra):
        column, params = compiler.compile(self.get_source_expressions()[0])
        return f"{column} = ANY(%s::bigint[])", (*params, self.ids)

    def as_sqlite(self, compiler, connection, **extra):
        column, params = compiler.compile(self.get_source_expressions()[0])
        return f"{column} IN (SELECT value FROM json_each(%s))", (*params, json.dumps(self.ids))
