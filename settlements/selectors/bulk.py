"""Reads for the bulk path: the incident workbench, and what a bulk action would touch.

Every bulk action is a job (settlements.jobs) over the items chosen here; each item then goes
through its own service call, which checks everything again.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import NamedTuple

from django.db.models import (
    BigIntegerField,
    BooleanField,
    Count,
    Func,
    Min,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models import Case as DbCase

from settlements import selectors, wording
from settlements.access import permissions
from settlements.models import Case, Incident, Settlement, Stage, Tournament, TournamentType
from settlements.money import MONEY_UNITS, UNIT_ORDER, unit_rank
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
        # Its own words need neither its case nor its tournament (twice a row on a page).
        return str(Settlement(pk=self.pk, kind=self.kind))

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


# Skipped settlements named one by one in an approval's summary; any more are counted.
SKIPPED_SHOWN = 100


@dataclass(frozen=True)
class ApprovalSummary:
    """What approving a selection of settlements does, added up in the database, so that it
    costs the same for 20 settlements as for an outage's 2,000."""

    count: int  # the settlements the user may approve
    # (currency, unit, amount) over those; no currency for seats and FPP
    totals: list[tuple[str, str, int]]
    skipped_count: int
    # The first SKIPPED_SHOWN settlements skipped, each with why, in its own words.
    skipped: list[tuple[ApprovalRow, str]]
    to_approve: QuerySet[Settlement]  # unread: only a confirmed approval lists them

    @property
    def skipped_more(self) -> int:
        """Those skipped beyond the ones named."""
        return self.skipped_count - len(self.skipped)


class _UnitTotal(Func):
    """What a settlement pays in one unit: its stored ``totals`` are {unit: {source: amount}},
    and this adds up the sources of the unit named by the second expression."""

    arg_joiner = " -> "
    template = (
        "(SELECT COALESCE(SUM(source.value::bigint), 0) "
        "FROM jsonb_each_text(%(expressions)s) AS source)"
    )
    output_field = BigIntegerField()

    def as_sqlite(self, compiler, connection, **extra):
        # The demo's database: the same sum, over SQLite's JSON text.
        return self.as_sql(
            compiler, connection, arg_joiner=", '$.' || ",
            template=(
                "(SELECT COALESCE(SUM(source.value), 0) FROM json_each(%(expressions)s) AS source)"
            ),
            **extra,
        )  # fmt: skip


def _by_user(field: str, user) -> DbCase:
    return DbCase(When(**{field: user.pk}, then=True), default=False, output_field=BooleanField())


def approval_summary(settlements: QuerySet[Settlement], user) -> ApprovalSummary:
    """Which of ``settlements`` the user may approve, what those pay in all, and the others
    with the reason. The permission reads only the settlement's kind and status, its case's
    status and whether the user prepared, submitted or loaded it: one grouped query counts and
    adds up the settlements of each set of those facts, the permission is asked once a set,
    and only the sets it refuses are read row by row, to give each its own words."""
    own = {
        "own_prepared": _by_user("prepared_by_id", user),
        "own_submitted": _by_user("submitted_by_id", user),
        "own_loaded": _by_user("loaded_by_id", user),
    }
    facts = ("kind", "status", "case__status", *own)
    groups = (
        settlements.annotate(**own)
        .order_by()
        .values("currency", *facts)
        .annotate(
            settlements=Count("pk"),
            # NULL for a unit none of them pays in, and its sources added up only where paid.
            **{
                unit: Sum(
                    DbCase(When(totals__has_key=unit, then=_UnitTotal("totals", Value(unit))))
                )
                for unit in UNIT_ORDER
            },
        )
    )
    sums: dict[tuple[str, str], int] = defaultdict(int)
    count, refused = 0, []
    for group in groups:
        if _approval_refusal(_as_row(group, user), user) is not None:
            refused.append(group)
            continue
        count += group["settlements"]
        for unit in UNIT_ORDER:
            if group[unit] is not None:
                sums[group["currency"] if unit in MONEY_UNITS else "", unit] += int(group[unit])
    in_refused = Q(pk__in=[])
    for group in refused:
        in_refused |= Q(**{fact: group[fact] for fact in facts})
    marked = settlements.annotate(**own)
    skipped = approval_rows(marked.filter(in_refused)[:SKIPPED_SHOWN]) if refused else []
    return ApprovalSummary(
        count=count,
        totals=_sorted_totals(sums),
        skipped_count=sum(group["settlements"] for group in refused),
        skipped=[(row, str(_approval_refusal(row, user))) for row in skipped],
        to_approve=marked.exclude(in_refused),
    )


def _as_row(group: dict, user) -> ApprovalRow:
    """A settlement of ``group``'s facts, for the permission to decide on."""
    return ApprovalRow(
        pk=0, kind=group["kind"], status=group["status"], currency=group["currency"], totals={},
        prepared_by_id=user.pk if group["own_prepared"] else None,
        submitted_by_id=user.pk if group["own_submitted"] else None,
        loaded_by_id=user.pk if group["own_loaded"] else None,
        case_id=0, case_status=group["case__status"], operator_id="", stage="", remedy="",
        decision="", line_count=0, prepared_by_username=None,
    )  # fmt: skip


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
    return _sorted_totals(sums)


def _sorted_totals(sums: dict[tuple[str, str], int]) -> list[tuple[str, str, int]]:
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


def decision_group_cases(incident: Incident, group: DecisionGroup | None) -> QuerySet[Case]:
    """The cases of ``group`` (none without one), in the order they were loaded."""
    if group is None:
        return Case.objects.none()
    return (
        awaiting_decision(incident)
        .filter(tournament__type=group.type, stage=group.stage, decision_options=group.options)
        .order_by("pk")
    )


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
