"""Reads shared by the pages, the API and the admin, with the joins that keep query counts flat.

Nothing here writes. Querysets are returned unevaluated where a page paginates them.
"""

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.paginator import Page, Paginator
from django.db.models import CharField, Count, F, OuterRef, Prefetch, Q, QuerySet, Subquery, Value
from django.db.models.expressions import Window
from django.db.models.functions import Coalesce, RowNumber

from settlements import changes, roles
from settlements.charts import ChartPoint, sample_by_rank
from settlements.models import (
    ApiToken,
    Case,
    CasePlayer,
    Compensation,
    CompensationItem,
    Decision,
    Event,
    Incident,
    PrizeWithdrawal,
    Settlement,
    SettlementLine,
    SettlementPayout,
    Tournament,
)
from settlements.rules import ENGINE_VERSION, InvalidInput, Policy, parse_snapshot, settle
from settlements.rules import Settlement as EngineSettlement
from settlements.workflow import CASE_FINAL, CaseStatus, CompensationStatus, SettlementStatus

# A tournament's payout structure is stored with it: 45,000 places (hundreds of kB of JSON) for
# a 300,000-entrant field. No list or page shows it, so every read that joins a tournament
# leaves it out; reading and decoding it took a few ms of each page that showed a big case.
BIG_TOURNAMENT_FIELDS = ("payouts",)


def _lean(queryset: QuerySet, tournament_path: str) -> QuerySet:
    """``queryset`` without the bulky tournament fields reached through ``tournament_path``."""
    return queryset.defer(*(f"{tournament_path}__{name}" for name in BIG_TOURNAMENT_FIELDS))


# --- Incidents and cases ---------------------------------------------------------------------


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


def case_detail(case_id: int) -> Case:
    """A case with what its page shows; decisions and settlements prefetched, newest first."""
    return (
        _lean(
            Case.objects.select_related("tournament", "incident", "snapshot", "created_by"),
            "tournament",
        )
        # The snapshot text may be tens of MB; a page needs only its hash and size.
        .defer("snapshot__text")
        .prefetch_related(
            _prefetch("decisions", Decision.objects.select_related("decided_by")),
            _prefetch(
                "settlements",
                Settlement.objects.select_related(
                    "prepared_by", "submitted_by", "approved_by", "rejected_by", "corrects"
                ),
            ),
        )
        .get(pk=case_id)
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


def case_latest_decision(case: Case) -> Decision | None:
    return case.decisions.select_related("decided_by").order_by("-decided_at", "-id").first()


def case_preview(case: Case, *, decision: str | None = None) -> EngineSettlement:
    """What the engine would pay for ``decision``, computed now and stored nowhere (the
    Marketing Manager's side-by-side previews). Raises the engine's InvalidInput."""
    snapshot = parse_snapshot(case.snapshot.text)
    return settle(snapshot, decision=decision, policy=Policy(**case.policy))


@dataclass(frozen=True)
class PayoutExample:
    """One player's payout in a preview, with their chips and chip rank (1 = most chips)."""

    player: str
    chips: int
    rank: int
    cash: int
    tdollars: int
    tickets: int
    fpp: int


@dataclass(frozen=True)
class DecisionPreview:
    """What one decision option would pay, summarised from the engine's output.

    ``chart`` holds at most MAX_CHART_POINTS payouts by chip rank (see ``payout_worth``) out
    of ``players_paid``; it is empty when nothing is paid in money. ``problem`` is the
    engine's refusal when the option cannot be settled.
    """

    option: str
    remedy: str | None
    players_paid: int
    pool_distributed: int
    totals: "Totals"
    biggest: PayoutExample | None
    smallest: PayoutExample | None
    chart: list[ChartPoint]
    problem: str = ""


# Previews are cached by everything that decides them, so a snapshot of 300,000 entrants is
# settled once per option rather than on every view of the decision page.
PREVIEW_CACHE_SECONDS = 24 * 60 * 60


def decision_previews(case: Case) -> list[DecisionPreview]:
    """A preview of every option the case's decision offers, in the rules' order."""
    options = list(case.decision_options)
    if not options:
        return []
    keys = {option: _preview_key(case, option) for option in options}
    found = cache.get_many(list(keys.values()))
    missing = [option for option in options if keys[option] not in found]
    if missing:
        snapshot = parse_snapshot(case.snapshot.text)
        computed = {option: _preview(snapshot, case, option) for option in missing}
        cache.set_many(
            {keys[option]: preview for option, preview in computed.items()},
            PREVIEW_CACHE_SECONDS,
        )
        found.update({keys[option]: preview for option, preview in computed.items()})
    return [found[keys[option]] for option in options]


def payout_worth(*, cash: int, tdollars: int, tickets: int, seat_value: int | None) -> int:
    """What a payout is worth in the currency, for charts and for ordering payouts: cash and
    T$ at face value, a seat at the seat value. FPP are points, not money, and are left out."""
    return cash + tdollars + tickets * (seat_value or 0)


def _preview_key(case: Case, option: str) -> str:
    policy = json.dumps(case.policy, sort_keys=True, separators=(",", ":"))
    return f"crashdesk:preview:{ENGINE_VERSION}:{case.snapshot.sha256}:{policy}:{option}"


def _preview(snapshot, case: Case, option: str) -> DecisionPreview:
    try:
        result = settle(snapshot, decision=option, policy=Policy(**case.policy))
    except InvalidInput as exc:
        return DecisionPreview(
            option=option,
            remedy=None,
            players_paid=0,
            pool_distributed=0,
            totals=_totals_from({}),
            biggest=None,
            smallest=None,
            chart=[],
            problem="; ".join(problem.message for problem in exc.problems),
        )
    totals: dict[str, dict[str, int]] = {}
    for line in result.lines:
        by_source = totals.setdefault(line.unit, {})
        by_source[line.source] = by_source.get(line.source, 0) + line.amount
    seat_value = getattr(snapshot.tournament, "seat_value", None)
    chips = {player.id: player.chips for player in snapshot.players}
    ranked = sorted(result.payouts, key=lambda row: (-chips[row.player], row.player))
    examples = [
        PayoutExample(
            player=row.player,
            chips=chips[row.player],
            rank=rank,
            cash=row.cash,
            tdollars=row.tdollars,
            tickets=row.tickets,
            fpp=row.fpp,
        )
        for rank, row in enumerate(ranked, start=1)
    ]
    worth = [
        payout_worth(cash=e.cash, tdollars=e.tdollars, tickets=e.tickets, seat_value=seat_value)
        for e in examples
    ]
    # Points-only payouts (FPP refunds) are ordered by points; money payouts by their worth.
    order = worth if any(worth) else [e.fpp for e in examples]
    biggest = smallest = None
    if examples:
        top = max(range(len(examples)), key=lambda i: (order[i], -i))
        bottom = min(range(len(examples)), key=lambda i: (order[i], -i))
        biggest, smallest = examples[top], examples[bottom]
    return DecisionPreview(
        option=option,
        remedy=result.remedy,
        players_paid=len(result.payouts),
        pool_distributed=result.pool_distributed,
        totals=_totals_from(totals),
        biggest=biggest,
        smallest=smallest,
        chart=sample_by_rank(worth) if any(worth) else [],
    )


def case_entrants(case: Case, *, search: str = "", remaining_only: bool = False):
    entries = CasePlayer.objects.filter(case=case)
    if remaining_only:
        entries = entries.filter(chips__gt=0)
    if search.strip():
        entries = entries.filter(player__icontains=search.strip())
    return entries.order_by("position")


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


# --- What is waiting for whom ----------------------------------------------------------------


@dataclass(frozen=True)
class WaitingFor:
    """Work waiting for one user, by kind; each a queryset the page may paginate."""

    decisions: QuerySet[Case]
    to_prepare: QuerySet[Case]
    to_submit: QuerySet[Settlement]
    approvals: QuerySet[Settlement]
    compensations: QuerySet[Compensation]
    individual_cases: QuerySet[Case]

    @property
    def total(self) -> int:
        return sum(
            queryset.count()
            for queryset in (
                self.decisions,
                self.to_prepare,
                self.to_submit,
                self.approvals,
                self.compensations,
                self.individual_cases,
            )
        )


def waiting_for(user) -> WaitingFor:
    """Decisions for Marketing Managers; approvals, compensation and individual cases for
    Tournament Managers (never their own work); preparation and submission for operators."""
    held = roles.user_roles(user)
    # A queue shows each record with its tournament, incident and author: fewer joins, and an
    # item count per row rather than a GROUP BY, make its queries several times cheaper to plan
    # than the full lists' (1.9 ms -> 0.4 ms for five compensation proposals).
    cases = _lean(Case.objects.select_related("tournament", "incident"), "tournament")
    settlements = _lean(
        Settlement.objects.select_related("case__tournament", "case__incident", "prepared_by"),
        "case__tournament",
    ).order_by("prepared_at", "id")
    none_cases, none_settlements = cases.none(), settlements.none()

    decisions = none_cases
    if roles.MARKETING_MANAGER in held:
        decisions = cases.filter(status=CaseStatus.AWAITING_DECISION).order_by("created_at")
    to_prepare, to_submit = none_cases, none_settlements
    if roles.OPERATOR in held:
        to_prepare = cases.filter(
            kind=Case.Kind.CRASH, status__in=[CaseStatus.READY, CaseStatus.REJECTED]
        ).order_by("created_at")
        to_submit = settlements.filter(status=SettlementStatus.PREPARED)
    approvals, compensations, individual = none_settlements, Compensation.objects.none(), none_cases
    if roles.TOURNAMENT_MANAGER in held:
        approvals = settlements.filter(status=SettlementStatus.AWAITING_APPROVAL).exclude(
            Q(prepared_by=user) | Q(submitted_by=user)
        )
        items = (
            CompensationItem.objects.filter(compensation=OuterRef("pk"))
            .values("compensation")
            .annotate(n=Count("id"))
            .values("n")
        )
        compensations = (
            _lean(
                Compensation.objects.select_related(
                    "case__tournament", "case__incident", "proposed_by"
                ),
                "case__tournament",
            )
            .annotate(item_count=Coalesce(Subquery(items), 0))
            .filter(status=CompensationStatus.PROPOSED)
            .exclude(proposed_by=user)
            .order_by("proposed_at", "id")
        )
        individual = cases.filter(kind=Case.Kind.INDIVIDUAL, status=CaseStatus.OPEN).order_by(
            "created_at"
        )
    return WaitingFor(
        decisions=decisions,
        to_prepare=to_prepare,
        to_submit=to_submit,
        approvals=approvals,
        compensations=compensations,
        individual_cases=individual,
    )


# --- The dashboard ---------------------------------------------------------------------------

DASHBOARD_INCIDENTS_PER_PAGE = 10
DASHBOARD_WAITING_SHOWN = 5
# Entries of a mark that has moved on are never read again; they expire instead of waiting for
# the cache to cull them.
DASHBOARD_CACHE_SECONDS = 10 * 60

# Cases that need someone come first (a rejected settlement is redone before new work), then
# those moving through approval, then the finished ones, and last those withdrawn as loaded in
# error.
_STATUS_ORDER = {
    status: index
    for index, status in enumerate(
        (
            CaseStatus.AWAITING_DECISION,
            CaseStatus.REJECTED,
            CaseStatus.READY,
            CaseStatus.PREPARED,
            CaseStatus.AWAITING_APPROVAL,
            CaseStatus.OPEN,
            CaseStatus.APPROVED,
            CaseStatus.RESOLVED,
            CaseStatus.WITHDRAWN,
        )
    )
}


def in_workflow_order(cases) -> list:
    return sorted(cases, key=lambda case: (_STATUS_ORDER[case.status], case.pk))


# The "waiting for you" queues: (title, attribute of WaitingFor, role, record kind).
DASHBOARD_QUEUES = (
    ("Decisions to make", "decisions", roles.MARKETING_MANAGER, "case"),
    ("Settlements to prepare", "to_prepare", roles.OPERATOR, "case"),
    ("Settlements to submit", "to_submit", roles.OPERATOR, "settlement"),
    ("Settlements to approve", "approvals", roles.TOURNAMENT_MANAGER, "settlement"),
    ("Compensation to approve", "compensations", roles.TOURNAMENT_MANAGER, "compensation"),
    ("Individual cases to resolve", "individual_cases", roles.TOURNAMENT_MANAGER, "case"),
)


@dataclass(frozen=True)
class DashboardSummary:
    """The dashboard's data as plain values: ``counts`` by case status, one ``page`` of open
    incidents (``incidents``, dicts with their ``case_rows``), and the user's ``queues`` as
    (title, count, items, kind)."""

    counts: dict[str, int]
    page: Page
    incidents: list[dict]
    queues: list[tuple[str, int, list[dict], str]]

    @property
    def waiting_total(self) -> int:
        return sum(count for _, count, _, _ in self.queues)


def dashboard_summary(user, *, page: str | int | None = None) -> DashboardSummary:
    """What the dashboard shows ``user`` on incident ``page``.

    Reading it costs a user with every role 19 queries, so the parts are kept in the shared
    cache keyed by the desk's change mark: any business change moves the mark, and an entry is
    only ever read for the data it was computed from. The counts and incident pages are the
    same for everyone; the queues depend on the roles and, where a manager's own work is left
    out, on the user. Usernames are not business data (an administrator may rename a user),
    so they are read fresh on each view.
    """
    held = sorted(roles.user_roles(user))
    prefix = f"dashboard:{changes.mark()}"
    counts_key = f"{prefix}:counts"
    queues_key = f"{prefix}:queues:{'+'.join(held) or '-'}"
    if roles.TOURNAMENT_MANAGER in held:
        queues_key += f":{user.pk}"
    found = cache.get_many([counts_key, queues_key])
    fresh = {}
    if counts_key not in found:
        fresh[counts_key] = {
            "statuses": case_status_counts(),
            "open_incidents": Incident.objects.filter(closed_at__isnull=True).count(),
        }
    if queues_key not in found:
        fresh[queues_key] = _dashboard_queues(user, held)
    counts = found.get(counts_key) or fresh[counts_key]
    queues = found.get(queues_key) or fresh[queues_key]

    # Paging over the count alone settles the page number (out of range or not a number gives
    # the last or first page) before the page's own entry is looked up.
    paged = Paginator(range(counts["open_incidents"]), DASHBOARD_INCIDENTS_PER_PAGE).get_page(page)
    page_key = f"{prefix}:incidents:{paged.number}"
    incidents = cache.get(page_key)
    if incidents is None:
        incidents = fresh[page_key] = _dashboard_incidents(paged)
    if fresh:
        cache.set_many(fresh, DASHBOARD_CACHE_SECONDS)

    reporters = {incident["reported_by_id"] for incident in incidents}
    names = {}
    if reporters:
        users = get_user_model()
        names = dict(users.objects.filter(pk__in=reporters).values_list("pk", users.USERNAME_FIELD))
    return DashboardSummary(
        counts=counts["statuses"],
        page=paged,
        incidents=[
            {**incident, "reported_by": names.get(incident["reported_by_id"], "")}
            for incident in incidents
        ],
        queues=queues,
    )


def _dashboard_incidents(paged: Page) -> list[dict]:
    if not paged.paginator.count:
        return []
    start = (paged.number - 1) * DASHBOARD_INCIDENTS_PER_PAGE
    incidents = list(
        incident_list(open_only=True).select_related(None)[
            start : start + DASHBOARD_INCIDENTS_PER_PAGE
        ]
    )
    cases: dict[int, list[Case]] = {incident.pk: [] for incident in incidents}
    for case in case_list().filter(incident__in=list(cases)):
        cases[case.incident_id].append(case)
    return [
        {
            "pk": incident.pk,
            "title": incident.title,
            "started_at": incident.started_at,
            "reported_by_id": incident.reported_by_id,
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


def _dashboard_queues(user, held: Sequence[str]) -> list[tuple[str, int, list[dict], str]]:
    waiting = waiting_for(user)
    queues = []
    for title, attribute, role, kind in DASHBOARD_QUEUES:
        if role in held:
            queryset = getattr(waiting, attribute)
            items = [_queue_item(item, kind) for item in queryset[:DASHBOARD_WAITING_SHOWN]]
            queues.append((title, queryset.count(), items, kind))
    return queues


def _queue_item(item, kind: str) -> dict:
    case = item if kind == "case" else item.case
    return {
        "pk": item.pk,
        "label": str(item),
        "operator_id": case.tournament.operator_id,
        "tournament_name": case.tournament.name,
        "incident_title": case.incident.title if case.incident else None,
        "status": item.status,
        "status_display": item.get_status_display(),
    }


# --- Settlements -----------------------------------------------------------------------------


def settlement_detail(settlement_id: int) -> Settlement:
    settlements = Settlement.objects.select_related(
        "case__tournament",
        "case__incident",
        "corrects",
        "prepared_by",
        "submitted_by",
        "approved_by",
        "rejected_by",
    )
    return _lean(settlements, "case__tournament").get(pk=settlement_id)


def settlement_payouts(settlement: Settlement, *, search: str = "") -> QuerySet[SettlementPayout]:
    """Per-player totals with the engine's explanation, in the engine's order (player ids in
    code-point order); ``search`` matches part of the id. Paginate it: a settlement may pay
    300,000 players (by ``position`` ranges when unsearched, see views.paging)."""
    payouts = SettlementPayout.objects.filter(settlement=settlement)
    if search.strip():
        payouts = payouts.filter(player__icontains=search.strip())
    return payouts.order_by("position")


def settlement_payout(settlement: Settlement, player: str) -> SettlementPayout | None:
    """One player's payout row with the engine's explanation, or None if not paid."""
    return SettlementPayout.objects.filter(settlement=settlement, player=player).first()


def settlement_lines(settlement: Settlement, *, player: str | None = None):
    lines = SettlementLine.objects.filter(settlement=settlement)
    if player is not None:
        lines = lines.filter(player=player)
    return lines.order_by("line_no")


@dataclass(frozen=True)
class Totals:
    """Sums of a settlement's lines: ``by_unit`` {unit: amount}, ``by_source``
    {source: {unit: amount}} and ``rows`` [(unit, source, amount)] in a stable order."""

    by_unit: dict[str, int]
    by_source: dict[str, dict[str, int]]
    rows: list[tuple[str, str, int]]


_UNIT_ORDER = ("cash", "tdollars", "tickets", "fpp")
_SOURCE_ORDER = ("pool", "house")


def settlement_totals(settlement: Settlement) -> Totals:
    """Totals by unit and by source, from the sums stored when the settlement was written."""
    return _totals_from(settlement.totals)


def _totals_from(totals: dict[str, dict[str, int]]) -> Totals:
    rows = sorted(
        (
            (unit, source, amount)
            for unit, by_source in totals.items()
            for source, amount in by_source.items()
        ),
        key=lambda row: (_rank(_UNIT_ORDER, row[0]), _rank(_SOURCE_ORDER, row[1])),
    )
    by_unit: dict[str, int] = {}
    by_source: dict[str, dict[str, int]] = {}
    for unit, source, amount in rows:
        by_unit[unit] = by_unit.get(unit, 0) + amount
        by_source.setdefault(source, {})[unit] = amount
    return Totals(by_unit=by_unit, by_source=by_source, rows=rows)


def settlement_payout_curve(settlement: Settlement, *, points: int = 200) -> list[dict]:
    """Payouts by chip rank (1 = most chips), thinned to about ``points`` evenly spaced
    ranks in the database so that a 300,000-player settlement stays a small chart."""
    count = settlement.payout_count
    step = max(1, -(-count // points))
    ranked = SettlementPayout.objects.filter(settlement=settlement).annotate(
        rank=Window(RowNumber(), order_by=[F("chips").desc(), F("player").asc()])
    )
    if step > 1:
        ranked = ranked.annotate(offset=(F("rank") - 1) % step).filter(Q(offset=0) | Q(rank=count))
    return list(
        ranked.order_by("rank").values(
            "rank", "player", "chips", "cash", "tdollars", "tickets", "fpp"
        )
    )


def settlement_chart_points(settlement: Settlement) -> list[ChartPoint]:
    """The payout chart's points by chip rank (see ``payout_worth``); empty when the
    settlement pays nothing in money (an FPP refund, an adjustment).

    A settlement's payout rows are written once and never changed, so the points (a ranking
    of up to 300,000 rows) are computed once and cached."""
    if settlement.is_adjustment:
        return []
    key = f"crashdesk:chart:{settlement.pk}:{settlement.prepared_at.isoformat()}"
    points = cache.get(key)
    if points is None:
        points = _chart_points(settlement)
        cache.set(key, points, PREVIEW_CACHE_SECONDS)
    return points


def _chart_points(settlement: Settlement) -> list[ChartPoint]:
    seat_value = settlement.case.tournament.seat_value
    points = [
        ChartPoint(
            row["rank"],
            payout_worth(
                cash=row["cash"],
                tdollars=row["tdollars"],
                tickets=row["tickets"],
                seat_value=seat_value,
            ),
        )
        for row in settlement_payout_curve(settlement)
    ]
    return points if any(point.amount for point in points) else []


def settlement_as_dict(settlement: Settlement) -> dict:
    """The settlement in the ``crash-settlement/1`` format of ``manage.py settle``, rebuilt
    from the stored rows (adjustments also list their reversals as negative amounts)."""
    return settlements_as_dicts([settlement])[0]


def settlements_as_dicts(settlements: Sequence[Settlement]) -> list[dict]:
    """``settlement_as_dict`` of several settlements (a settlement and its adjustments) with
    two queries in all, however many they are."""
    if not settlements:
        return []
    ids = [settlement.pk for settlement in settlements]
    payouts: dict[int, list[dict]] = {pk: [] for pk in ids}
    rows = (
        SettlementPayout.objects.filter(settlement__in=ids)
        .order_by("settlement", "position")
        .values_list("settlement", "player", "cash", "tdollars", "tickets", "fpp")
    )
    for settlement_id, player, cash, tdollars, tickets, fpp in rows:
        payouts[settlement_id].append(
            {"player": player, "cash": cash, "tdollars": tdollars, "tickets": tickets, "fpp": fpp}
        )
    lines: dict[int, list[dict]] = {pk: [] for pk in ids}
    rows = (
        SettlementLine.objects.filter(settlement__in=ids)
        .order_by("settlement", "line_no")
        .values_list("settlement", "player", "kind", "unit", "amount", "source", "reversal")
    )
    for settlement_id, player, kind, unit, amount, source, reversal in rows:
        lines[settlement_id].append(
            {
                "player": player,
                "kind": kind,
                "unit": unit,
                "amount": -amount if reversal else amount,
                "source": source,
            }
        )
    return [
        {
            "format": "crash-settlement/1",
            "tournament_id": settlement.case.tournament.operator_id,
            "policy": settlement.policy,
            "stage": settlement.stage,
            "remedy": settlement.remedy or None,
            "decision": settlement.decision or None,
            "decision_options": [] if settlement.remedy else list(settlement.case.decision_options),
            "entrants": settlement.entrants,
            "eliminated": settlement.eliminated,
            "remaining": settlement.remaining,
            "pool": settlement.pool,
            "pool_distributed": settlement.pool_distributed,
            "payouts": payouts[settlement.pk],
            "lines": lines[settlement.pk],
        }
        for settlement in settlements
    ]


def settlement_adjustments(settlement: Settlement) -> QuerySet[Settlement]:
    """The adjustments that correct ``settlement``, oldest first."""
    return Settlement.objects.filter(corrects=settlement, kind=Settlement.Kind.ADJUSTMENT).order_by(
        "prepared_at", "id"
    )


# --- Compensation and prize withdrawals ------------------------------------------------------


def compensation_list(
    *, status: str | None = None, case: Case | None = None
) -> QuerySet[Compensation]:
    compensations = _lean(
        Compensation.objects.select_related(
            "case__tournament", "case__incident", "proposed_by", "approved_by", "rejected_by"
        ),
        "case__tournament",
    ).annotate(item_count=Count("items"))
    if status:
        compensations = compensations.filter(status=status)
    if case is not None:
        compensations = compensations.filter(case=case)
    return compensations.order_by("proposed_at", "id")


def compensation_detail(compensation_id: int) -> Compensation:
    compensations = Compensation.objects.select_related(
        "case__tournament", "case__incident", "proposed_by", "approved_by", "rejected_by"
    )
    compensations = _lean(compensations, "case__tournament").prefetch_related("items")
    return compensations.get(pk=compensation_id)


def prize_withdrawal_list(*, case: Case | None = None) -> QuerySet[PrizeWithdrawal]:
    withdrawals = _lean(
        PrizeWithdrawal.objects.select_related("case__tournament", "decided_by"), "case__tournament"
    )
    if case is not None:
        withdrawals = withdrawals.filter(case=case)
    return withdrawals.order_by("-decided_at", "-id")


# --- Audit: events and history ---------------------------------------------------------------


def event_list(
    *,
    incident: Incident | int | None = None,
    case: Case | int | None = None,
    tournament: Tournament | int | None = None,
    actor=None,
    type: str | None = None,
    subject_type: str | None = None,
    subject_id: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[Event]:
    """Business events, newest first, filtered by any combination of the arguments;
    ``subject_type`` and ``subject_id`` name the record an event is about (e.g. "settlement",
    42)."""
    events = _lean(
        Event.objects.select_related("actor", "incident", "case", "tournament"), "tournament"
    )
    filters = {
        "incident": incident,
        "case": case,
        "tournament": tournament,
        "actor": actor,
        "type": type,
        "subject_type": subject_type,
        "subject_id": subject_id,
        "at__gte": since,
        "at__lt": until,
    }
    events = events.filter(**{key: value for key, value in filters.items() if value is not None})
    return events.order_by("-at", "-id")


def incident_timeline(incident: Incident) -> QuerySet[Event]:
    """Everything that happened in an incident, oldest first."""
    return event_list(incident=incident).order_by("at", "id")


# The versioned models an auditor can browse, with the paths from each historical row to the
# incident, case and tournament it belongs to (None: it belongs to none).
HISTORY_MODELS: dict[str, tuple[type, str | None, str | None, str | None]] = {
    "incident": (Incident, "id", None, None),
    "tournament": (Tournament, None, None, "id"),
    "case": (Case, "incident", "id", "tournament"),
    "decision": (Decision, "case__incident", "case", "case__tournament"),
    "settlement": (Settlement, "case__incident", "case", "case__tournament"),
    "compensation": (Compensation, "case__incident", "case", "case__tournament"),
    "prizewithdrawal": (PrizeWithdrawal, "case__incident", "case", "case__tournament"),
    "apitoken": (ApiToken, None, None, None),
}


def history_entries(
    *,
    model: str | None = None,
    user=None,
    since: datetime | None = None,
    until: datetime | None = None,
    incident: Incident | int | None = None,
    case: Case | int | None = None,
    tournament: Tournament | int | None = None,
) -> QuerySet:
    """Every recorded version across the audited models, newest first, as dicts with
    ``model``, ``history_id``, ``id`` (of the versioned row), ``history_date``,
    ``history_type``, ``history_user_id`` and ``history_change_reason``: one UNION query."""
    names = [model] if model else list(HISTORY_MODELS)
    parts = []
    for name in names:
        queryset = _history_part(name, user, since, until, incident, case, tournament)
        if queryset is not None:
            parts.append(queryset)
    if not parts:
        return HISTORY_MODELS["incident"][0].history.none().values("history_id")
    first, *rest = parts
    union = first.union(*rest, all=True) if rest else first
    return union.order_by("-history_date", "-history_id")


def history_record(model: str, history_id: int):
    """One historical version (with its user), for the diff view."""
    return (
        HISTORY_MODELS[model][0].history.select_related("history_user").get(history_id=history_id)
    )


@dataclass(frozen=True)
class FieldChange:
    field: str
    label: str
    old: object
    new: object


def history_changes(record) -> list[FieldChange]:
    """What this version changed compared with the one before it (every set field when it
    is the first version). Uses simple-history's ``diff_against``."""
    previous = record.prev_record
    model = record.instance_type
    if previous is None:
        return [
            FieldChange(
                field.attname,
                str(field.verbose_name),
                None,
                getattr(record, field.attname),
            )
            for field in model._meta.concrete_fields
            if getattr(record, field.attname) not in (None, "", [], {})
        ]
    delta = record.diff_against(previous, foreign_keys_are_objs=False)
    return [
        FieldChange(
            change.field,
            str(model._meta.get_field(change.field).verbose_name),
            change.old,
            change.new,
        )
        for change in delta.changes
    ]


def _history_part(name, user, since, until, incident, case, tournament):
    model, incident_path, case_path, tournament_path = HISTORY_MODELS[name]
    records = model.history.all()
    for value, path in ((incident, incident_path), (case, case_path)):
        if value is not None:
            if path is None:
                return None
            records = records.filter(**{path: _pk(value)})
    if tournament is not None:
        if tournament_path is None:
            return None
        records = records.filter(**{tournament_path: _pk(tournament)})
    if user is not None:
        records = records.filter(history_user=user)
    if since is not None:
        records = records.filter(history_date__gte=since)
    if until is not None:
        records = records.filter(history_date__lt=until)
    # Each part unordered (SQLite allows no ORDER BY inside a UNION); the union is ordered.
    return (
        records.order_by()
        .annotate(model=Value(name, output_field=CharField()))
        .values(
            "model",
            "history_id",
            "id",
            "history_date",
            "history_type",
            "history_user_id",
            "history_change_reason",
        )
    )


def _pk(value) -> int:
    return getattr(value, "pk", value)


def _rank(order: tuple[str, ...], value: str) -> int:
    return order.index(value) if value in order else len(order)


def _prefetch(lookup: str, queryset) -> Prefetch:
    return Prefetch(lookup, queryset=queryset)
