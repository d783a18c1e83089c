"""Incidents, cases, their entrants and decisions."""

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import BooleanField, Count, Q, QuerySet, prefetch_related_objects
from django.db.models.expressions import RawSQL

from settlements.models import (
    Case,
    CasePlayer,
    Compensation,
    Decision,
    Incident,
    PrizeWithdrawal,
    Settlement,
    Snapshot,
    Tournament,
)
from settlements.selectors.common import (
    BIG_TOURNAMENT_FIELDS,
    _lean,
    _prefetch,
    from_row,
    model_fields,
    read_compiled,
)
from settlements.workflow import CASE_FINAL, CaseStatus


def incident_list(*, open_only: bool = False) -> QuerySet[Incident]:
    """Incidents, newest first, each annotated with ``case_count`` and ``cases_in_progress``."""
    incidents = Incident.objects.select_related("reported_by", "closed_by").annotate(
        case_count=Count("cases"),
        cases_in_progress=Count("cases", filter=~Q(cases__status__in=CASE_FINAL)),
    )
    if open_only:
        incidents = incidents.filter(closed_at__isnull=True)
    return incidents.order_by("-started_at", "-id")


def incident_detail(incident_id: int) -> Incident:
    return Incident.objects.select_related("reported_by", "closed_by").get(pk=incident_id)


def case_list(
    *,
    status: str | Iterable[str] | None = None,
    incident: Incident | int | None = None,
    kind: str | None = None,
    tournament: Tournament | int | None = None,
    search: str = "",
) -> QuerySet[Case]:
    """Cases with their tournament and incident joined; ``search`` matches the tournament's
    operator id or name."""
    cases = _lean(Case.objects.select_related("tournament", "incident", "created_by"), "tournament")
    if status:
        cases = cases.filter(status__in=[status] if isinstance(status, str) else list(status))
    if incident is not None:
        cases = cases.filter(incident=incident)
    if kind:
        cases = cases.filter(kind=kind)
    if tournament is not None:
        cases = cases.filter(tournament=tournament)
    if search.strip():
        term = search.strip()
        cases = cases.filter(
            Q(tournament__operator_id__icontains=term) | Q(tournament__name__icontains=term)
        )
    return cases.order_by("-created_at", "-id")


def case_status_counts(*, incident: Incident | int | None = None) -> dict[str, int]:
    """Number of cases in each status (every status present, zero when none)."""
    cases = Case.objects.all() if incident is None else Case.objects.filter(incident=incident)
    counts = dict.fromkeys(CaseStatus.values, 0)
    for row in cases.values("status").annotate(n=Count("id")).order_by():
        counts[row["status"]] = row["n"]
    return counts


def _has(model) -> RawSQL:
    """Whether the case has any row of ``model``, as EXISTS written out: four ``Exists()``
    subqueries took 1.4 ms of Python to resolve and compile on every view of a case page,
    more than PostgreSQL took to run the whole query."""
    quote = connection.ops.quote_name
    table, cases = quote(model._meta.db_table), quote(Case._meta.db_table)
    column = quote(model._meta.get_field("case").column)
    key = quote(Case._meta.pk.column)
    sql = f"EXISTS (SELECT 1 FROM {table} WHERE {table}.{column} = {cases}.{key})"
    return RawSQL(sql, (), output_field=BooleanField())


def case_detail(case_id: int) -> Case:
    """A case with what its page shows; decisions and settlements prefetched, newest first.

    The case query also says whether the case has decisions, settlements, compensation and
    prizes given in error (EXISTS), so that what it has none of costs no query of its own
    (a crash case settled without a decision: two prefetches fewer, and the page's lists of
    compensation and prizes, selectors.case_compensations, skip theirs). Its SQL is compiled
    once per process (selectors.common.read_compiled): building the five joins through the
    ORM cost more than running them.
    """
    rows = read_compiled(Case, "case_detail", _case_query, case_id)
    if not rows:
        raise Case.DoesNotExist(f"No case #{case_id}.")
    row, start, records = rows[0], 0, []
    for model, names in _case_parts():
        records.append(from_row(model, names, row, start))
        start += len(names)
    case, tournament, incident, snapshot, created_by = records
    case.tournament, case.incident, case.snapshot, case.created_by = (
        tournament,
        incident,
        snapshot,
        created_by,
    )
    case.has_decision, case.has_settlement, case.has_compensation, case.has_prize_withdrawal = row[
        start:
    ]
    decisions = Decision.objects.select_related("decided_by")
    # The pages list a case's settlements with who prepared them, nothing more.
    settlements = Settlement.objects.select_related("prepared_by")
    # A prefetch of an empty queryset sets an empty list without asking the database.
    prefetch_related_objects(
        [case],
        _prefetch("decisions", decisions if case.has_decision else decisions.none()),
        _prefetch("settlements", settlements if case.has_settlement else settlements.none()),
    )
    return case


def _case_parts() -> tuple[tuple[type, list[str]], ...]:
    """The case's row and those joined to it, each as (model, its fields read)."""
    return (
        (Case, model_fields(Case)),
        (Tournament, model_fields(Tournament, leaving_out=BIG_TOURNAMENT_FIELDS)),
        (Incident, model_fields(Incident)),
        # The snapshot text may be tens of MB; a page needs only its hash and size.
        (Snapshot, model_fields(Snapshot, leaving_out=("text",))),
        (get_user_model(), model_fields(get_user_model())),
    )


def _case_query(case_id: int) -> QuerySet:
    prefixes = ("", "tournament__", "incident__", "snapshot__", "created_by__")
    paths = [
        f"{prefix}{name}"
        for prefix, (_, names) in zip(prefixes, _case_parts(), strict=True)
        for name in names
    ]
    return (
        Case.objects.annotate(
            has_decision=_has(Decision),
            has_settlement=_has(Settlement),
            has_compensation=_has(Compensation),
            has_prize_withdrawal=_has(PrizeWithdrawal),
        )
        .filter(pk=case_id)
        .order_by()
        .values_list(
            *paths, "has_decision", "has_settlement", "has_compensation", "has_prize_withdrawal"
        )
    )


def crash_case_in_force(tournament: Tournament | int) -> Case | None:
    """The tournament's crash case that is not withdrawn (at most one, by a constraint)."""
    return (
        Case.objects.filter(tournament=tournament, kind=Case.Kind.CRASH)
        .exclude(status=CaseStatus.WITHDRAWN)
        .first()
    )


def case_current_settlement(case: Case) -> Settlement | None:
    """The case's latest settlement proper (not an adjustment), whatever its status."""
    return (
        Settlement.objects.filter(case=case, kind=Settlement.Kind.SETTLEMENT)
        .select_related("prepared_by", "submitted_by", "approved_by", "rejected_by")
        .order_by("-prepared_at", "-id")
        .first()
    )


def case_entrants(case: Case, *, search: str = "", remaining_only: bool = False):
    entries = CasePlayer.objects.filter(case=case)
    if remaining_only:
        entries = entries.filter(chips__gt=0)
    if search.strip():
        entries = entries.filter(player__icontains=search.strip())
    return entries.order_by("position")


def settlement_decision(settlement: Settlement) -> Decision | None:
    """The decision a settlement was prepared under (the one in force when it was prepared),
    or None for a settlement the rules settled without one."""
    if not settlement.decision:
        return None
    return (
        Decision.objects.filter(case_id=settlement.case_id, decided_at__lte=settlement.prepared_at)
        .select_related("decided_by")
        .order_by("-decided_at", "-id")
        .first()
    )


def decision_invitee_ids(decision: Decision, case: Case):
    """The ids a reschedule of ``case`` invites, in snapshot order, unevaluated where they come
    from the snapshot (a freeroll may have 300,000 entrants), with how many there are."""
    if decision.invite_scope == Decision.InviteScope.CUSTOM:
        return list(decision.invited_players), len(decision.invited_players)
    remaining_only = decision.invite_scope == Decision.InviteScope.REMAINING
    count = (case.remaining if remaining_only else case.entrants) or 0
    entries = case_entrants(case, remaining_only=remaining_only)
    return entries.values_list("player", flat=True), count


def decision_invitees(decision: Decision) -> list[str]:
    """The players a reschedule invites (the default lists are derived from the snapshot)."""
    if decision.invite_scope == Decision.InviteScope.CUSTOM:
        return list(decision.invited_players)
    if not decision.invite_scope:
        return []
    entries = case_entrants(
        decision.case, remaining_only=decision.invite_scope == Decision.InviteScope.REMAINING
    )
    return list(entries.values_list("player", flat=True))


def case_page(
    *,
    limit: int,
    before: int | None = None,
    status: str | None = None,
    incident: int | None = None,
    tournament: str | None = None,
) -> tuple[list[Case], bool]:
    """Up to ``limit`` cases newest first (by id), those with an id below ``before``, and
    whether more follow: a page of the API's list, keyed on the id so that cases created
    meanwhile do not shift the pages still to come. ``tournament`` is the operator's id."""
    cases = case_list(status=status, incident=incident).order_by("-id")
    if tournament is not None:
        cases = cases.filter(tournament__operator_id=tournament)
    if before is not None:
        cases = cases.filter(pk__lt=before)
    page = list(cases[: limit + 1])
    return page[:limit], len(page) > limit


def case_loaded_from(case: Case, text: str) -> bool:
    """Whether ``case`` was opened from exactly the snapshot ``text`` (by its digest)."""
    return Snapshot.objects.filter(case=case, sha256=Snapshot.digest(text)).exists()
