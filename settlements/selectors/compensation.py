"""Compensation proposals and prizes given in error."""

from django.db.models import Count, QuerySet

from settlements.models import Case, Compensation, PrizeWithdrawal
from settlements.selectors.common import _lean
from settlements.workflow import CompensationStatus


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


def compensation_approved_ids(case: Case) -> list[int]:
    """Ids of the case's approved compensation (which a withdrawal must not void)."""
    approved = case.compensations.filter(status=CompensationStatus.APPROVED).order_by("pk")
    return list(approved.values_list("pk", flat=True))


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
