"""Compensation proposals and prizes given in error."""

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from settlements.models import Case, Compensation, CompensationItem, PrizeWithdrawal
from settlements.selectors.common import lean
from settlements.workflow import CompensationStatus, PrizeWithdrawalStatus


def compensation_list(
    *, status: str | None = None, case: Case | None = None
) -> QuerySet[Compensation]:
    compensations = lean(
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


def compensation_approved_ids(case: Case) -> list[int]:
    """Ids of the case's approved compensation (which a withdrawal must not void)."""
    approved = case.compensations.filter(status=CompensationStatus.APPROVED).order_by("pk")
    return list(approved.values_list("pk", flat=True))


def case_compensations(case: Case) -> list[Compensation]:
    """The case page's compensation proposals, oldest first, each with its ``item_count``
    and proposer, and ``case`` set to ``case`` rather than joined again.

    ``compensation_list`` groups over six joined tables for its counts; here the count is a
    subquery and only the proposer is joined, which PostgreSQL plans several times faster.
    No query when ``case`` came from ``case_detail`` saying it has none."""
    if not getattr(case, "has_compensation", True):
        return []
    items = (
        CompensationItem.objects.filter(compensation=OuterRef("pk"))
        .order_by()
        .values("compensation")
        .annotate(n=Count("id"))
        .values("n")
    )
    compensations = list(
        Compensation.objects.filter(case=case)
        .select_related("proposed_by")
        .annotate(item_count=Coalesce(Subquery(items), 0))
        .order_by("proposed_at", "id")
    )
    for compensation in compensations:
        compensation.case = case
    return compensations


def case_prize_withdrawals(case: Case) -> list[PrizeWithdrawal]:
    """The case's prizes given in error, newest first, with who decided; ``case`` set. No
    query when ``case`` came from ``case_detail`` saying it has none."""
    if not getattr(case, "has_prize_withdrawal", True):
        return []
    withdrawals = list(
        PrizeWithdrawal.objects.filter(case=case)
        .select_related("decided_by", "approved_by", "rejected_by")
        .order_by("-decided_at", "-id")
    )
    for withdrawal in withdrawals:
        withdrawal.case = case
    return withdrawals


def compensation_detail(compensation_id: int) -> Compensation:
    compensations = Compensation.objects.select_related(
        "case__tournament", "case__incident", "proposed_by", "approved_by", "rejected_by"
    )
    compensations = lean(compensations, "case__tournament").prefetch_related("items")
    return compensations.get(pk=compensation_id)


def prize_withdrawal_detail(withdrawal_id: int) -> PrizeWithdrawal:
    withdrawals = PrizeWithdrawal.objects.select_related(
        "case__tournament", "case__incident", "decided_by", "approved_by", "rejected_by"
    )
    return lean(withdrawals, "case__tournament").get(pk=withdrawal_id)


def prize_withdrawal_list(*, case: Case | None = None) -> QuerySet[PrizeWithdrawal]:
    withdrawals = lean(
        PrizeWithdrawal.objects.select_related("case__tournament", "decided_by"), "case__tournament"
    )
    if case is not None:
        withdrawals = withdrawals.filter(case=case)
    return withdrawals.order_by("-decided_at", "-id")


def prizes_taken_back(player: str, case_id: int) -> list[PrizeWithdrawal]:
    """The prizes given in error ``player`` is to give back in the case: approved take-backs,
    oldest first. What is paid them again should weigh these."""
    return list(
        PrizeWithdrawal.objects.filter(
            case_id=case_id,
            player=player,
            status=PrizeWithdrawalStatus.APPROVED,
            outcome=PrizeWithdrawal.Outcome.WITHDRAW,
        ).order_by("decided_at", "id")
    )
