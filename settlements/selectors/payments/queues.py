"""The payments queues: failed lines waiting for a re-issue, releases the cashier has not
confirmed in time, proposed re-issues, and what became of the prizes taken back.
"""

from collections.abc import Iterator
from datetime import datetime

from django.db.models import (
    BigIntegerField,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    QuerySet,
    Subquery,
)

from settlements.models import (
    LedgerRelease,
    PaymentConfirmation,
    PaymentTally,
    PrizeWithdrawal,
    Reissue,
)
from settlements.selectors.payments.lines import LedgerLine, approved_lines
from settlements.workflow import ReissueStatus

# The failed lines' orders: the feed's (by default), the largest amount, the player, the time.
FAILED_SORTS = {
    "key": ("release__first_position", "line_no"),
    "amount": ("amount", "release__first_position", "line_no"),
    "player": ("player", "release__first_position", "line_no"),
    "when": ("at", "pk"),
}


def failed_lines(
    releases: QuerySet[LedgerRelease] | None = None, *, sort: str = "key", descending: bool = False
) -> QuerySet[PaymentConfirmation]:
    """The latest failure of each line that is failed now: not paid since, not re-issued,
    in the order ``sort`` names (FAILED_SORTS). ``pending_reissue`` is the id of a re-issue
    proposed for it and not yet answered."""
    confirmations = PaymentConfirmation.objects.filter(status=PaymentConfirmation.Status.FAILED)
    if releases is not None:
        confirmations = confirmations.filter(release__in=releases)
    same_line = {"release_id": OuterRef("release_id"), "line_no": OuterRef("line_no")}
    later = PaymentConfirmation.objects.filter(**same_line, pk__gt=OuterRef("pk"), status="failed")
    paid = PaymentConfirmation.objects.filter(**same_line, status=PaymentConfirmation.Status.PAID)
    reissues = Reissue.objects.filter(
        original_release_id=OuterRef("release_id"), original_line_no=OuterRef("line_no")
    )
    return (
        confirmations.exclude(Exists(later))
        .exclude(Exists(paid))
        .exclude(Exists(reissues.filter(status=ReissueStatus.APPROVED)))
        .annotate(
            pending_reissue=Subquery(
                reissues.filter(status=ReissueStatus.PROPOSED).values("pk")[:1]
            )
        )
        .select_related("release__case__tournament")
        .defer("release__case__tournament__payouts")
        .order_by(*((f"-{field}" if descending else field) for field in FAILED_SORTS[sort]))
    )


def overdue_releases(
    cutoff: datetime, releases: QuerySet[LedgerRelease] | None = None
) -> QuerySet[LedgerRelease]:
    """Releases handed to the cashier before ``cutoff`` with lines it has not confirmed, each
    annotated with ``overdue`` (how many)."""
    releases = LedgerRelease.objects.all() if releases is None else releases
    waiting = (
        F("line_count")
        - F("tally__paid_lines")
        - F("tally__failed_lines")
        - F("tally__reissued_lines")
    )
    return (
        releases.filter(released_at__lt=cutoff)
        .annotate(overdue=ExpressionWrapper(waiting, output_field=BigIntegerField()))
        .filter(overdue__gt=0)
        .order_by("first_position")
    )


def overdue_lines(
    cutoff: datetime, releases: QuerySet[LedgerRelease] | None = None, *, after: int = 0
) -> Iterator[LedgerLine]:
    """The unconfirmed lines of ``overdue_releases``, in feed order after place ``after``."""
    return approved_lines(overdue_releases(cutoff, releases), after=after, unconfirmed_only=True)


REISSUE_SORTS = {
    "player": ("player", "id"),
    "amount": ("amount", "id"),
    "proposed": ("proposed_at", "id"),
}


def proposed_reissues(*, sort: str = "proposed", descending: bool = False) -> QuerySet[Reissue]:
    """Re-issues waiting for a second manager, in the order ``sort`` names (REISSUE_SORTS)."""
    return (
        Reissue.objects.filter(status=ReissueStatus.PROPOSED)
        .select_related("proposed_by", "case__tournament")
        .defer("case__tournament__payouts")
        .order_by(*((f"-{field}" if descending else field) for field in REISSUE_SORTS[sort]))
    )


def reissue_detail(reissue_id: int) -> Reissue:
    return (
        Reissue.objects.select_related(
            "proposed_by", "approved_by", "rejected_by", "case__tournament", "original_release"
        )
        .defer("case__tournament__payouts")
        .get(pk=reissue_id)
    )


COLLECTION_WORDS = {
    "unconfirmed": "Not yet confirmed",
    "paid": "Collected",
    "failed": "Could not be collected",
    "reissued": "Could not be collected; re-issued",
}


def withdrawals_collected(withdrawals) -> None:
    """Set ``collection`` on each prize withdrawal: what the cashier said about taking it
    back (empty for a prize left with the player). One query, none without a withdrawal."""
    taken = [w for w in withdrawals if w.outcome == PrizeWithdrawal.Outcome.WITHDRAW]
    if not taken:
        return
    tallies = PaymentTally.objects.filter(release__prize_withdrawal__in=taken).values_list(
        "release__prize_withdrawal_id", "paid_lines", "failed_lines", "reissued_lines"
    )
    states = {}
    for pk, paid, failed, reissued in tallies:
        states[pk] = "paid" if paid else "failed" if failed else "reissued" if reissued else ""
    for withdrawal in withdrawals:
        state = states.get(withdrawal.pk) or "unconfirmed"
        withdrawal.collection = COLLECTION_WORDS[state] if withdrawal in taken else ""
