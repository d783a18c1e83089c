"""Reads for the bulk path: the incident workbench, and what a bulk action would touch.

Every bulk action is a job (settlements.jobs) over the items chosen here; each item then goes
through its own service call, which checks everything again.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db.models import Case as DbCase
from django.db.models import Count, Min, QuerySet, Sum, When

from settlements import wording
from settlements.models import (
    Case,
    Decision,
    Incident,
    Settlement,
    Stage,
    Tournament,
    TournamentType,
)
from settlements.selectors.approvals import (
    VersionGroup,
    VersionGroups,
    add_unit_sums,
    incident_settlements,
    sorted_totals,
    unit_sums,
)
from settlements.selectors.cases import case_status_counts, default_invite_scope
from settlements.selectors.common import choice_in
from settlements.workflow import CASE_WORK_ORDER, CaseStatus, SettlementStatus

# status -> (what the case needs next, who must do it), in the order work flows
NEXT_STEP = {
    CaseStatus.AWAITING_DECISION: ("Choose the remedy", "Marketing Manager"),
    CaseStatus.READY: ("Prepare the settlement", "Operator"),
    CaseStatus.PREPARED: ("Submit it for approval", "Operator"),
    CaseStatus.AWAITING_APPROVAL: ("Approve or reject it", "Tournament Manager"),
    CaseStatus.REJECTED: ("Prepare again, or revise the decision", "Operator"),
    CaseStatus.OPEN: ("Resolve it", "Tournament Manager"),
    CaseStatus.APPROVED: ("Nothing: settled", ""),
    CaseStatus.RESOLVED: ("Nothing: resolved", ""),
    CaseStatus.WITHDRAWN: ("Nothing: withdrawn", ""),
}

WORKBENCH_SORTS = {
    # By default cases that need someone come first, in the order the work flows.
    "work": "work_order",
    "case": "pk",
    "tournament": "tournament__operator_id",
    "type": "tournament__type",
    "stage": "stage",
    "entrants": "entrants",
    "pool": "pool",
    "status": "status",
}


@dataclass(frozen=True)
class WorkbenchFilter:
    status: str = ""
    stage: str = ""
    type: str = ""
    sort: str = "work"
    descending: bool = False

    @classmethod
    def from_query(cls, data) -> "WorkbenchFilter":
        sort = data.get("sort", "work")
        descending = sort.startswith("-")
        sort = sort.removeprefix("-")
        return cls(
            status=choice_in(data.get("status", ""), CaseStatus.values),
            stage=choice_in(data.get("stage", ""), Stage.values),
            type=choice_in(data.get("type", ""), TournamentType.values),
            sort=sort if sort in WORKBENCH_SORTS else "work",
            descending=descending and sort in WORKBENCH_SORTS,
        )

    @property
    def order(self) -> str:
        return f"-{self.sort}" if self.descending else self.sort

    def query(self, **changes) -> str:
        """This filter as a query string, with ``changes`` applied (for links)."""
        from django.utils.http import urlencode

        values = {
            "status": self.status,
            "stage": self.stage,
            "type": self.type,
            "sort": self.order,
        }
        values.update(changes)
        return urlencode({key: value for key, value in values.items() if value})


# What the workbench shows of each case: the rest of a case row (its policy, its options, its
# figures) and of its tournament (the payout table) would be read and decoded for nothing.
_WORKBENCH_FIELDS = (
    "status",
    "stage",
    "entrants",
    "pool",
    "tournament__operator_id",
    "tournament__name",
    "tournament__currency",
    "tournament__type",
)


def incident_workbench(incident: Incident, chosen: WorkbenchFilter) -> QuerySet[Case]:
    cases = (
        Case.objects.filter(incident=incident).select_related("tournament").only(*_WORKBENCH_FIELDS)
    )
    if chosen.status:
        cases = cases.filter(status=chosen.status)
    if chosen.stage:
        cases = cases.filter(stage=chosen.stage)
    if chosen.type:
        cases = cases.filter(tournament__type=chosen.type)
    field = WORKBENCH_SORTS[chosen.sort]
    if field == "work_order":
        cases = cases.annotate(
            work_order=DbCase(
                *(When(status=status, then=rank) for rank, status in enumerate(CASE_WORK_ORDER)),
                default=len(CASE_WORK_ORDER),
            )
        )
    return cases.order_by(f"-{field}" if chosen.descending else field, "pk")


def incident_counts(incident: Incident) -> list[dict]:
    """Cases by status, in workflow order, each with its next step and who takes it."""
    counts = case_status_counts(incident=incident)
    return [
        {
            "status": status,
            "label": CaseStatus(status).label,
            "count": counts[status],
            "next": NEXT_STEP[status][0],
            "who": NEXT_STEP[status][1],
        }
        for status in NEXT_STEP
        if counts.get(status)
    ]


def ready_to_prepare(incident: Incident) -> QuerySet[Case]:
    return Case.objects.filter(
        incident=incident, kind=Case.Kind.CRASH, status=CaseStatus.READY
    ).select_related("tournament")


def prepared_settlements(incident: Incident) -> QuerySet[Settlement]:
    return incident_settlements(incident).filter(
        status=SettlementStatus.PREPARED, corrects__isnull=True
    )


# What the bulk decision page reads of each case waiting: what groups it, what its row shows,
# and what keys its previews (its snapshot's digest; the text only when one is computed).
_DECIDING_FIELDS = (
    "status",
    "stage",
    "entrants",
    "remaining",
    "policy",
    "decision_options",
    "tournament__type",
    "tournament__operator_id",
    "tournament__currency",
    "snapshot__sha256",
)


def awaiting_decision(incident: Incident) -> QuerySet[Case]:
    return (
        Case.objects.filter(incident=incident, status=CaseStatus.AWAITING_DECISION)
        .select_related("tournament", "snapshot")
        .only(*_DECIDING_FIELDS)
    )


@dataclass(frozen=True)
class BulkSummary:
    """What a bulk prepare or submit will do, restated before it starts: how many records it
    takes (``records``, unread: only the confirmed start lists them), what they pay
    (``totals``, as ``unit_totals``; for cases not prepared yet, their prize pools), how many
    of each remedy, and what of the incident it leaves aside, as (how many, of what, why);
    the same count and totals by rulebook version (``versions``). Counted and added up in the
    database: an outage's 2,000 records are never read to say it."""

    count: int
    records: QuerySet
    totals: list[tuple[str, str, int]]
    remedies: list[tuple[str, int]]
    skipped: list[tuple[int, str, str]]
    versions: list[VersionGroup]


_LEFT_ASIDE = {
    "prepare": {
        CaseStatus.AWAITING_DECISION: "waiting for the Marketing Manager's decision",
        CaseStatus.REJECTED: (
            "rejected: read the reason on each case, then prepare it there or have the "
            "decision revised"
        ),
    },
    "submit": {
        CaseStatus.READY: "ready, not prepared yet",
        CaseStatus.REJECTED: "rejected, not prepared again yet",
    },
}


def prepare_summary(incident: Incident) -> BulkSummary:
    """Every case ready, counted by what its remedy depends on (its tournament's type, its
    stage, decision and policy), with their prize pools by currency."""
    cases = ready_to_prepare(incident).order_by("pk")
    versions = VersionGroups("")
    kinds = (
        cases.order_by()
        .values(
            "tournament__currency",
            "tournament__type",
            "stage",
            "decision",
            "policy",
            *versions.fields,
        )
        .annotate(cases=Count("pk"), pool=Sum("pool"))
    )
    pools: dict[tuple[str, str], int] = defaultdict(int)
    remedies: Counter = Counter()
    for kind in kinds:
        _add_pool(pools, kind)
        case = Case(
            kind=Case.Kind.CRASH,
            stage=kind["stage"],
            decision=kind["decision"],
            policy=kind["policy"],
            tournament=Tournament(type=kind["tournament__type"]),
        )
        remedies[wording.case_remedy(case) or ""] += kind["cases"]
        versions.add(kind, kind["cases"], _add_pool)
    return BulkSummary(
        sum(remedies.values()),
        cases,
        sorted_totals(pools),
        _counted(remedies),
        _left_aside(incident, "prepare"),
        versions.groups(),
    )


def _add_pool(sums: dict[tuple[str, str], int], kind: dict) -> None:
    if kind["pool"]:
        sums[kind["tournament__currency"], _pool_unit(kind)] += kind["pool"]


def _pool_unit(kind: dict) -> str:
    """What a case's prize pool is paid in: a satellite's goes out as seats, not as cash."""
    if kind["tournament__type"] != "satellite":
        return "cash"
    if (kind["policy"] or {}).get("satellite_prizes", "tickets") == "cash":
        return "seats_in_cash"
    return "seats"


def submit_summary(incident: Incident) -> BulkSummary:
    settlements = prepared_settlements(incident)
    versions = VersionGroups("case__")
    kinds = (
        settlements.order_by()
        .values("currency", "remedy", *versions.fields)
        .annotate(settlements=Count("pk"), **unit_sums())
    )
    sums: dict[tuple[str, str], int] = defaultdict(int)
    remedies: Counter = Counter()
    for kind in kinds:
        remedies[kind["remedy"]] += kind["settlements"]
        add_unit_sums(sums, kind)
        versions.add(kind, kind["settlements"], add_unit_sums)
    skipped = _left_aside(incident, "submit")
    adjustments = (
        incident_settlements(incident)
        .filter(status=SettlementStatus.PREPARED, corrects__isnull=False)
        .count()
    )
    if adjustments:
        skipped.append((adjustments, "adjustment", "each is submitted from its own page"))
    return BulkSummary(
        sum(remedies.values()),
        settlements,
        sorted_totals(sums),
        _counted(remedies),
        skipped,
        versions.groups(),
    )


def _counted(remedies: Counter) -> list[tuple[str, int]]:
    return sorted(remedies.items(), key=lambda item: (-item[1], item[0]))


def _left_aside(incident: Incident, action: str) -> list[tuple[int, str, str]]:
    counts = case_status_counts(incident=incident)
    return [
        (counts[status], "case", why)
        for status, why in _LEFT_ASIDE[action].items()
        if counts.get(status)
    ]


@dataclass(frozen=True)
class DecisionGroup:
    """Cases awaiting a decision that take the same answer: same type, stage and options;
    ``count`` of them, the first with id ``first``."""

    key: str
    type: str
    stage: str
    options: list[str]
    count: int
    first: int


def decision_groups(incident: Incident) -> list[DecisionGroup]:
    """The kinds of case waiting, counted in one grouped query: an outage's hundreds of cases
    waiting are read a page at a time (``decision_group_cases``), never all of them."""
    kinds = (
        awaiting_decision(incident)
        .order_by()
        .values("tournament__type", "stage", "decision_options")
        .annotate(count=Count("pk"), first=Min("pk"))
        .order_by("first")
    )
    return [
        DecisionGroup(
            key="|".join([kind["tournament__type"], kind["stage"], *kind["decision_options"]]),
            type=kind["tournament__type"],
            stage=kind["stage"],
            options=list(kind["decision_options"]),
            count=kind["count"],
            first=kind["first"],
        )
        for kind in kinds
    ]


def next_decision_group(groups: list[DecisionGroup], answered: str | None) -> DecisionGroup | None:
    """The first of ``groups`` other than the one just answered (key ``answered``): where
    the Marketing Manager goes on from one grouped decision."""
    return next((group for group in groups if group.key != answered), None)


def decision_group_cases(incident: Incident, group: DecisionGroup | None) -> QuerySet[Case]:
    """The cases of ``group`` (none without one), in the order they were loaded."""
    if group is None:
        return Case.objects.none()
    return (
        awaiting_decision(incident)
        .filter(tournament__type=group.type, stage=group.stage, decision_options=group.options)
        .order_by("pk")
    )


def decision_versions(cases: QuerySet[Case]) -> list[VersionGroup]:
    """``cases`` (one decision's) counted by the rulebook version each is settled under."""
    versions = VersionGroups("")
    for row in cases.order_by().values(*versions.fields).annotate(cases=Count("pk")):
        versions.add(row, row["cases"], lambda sums, row: None)
    return versions.groups()


def invited_by_reschedule(cases: QuerySet[Case], stage: str) -> int:
    """How many players the reschedules of ``cases``, all at ``stage``, invite by the rules'
    default scope (every entrant, or the players still in)."""
    scope = default_invite_scope(stage)
    field = "entrants" if scope == Decision.InviteScope.ENTRANTS else "remaining"
    return cases.aggregate(players=Sum(field))["players"] or 0


def open_work_count(incident: Incident) -> int:
    return incident.cases.exclude(
        status__in=[CaseStatus.APPROVED, CaseStatus.RESOLVED, CaseStatus.WITHDRAWN]
    ).count()
