"""The ICM second opinion as the review page, the compensation form and the API read it: the
stored figures only, never computed again."""

from django.db.models import (
    BooleanField,
    Case,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from settlements.charts import ChartPoint, percent_text, sample_by_rank
from settlements.models import IcmValuation, IcmValue, Job, LineKind, Settlement, SettlementLine
from settlements.selectors.players import by_code_point
from settlements.site_policy import IcmFlag
from settlements.workflow import SettlementStatus

# What a knock-out pays beside the prize pool: no part of what ICM values, so the comparison
# leaves it out and the panel shows it apart.
BOUNTY_KINDS = (LineKind.BOUNTY, LineKind.REFUND_BOUNTY)


def bounty_lines(settlement_id: int) -> QuerySet:
    return SettlementLine.objects.filter(
        settlement_id=settlement_id, kind__in=BOUNTY_KINDS, reversal=False
    )


def has_bounties(settlement: Settlement) -> bool:
    return bounty_lines(settlement.pk).exists()


def icm_valuation(settlement: Settlement) -> IcmValuation | None:
    """The settlement's valuation, done or still being sampled; None where none was made."""
    return IcmValuation.objects.filter(settlement_id=settlement.pk).first()


def case_icm_valuation(case) -> IcmValuation | None:
    """The finished valuation of the case's settlement in force (prepared, awaiting approval
    or approved; never one rejected or withdrawn), or None."""
    return (
        IcmValuation.objects.filter(
            settlement__case_id=case.pk,
            settlement__kind=Settlement.Kind.SETTLEMENT,
            status=IcmValuation.Status.DONE,
        )
        .exclude(settlement__status__in=[SettlementStatus.REJECTED, SettlementStatus.WITHDRAWN])
        .first()
    )


def _flagged(flag: IcmFlag) -> Q:
    # loss ≥ min_amount and loss·100 ≥ percent·value, with loss = -difference: integers only.
    return Q(difference__lte=-flag.min_amount) & Q(flag_margin__lte=0) & Q(difference__lt=0)


def _with_flag(rows: QuerySet, flag: IcmFlag) -> QuerySet:
    """``rows`` marked ``flagged``, with ``bounty``: what the player's bounties pay besides."""
    bounties = (
        SettlementLine.objects.filter(
            settlement_id=OuterRef("valuation__settlement_id"),
            player=OuterRef("player"),
            kind__in=BOUNTY_KINDS,
            reversal=False,
        )
        .values("player")
        .annotate(total=Sum("amount"))
        .values("total")
    )
    rows = rows.annotate(bounty=Coalesce(Subquery(bounties), 0))
    return rows.alias(flag_margin=F("difference") * 100 + F("amount") * flag.percent).annotate(
        flagged=Case(
            When(_flagged(flag), then=Value(True)), default=False, output_field=BooleanField()
        )
    )


def icm_rows_by_loss(valuation: IcmValuation, flag: IcmFlag) -> QuerySet:
    """Every remaining player's figures, the one the policy pays least against ICM first, each
    marked ``flagged`` by the site's threshold."""
    rows = IcmValue.objects.filter(valuation=valuation).order_by("difference", "position")
    return _with_flag(rows, flag)


def icm_rows_by_player(valuation: IcmValuation, flag: IcmFlag, *, after: str | None) -> QuerySet:
    """The figures in player id order (code-point order, as positions run), from after ``after``,
    each marked ``flagged``."""
    rows = IcmValue.objects.filter(valuation=valuation).order_by("position")
    if after is not None:
        rows = rows.alias(by_id=by_code_point()).filter(by_id__gt=after)
    return _with_flag(rows, flag)


def icm_flagged(valuation: IcmValuation, flag: IcmFlag) -> QuerySet:
    """The players the threshold flags, who loses most first."""
    return icm_rows_by_loss(valuation, flag).filter(flagged=True)


def difference_percent(row: IcmValue) -> str:
    """policy - ICM as a signed percentage of the ICM value, e.g. "-12.5 %"."""
    if row.difference == 0 or row.amount == 0:
        return "0 %" if row.difference == 0 else "—"
    sign = "-" if row.difference < 0 else "+"
    return sign + percent_text(abs(row.difference), row.amount)


def icm_chart_points(valuation: IcmValuation) -> tuple[list[ChartPoint], list[ChartPoint]]:
    """The policy's amounts and the ICM values by chip rank, sampled alike."""
    ranked = IcmValue.objects.filter(valuation=valuation).order_by("chip_rank")
    pairs = list(ranked.values_list("policy_amount", "amount"))
    return (
        sample_by_rank([policy for policy, _ in pairs]),
        sample_by_rank([value for _, value in pairs]),
    )


def icm_job(valuation: IcmValuation) -> Job | None:
    """The background job sampling the valuation, for its progress."""
    return Job.objects.filter(kind=Job.Kind.ICM, target=f"icm:{valuation.pk}").first()
