"""Incidents, cases, their entrants and decisions."""

from collections.abc import Iterable

from django.db.models import BooleanField, Count, Q, QuerySet, Sum
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
    Stage,
    Tournament,
)
from settlements.selectors.common import lean
from settlements.workflow import CASE_FINAL, CaseStatus


def incident_list(*, open_only: bool = False) -> QuerySet[Incident]:
    """Incidents, newest first, each annotated with ``case_count`` and ``cases_in_progress``."""
    incidents = Incident.objects.select_related("reported_by", "closed_by").annotate(
        case_count=Count("cases"),
        cases_in_progress=Count("cases", filter=~Q(cases__status__in=CASE_FINAL)),
    )
    if open_only:
        incidents = incidents.filter(closed_at__isnull=True)
    return incidents.order_by(*INCIDENT_ORDER)


INCIDENT_ORDER = ("-started_at", "-id")


def open_incident_ids() -> QuerySet:
    """The open incidents' ids in the order of ``incident_list``, nothing counted."""
    return (
        Incident.objects.filter(closed_at__isnull=True)
        .order_by(*INCIDENT_ORDER)
        .values_list("pk", flat=True)
    )


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
    cases = lean(Case.objects.select_related("tournament", "incident", "created_by"), "tournament")
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


def case_detail(case_id: int) -> Case:
    """A case with what its page shows: its decisions and settlements, newest first, as the
    lists ``case.decision_list`` and ``case.settlement_list``.

    The case query also says whether the case has decisions, settlements, compensation and
    prizes given in error (EXISTS), so that what it has none of costs no query of its own
    (a crash case settled without a decision: two queries fewer, and the page's lists of
    compensation and prizes, selectors.case_compensations, skip theirs). The lists are plain
    queries, not prefetches: prefetch_related_objects took more CPU than the query it ran,
    and as much again for an empty queryset.
    """
    case = (
        lean(Case.objects.select_related(*_CASE_JOINS), "tournament")
        # The snapshot text may be tens of MB; a page needs only its hash and size.
        .defer("snapshot__text")
        .annotate(
            has_decision=_has(Decision),
            has_settlement=_has(Settlement),
            has_compensation=_has(Compensation),
            has_prize_withdrawal=_has(PrizeWithdrawal),
        )
        .get(pk=case_id)
    )
    case.decision_list = (
        list(Decision.objects.select_related("decided_by").filter(case_id=case.pk))
        if case.has_decision
        else []
    )
    case.settlement_list = (
        list(
            Settlement.objects.select_related("prepared_by")
            .only(*_SETTLEMENT_ROW)
            .filter(case_id=case.pk)
        )
        if case.has_settlement
        else []
    )
    return case


_CASE_JOINS = (
    "tournament",
    "incident",
    "snapshot",
    "created_by",
    "rulebook_version__rulebook",
)
# What the pages show of a case's settlements: the list with who prepared each, why the last
# came back, and the withdrawal's confirmation. A third of the columns: less SQL to compile.
_SETTLEMENT_ROW = (
    "case_id",
    "kind",
    "status",
    "currency",
    "remedy",
    "payout_count",
    "pool_distributed",
    "prepared_by__username",
    "prepared_at",
    "rejected_by_id",
    "reviewed_at",
    "review_reason",
)


def _has(model) -> RawSQL:
    """Whether the case has any row of ``model``.

    Written as SQL rather than ``Exists(model.objects.filter(case=OuterRef("pk")))``: building
    and compiling those four subqueries cost 0.4 ms each, a tenth of the case page's CPU, for
    SQL that never changes."""
    case, rows = Case._meta, model._meta
    return RawSQL(
        f'EXISTS (SELECT 1 FROM "{rows.db_table}" WHERE "{rows.get_field("case").column}"'
        f' = "{case.db_table}"."{case.pk.column}")',
        (),
        output_field=BooleanField(),
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


def case_entry_figures(case: Case) -> dict | None:
    """What a crash-snapshot/2 case's entrants bought and hold (RULES.md §8), summed: paid
    entries, rebuys or re-entries, add-ons, bounties on the heads of the players still in, and
    the bounty money the entries paid. None for a version 1 case, which has none of them."""
    if not case.entrants_digest:
        return None
    sums = CasePlayer.objects.filter(case=case).aggregate(
        paid_entries=Sum("entries"),
        add_ons_sold=Sum("add_ons"),
        heads=Sum("bounty"),
        rebuyers=Count("pk", filter=Q(entries__gt=1)),
    )
    bounty = case.tournament.entry_bounty or 0
    return sums | {
        "rebuys": sums["paid_entries"] - (case.entrants or 0),
        "bounty_paid_in": bounty * sums["paid_entries"],
    }


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


def default_invite_scope(stage: str) -> str:
    """Whom a reschedule invites unless players are picked by hand: every entrant of a
    freeroll that crashed early, else only the players still in."""
    return Decision.InviteScope.ENTRANTS if stage == Stage.EARLY else Decision.InviteScope.REMAINING


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
