"""Reads for approving many settlements at once, and what bulk pages add up of settlements.

An outage's approval takes in 2,000 settlements: its pages count them, add up what they pay
and find those the user may not approve in the database, and read a page of rows.
"""

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from django.db.models import (
    BigIntegerField,
    BooleanField,
    Count,
    Func,
    Q,
    QuerySet,
    Sum,
    Value,
    When,
)
from django.db.models import Case as DbCase
from django.db.models.fields.json import KT
from django.db.models.functions import Cast

from settlements.access import permissions
from settlements.models import Case, Incident, Settlement, Stage, Tournament, TournamentType
from settlements.money import MONEY_UNITS, UNIT_ORDER, unit_rank
from settlements.selectors.common import choice_in
from settlements.workflow import SettlementStatus

# What the bulk pages and their permission checks read of each settlement: an outage's 2,000
# settlements are read on each approval page, where their policy, basis and payout table (JSON
# decoded), their submitter (one more model a row) and the rest of the row cost more than the
# page. The submitter's id stays: the permission refuses them.
_BULK_FIELDS = (
    "kind",
    "status",
    "currency",
    "stage",
    "remedy",
    "decision",
    "totals",
    "line_count",
    "case_id",
    "prepared_by",
    "submitted_by",
    "loaded_by",
    "case__status",
    "case__tournament__operator_id",
    "case__tournament__type",
    "prepared_by__username",
)


def incident_settlements(incident: Incident) -> QuerySet[Settlement]:
    return (
        Settlement.objects.filter(case__incident=incident)
        .select_related("case__tournament", "prepared_by")
        .only(*_BULK_FIELDS)
        .order_by("case_id", "pk")
    )


@dataclass(frozen=True)
class ApprovalFilter:
    """Which of an incident's settlements awaiting approval one approval takes in."""

    type: str = ""
    stage: str = ""

    @classmethod
    def from_query(cls, data) -> "ApprovalFilter":
        return cls(
            type=choice_in(data.get("type", ""), TournamentType.values),
            stage=choice_in(data.get("stage", ""), Stage.values),
        )


def awaiting_approval(
    incident: Incident, chosen: ApprovalFilter = ApprovalFilter()
) -> QuerySet[Settlement]:
    settlements = incident_settlements(incident).filter(status=SettlementStatus.AWAITING_APPROVAL)
    if chosen.type:
        settlements = settlements.filter(case__tournament__type=chosen.type)
    if chosen.stage:
        settlements = settlements.filter(stage=chosen.stage)
    return settlements


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
            pk=self.pk,
            kind=self.kind,
            status=self.status,
            prepared_by_id=self.prepared_by_id,
            submitted_by_id=self.submitted_by_id,
            loaded_by_id=self.loaded_by_id,
            case=Case(
                pk=self.case_id,
                status=self.case_status,
                tournament=Tournament(operator_id=self.operator_id),
            ),
        )


_ROW_FIELDS = (
    "pk",
    "kind",
    "status",
    "currency",
    "totals",
    "prepared_by_id",
    "submitted_by_id",
    "loaded_by_id",
    "case_id",
    "case__status",
    "case__tournament__operator_id",
    "stage",
    "remedy",
    "decision",
    "line_count",
    "prepared_by__username",
)


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
    # Those the user may approve, by the rulebook version their cases are settled under.
    versions: list["VersionGroup"]
    # Of ``totals``, the knock-out bounties by (currency, unit): money the entries paid apart
    # from the prize pool, which an approver weighs apart from the prizes.
    bounties: dict[tuple[str, str], int]

    @property
    def totals_apart(self) -> list["TotalApart"]:
        """``totals`` with each row's bounties apart from the rest (prizes and refunds)."""
        return [
            TotalApart(currency, unit, amount - bounty, bounty, amount)
            for currency, unit, amount in self.totals
            for bounty in [self.bounties.get((currency, unit), 0)]
        ]

    @property
    def skipped_more(self) -> int:
        """Those skipped beyond the ones named."""
        return self.skipped_count - len(self.skipped)


class TotalApart(NamedTuple):
    currency: str
    unit: str
    prizes: int  # prizes and refunds: everything but the bounties
    bounties: int
    total: int


# Bounties are paid in cash only (RULES.md §8), under their own source.
_BOUNTIES = Sum(Cast(KT("totals__cash__bounty"), BigIntegerField()))


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
            compiler,
            connection,
            arg_joiner=", '$.' || ",
            template=(
                "(SELECT COALESCE(SUM(source.value), 0) FROM json_each(%(expressions)s) AS source)"
            ),
            **extra,
        )


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
    versions = VersionGroups("case__")
    groups = (
        settlements.annotate(**own)
        .order_by()
        .values("currency", *facts, *versions.fields)
        .annotate(settlements=Count("pk"), bounties=_BOUNTIES, **unit_sums())
    )
    sums: dict[tuple[str, str], int] = defaultdict(int)
    bounties: dict[tuple[str, str], int] = defaultdict(int)
    count, refused = 0, []
    for group in groups:
        if _approval_refusal(_as_row(group, user), user) is not None:
            refused.append(group)
            continue
        count += group["settlements"]
        add_unit_sums(sums, group)
        if group["bounties"]:
            bounties[group["currency"], "cash"] += int(group["bounties"])
        versions.add(group, group["settlements"], add_unit_sums)
    in_refused = Q(pk__in=[])
    for group in refused:
        in_refused |= Q(**{fact: group[fact] for fact in facts})
    marked = settlements.annotate(**own)
    skipped = approval_rows(marked.filter(in_refused)[:SKIPPED_SHOWN]) if refused else []
    return ApprovalSummary(
        count=count,
        totals=sorted_totals(sums),
        skipped_count=sum(group["settlements"] for group in refused),
        skipped=[(row, str(_approval_refusal(row, user))) for row in skipped],
        to_approve=marked.exclude(in_refused),
        versions=versions.groups(),
        bounties=dict(bounties),
    )


def _as_row(group: dict, user) -> ApprovalRow:
    """A settlement of ``group``'s facts, for the permission to decide on."""
    return ApprovalRow(
        pk=0,
        kind=group["kind"],
        status=group["status"],
        currency=group["currency"],
        totals={},
        prepared_by_id=user.pk if group["own_prepared"] else None,
        submitted_by_id=user.pk if group["own_submitted"] else None,
        loaded_by_id=user.pk if group["own_loaded"] else None,
        case_id=0,
        case_status=group["case__status"],
        operator_id="",
        stage="",
        remedy="",
        decision="",
        line_count=0,
        prepared_by_username=None,
    )


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
    return sorted_totals(sums)


def unit_sums() -> dict[str, Sum]:
    """Aggregates of what settlements pay in each unit, from their stored totals, for
    ``add_unit_sums``: NULL for a unit none of them pays in, and a unit's sources added up
    only where it is paid."""
    return {
        unit: Sum(DbCase(When(totals__has_key=unit, then=_UnitTotal("totals", Value(unit)))))
        for unit in UNIT_ORDER
    }


def add_unit_sums(sums: dict[tuple[str, str], int], group: dict) -> None:
    """Add the ``unit_sums`` of ``group`` (a row grouped by at least the currency) into
    ``sums``, by (currency, unit) as ``unit_totals`` counts them."""
    for unit in UNIT_ORDER:
        if group[unit] is not None:
            sums[group["currency"] if unit in MONEY_UNITS else "", unit] += int(group[unit])


def sorted_totals(sums: dict[tuple[str, str], int]) -> list[tuple[str, str, int]]:
    return sorted(
        ((currency, unit, amount) for (currency, unit), amount in sums.items()),
        key=lambda row: (not row[0], row[0], unit_rank(row[1])),
    )


@dataclass(frozen=True)
class VersionGroup:
    """The records of a bulk confirmation whose cases are settled under one rulebook version
    (``key`` and ``number``): how many, and what they pay as ``unit_totals`` counts it (for
    cases not prepared yet, their prize pools; nothing where no money is at stake yet)."""

    key: str | None  # None for a case settled under no version (an individual case)
    number: int | None
    count: int
    totals: list[tuple[str, str, int]]


class VersionGroups:
    """Rows grouped in the database by (at least) the rulebook version of their case, reached
    from them through ``case`` ("" for cases, "case__" for settlements), added up by version:
    an outage whose tournaments ran under several rulebooks is confirmed version by version."""

    def __init__(self, case: str):
        self.fields = (f"{case}rulebook_version__rulebook__key", f"{case}rulebook_version__number")
        self._counts: Counter = Counter()
        self._sums: dict[tuple, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))

    def add(self, row: dict, count: int, add_sums: Callable[[dict, dict], None]) -> None:
        version = tuple(row[field] for field in self.fields)
        self._counts[version] += count
        add_sums(self._sums[version], row)

    def groups(self) -> list[VersionGroup]:
        return [
            VersionGroup(key, number, count, sorted_totals(self._sums[key, number]))
            for (key, number), count in sorted(
                self._counts.items(), key=lambda item: (item[0][0] or "", item[0][1] or 0)
            )
        ]
