"""Reads for the bulk path: the incident workbench, and what a bulk action would touch.

Every bulk action is a job (settlements.jobs) over the items chosen here; each item then goes
through its own service call, which checks everything again.
"""

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from django.db.models import Case as DbCase
from django.db.models import QuerySet, When

from settlements import selectors, wording
from settlements.access import permissions
from settlements.models import Case, Incident, Settlement, Stage, Tournament, TournamentType
from settlements.money import MONEY_UNITS, unit_rank
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
            status=_choice(data.get("status", ""), CaseStatus.values),
            stage=_choice(data.get("stage", ""), Stage.values),
            type=_choice(data.get("type", ""), TournamentType.values),
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
    "status", "stage", "entrants", "pool", "tournament__operator_id", "tournament__name",
    "tournament__currency", "tournament__type",
)  # fmt: skip


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
    counts = selectors.case_status_counts(incident=incident)
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
    return _settlements(incident).filter(status=SettlementStatus.PREPARED, corrects__isnull=True)


@dataclass(frozen=True)
class ApprovalFilter:
    """Which of an incident's settlements awaiting approval one approval takes in."""

    type: str = ""
    stage: str = ""

    @classmethod
    def from_query(cls, data) -> "ApprovalFilter":
        return cls(
            type=_choice(data.get("type", ""), TournamentType.values),
            stage=_choice(data.get("stage", ""), Stage.values),
        )


def awaiting_approval(
    incident: Incident, chosen: ApprovalFilter = ApprovalFilter()
) -> QuerySet[Settlement]:
    settlements = _settlements(incident).filter(status=SettlementStatus.AWAITING_APPROVAL)
    if chosen.type:
        settlements = settlements.filter(case__tournament__type=chosen.type)
    if chosen.stage:
        settlements = settlements.filter(stage=chosen.stage)
    return settlements


# What the bulk decision page reads of each case waiting: what groups it, what its row shows,
# and what keys its previews (its snapshot's digest; the text only when one is computed).
_DECIDING_FIELDS = (
    "status", "stage", "entrants", "remaining", "policy", "decision_options",
    "tournament__type", "tournament__operator_id", "tournament__currency", "snapshot__sha256",
)  # fmt: skip


def awaiting_decision(incident: Incident) -> QuerySet[Case]:
    return (
        Case.objects.filter(incident=incident, status=CaseStatus.AWAITING_DECISION)
        .select_related("tournament", "snapshot")
        .only(*_DECIDING_FIELDS)
    )


class ApprovalRow(NamedTuple):
    """What the approval pages show of a settlement, and what its summary and permission
    check read: plain values, an outage's 2,000 of them read at once on each approval page."""

    pk: int
    kind: str
    status: str
    currency: str
    totals: dict
    prepared_by_id: int | None
    submitted_by_id: int | None
    loaded_by_id: int | None
    case_id: int
    case_status: str
    operator_id: str
    stage: str
    remedy: str
    decision: str
    line_count: int
    prepared_by_username: str | None

    def __str__(self) -> str:
        return str(self.as_settlement())

    @property
    def stage_label(self) -> str:
        return Stage(self.stage).label

    def as_settlement(self) -> Settlement:
        """An unsaved settlement of these values, for the permission to read."""
        return Settlement(
            pk=self.pk, kind=self.kind, status=self.status, prepared_by_id=self.prepared_by_id,
            submitted_by_id=self.submitted_by_id, loaded_by_id=self.loaded_by_id,
            case=Case(
                pk=self.case_id, status=self.case_status,
                tournament=Tournament(operator_id=self.operator_id),
            ),
        )  # fmt: skip


_ROW_FIELDS = (
    "pk", "kind", "status", "currency", "totals", "prepared_by_id", "submitted_by_id",
    "loaded_by_id", "case_id", "case__status", "case__tournament__operator_id", "stage",
    "remedy", "decision", "line_count", "prepared_by__username",
)  # fmt: skip


def approval_rows(settlements: QuerySet[Settlement]) -> list[ApprovalRow]:
    return [ApprovalRow(*values) for values in settlements.values_list(*_ROW_FIELDS)]


@dataclass(frozen=True)
class ApprovalSummary:
    to_approve: list[ApprovalRow]
    skipped: list[tuple[ApprovalRow, str]]
    # (currency, unit, amount) over the settlements to approve; no currency for seats and FPP
    totals: list[tuple[str, str, int]]


def approval_summary(rows: Sequence[ApprovalRow], user) -> ApprovalSummary:
    """Which of ``rows`` the user may approve, the others with the reason, and what the first
    pay in all. The permission reads only the settlement's kind and status, its case's status
    and whether the user prepared, submitted or loaded it: it is asked once for each set of
    those facts, and again for each settlement it refuses, to give that one's own words."""
    allowed: dict[tuple, bool] = {}
    to_approve, skipped = [], []
    for row in rows:
        facts = (
            row.kind, row.status, row.case_status, row.prepared_by_id == user.pk,
            row.submitted_by_id == user.pk, row.loaded_by_id == user.pk,
        )  # fmt: skip
        if facts not in allowed:
            allowed[facts] = _approval_refusal(row, user) is None
        if allowed[facts]:
            to_approve.append(row)
        else:
            skipped.append((row, str(_approval_refusal(row, user))))
    return ApprovalSummary(to_approve=to_approve, skipped=skipped, totals=unit_totals(to_approve))


def _approval_refusal(row: ApprovalRow, user):
    return permissions.settlement_approve(settlement=row.as_settlement(), user=user)


def unit_totals(settlements) -> list[tuple[str, str, int]]:
    """What ``settlements`` pay in all, from their stored totals, as (currency, unit,
    amount): money by currency first, then seats and FPP (no currency: they are counted alike
    whatever the tournament's currency)."""
    sums: dict[tuple[str, str], int] = defaultdict(int)
    for settlement in settlements:
        for unit, by_source in settlement.totals.items():
            currency = settlement.currency if unit in MONEY_UNITS else ""
            sums[currency, unit] += sum(by_source.values())
    return sorted(
        ((currency, unit, amount) for (currency, unit), amount in sums.items()),
        key=lambda row: (not row[0], row[0], unit_rank(row[1])),
    )


@dataclass(frozen=True)
class BulkSummary:
    """What a bulk prepare or submit will do, restated before it starts: the records it
    takes, what they pay (``totals``, as ``unit_totals``; for cases not prepared yet, their
    prize pools), how many of each remedy, and what of the incident it leaves aside, as
    (how many, of what, why)."""

    records: list
    totals: list[tuple[str, str, int]]
    remedies: list[tuple[str, int]]
    skipped: list[tuple[int, str, str]]


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


def prepare_summary(incident: Incident, cases: list[Case]) -> BulkSummary:
    pools: dict[str, int] = defaultdict(int)
    for case in cases:
        pools[case.tournament.currency] += case.pool or 0
    totals = [(currency, "cash", pool) for currency, pool in sorted(pools.items()) if pool]
    remedies = Counter(wording.case_remedy(case) or "" for case in cases)
    return BulkSummary(cases, totals, _counted(remedies), _left_aside(incident, "prepare"))


def submit_summary(incident: Incident, settlements: list[Settlement]) -> BulkSummary:
    remedies = Counter(settlement.remedy for settlement in settlements)
    skipped = _left_aside(incident, "submit")
    adjustments = (
        _settlements(incident)
        .filter(status=SettlementStatus.PREPARED, corrects__isnull=False)
        .count()
    )
    if adjustments:
        skipped.append((adjustments, "adjustment", "each is submitted from its own page"))
    return BulkSummary(settlements, unit_totals(settlements), _counted(remedies), skipped)


def _counted(remedies: Counter) -> list[tuple[str, int]]:
    return sorted(remedies.items(), key=lambda item: (-item[1], item[0]))


def _left_aside(incident: Incident, action: str) -> list[tuple[int, str, str]]:
    counts = selectors.case_status_counts(incident=incident)
    return [
        (counts[status], "case", why)
        for status, why in _LEFT_ASIDE[action].items()
        if counts.get(status)
    ]


@dataclass(frozen=True)
class DecisionGroup:
    """Cases awaiting a decision that take the same answer: same type, stage and options."""

    key: str
    type: str
    stage: str
    options: list[str]
    cases: list[Case]


def decision_groups(incident: Incident) -> list[DecisionGroup]:
    groups: dict[str, list[Case]] = defaultdict(list)
    for case in awaiting_decision(incident).order_by("pk"):
        key = "|".join([case.tournament.type, case.stage, *case.decision_options])
        groups[key].append(case)
    return [
        DecisionGroup(
            key=key,
            type=cases[0].tournament.type,
            stage=cases[0].stage,
            options=list(cases[0].decision_options),
            cases=cases,
        )
        for key, cases in groups.items()
    ]


def open_work_count(incident: Incident) -> int:
    return incident.cases.exclude(
        status__in=[CaseStatus.APPROVED, CaseStatus.RESOLVED, CaseStatus.WITHDRAWN]
    ).count()


# What the bulk pages and their permission checks read of each settlement: an outage's 2,000
# settlements are read on each approval page, where their policy, basis and payout table (JSON
# decoded), their submitter (one more model a row) and the rest of the row cost more than the
# page. The submitter's id stays: the permission refuses them.
_BULK_FIELDS = (
    "kind", "status", "currency", "stage", "remedy", "decision", "totals", "line_count", "case_id",
    "prepared_by", "submitted_by", "loaded_by",
    "case__status", "case__tournament__operator_id", "case__tournament__type",
    "prepared_by__username",
)  # fmt: skip


def _settlements(incident: Incident) -> QuerySet[Settlement]:
    return (
        Settlement.objects.filter(case__incident=incident)
        .select_related("case__tournament", "prepared_by")
        .only(*_BULK_FIELDS)
        .order_by("case_id", "pk")
    )


def _choice(value: str, allowed) -> str:
    return value if value in allowed else ""
