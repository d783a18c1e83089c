"""Where a player's payments stand, for the players page and the statements: the state of
chosen settlement lines, and what approved records owe a player across every case.

A line of a settlement not approved has not been sent to the wallet (or never will be, when
withdrawn with its case); an approved line is unconfirmed, paid, failed, or re-issued, and a
re-issue's own line is followed in turn, so "5-4 failed, paid again as R1-1, paid on …" reads
whole. The answers come from the cashier's confirmations, as the auditor's export reads them
(``reconciliation.line_outcome``).
"""

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import BigIntegerField, Case, F, Sum, When

from settlements.models import (
    CompensationItem,
    LedgerRelease,
    PaymentConfirmation,
    PrizeWithdrawal,
    Reissue,
    Settlement,
    SettlementLine,
    idempotency_key,
)
from settlements.money import MONEY_UNITS, unit_rank
from settlements.selectors.payments.reconciliation import line_outcome
from settlements.statements import PaymentFacts
from settlements.workflow import (
    CompensationStatus,
    PrizeWithdrawalStatus,
    ReissueStatus,
    SettlementStatus,
)

Record = LedgerRelease.Record


def settlement_line_payments(
    settlements: Iterable[Settlement], wanted: Iterable[tuple[int, int]]
) -> dict[tuple[int, int], PaymentFacts]:
    """{(settlement id, line no): its payment} for the ``wanted`` lines of ``settlements``
    (settlements or adjustments, read with their status): three queries, more only where a
    line was re-issued."""
    status = {settlement.pk: settlement.status for settlement in settlements}
    found: dict[tuple[int, int], PaymentFacts] = {}
    approved: list[tuple[int, int]] = []
    for settlement_id, line_no in wanted:
        key = idempotency_key(Record.SETTLEMENT, settlement_id, line_no)
        if status[settlement_id] == SettlementStatus.APPROVED:
            approved.append((settlement_id, line_no))
        elif status[settlement_id] == SettlementStatus.WITHDRAWN:
            found[settlement_id, line_no] = PaymentFacts("withdrawn", key)
        else:
            found[settlement_id, line_no] = PaymentFacts("not_sent", key)
    if not approved:
        return found
    releases = dict(
        LedgerRelease.objects.filter(settlement__in={pk for pk, _ in approved}).values_list(
            "settlement_id", "pk"
        )
    )
    places = {
        (releases[settlement_id], line_no): (settlement_id, line_no)
        for settlement_id, line_no in approved
    }
    keys = {place: idempotency_key(Record.SETTLEMENT, *line) for place, line in places.items()}
    for place, payment in _release_line_payments(keys).items():
        found[places[place]] = payment
    return found


def compensation_line_payments(
    statuses: dict[int, str], wanted: Iterable[tuple[int, int]]
) -> dict[tuple[int, int], PaymentFacts]:
    """{(compensation id, line no): its payment} for the ``wanted`` items of compensation
    whose statuses are ``statuses`` (id -> status): only approved compensation is sent to
    the wallet, and a proposal waiting is not yet. Rejected or withdrawn compensation has no
    payment, as its own status says: it is left out."""
    found: dict[tuple[int, int], PaymentFacts] = {}
    approved: list[tuple[int, int]] = []
    for compensation_id, line_no in wanted:
        status = statuses[compensation_id]
        if status == CompensationStatus.APPROVED:
            approved.append((compensation_id, line_no))
        elif status == CompensationStatus.PROPOSED:
            key = idempotency_key(Record.COMPENSATION, compensation_id, line_no)
            found[compensation_id, line_no] = PaymentFacts("not_sent", key)
    if not approved:
        return found
    releases = dict(
        LedgerRelease.objects.filter(compensation__in={pk for pk, _ in approved}).values_list(
            "compensation_id", "pk"
        )
    )
    places = {(releases[pk], line_no): (pk, line_no) for pk, line_no in approved if pk in releases}
    keys = {place: idempotency_key(Record.COMPENSATION, *item) for place, item in places.items()}
    for place, payment in _release_line_payments(keys).items():
        found[places[place]] = payment
    return found


def _release_line_payments(keys: dict[tuple[int, int], str]) -> dict[tuple[int, int], PaymentFacts]:
    """{(release id, line no): payment} for the lines ``keys`` names (by their key)."""
    release_ids = {release for release, _ in keys}
    line_nos = {line_no for _, line_no in keys}
    said: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    confirmations = PaymentConfirmation.objects.filter(
        release__in=release_ids, line_no__in=line_nos
    ).values_list("release_id", "line_no", "status", "external_reference", "at")
    for release_id, line_no, *answer in confirmations:
        said[release_id, line_no].append(tuple(answer))
    replaced = {
        (release_id, line_no): pk
        for release_id, line_no, pk in Reissue.objects.filter(
            original_release__in=release_ids,
            original_line_no__in=line_nos,
            status=ReissueStatus.APPROVED,
        ).values_list("original_release_id", "original_line_no", "pk")
        if (release_id, line_no) in keys
    }
    then = _reissue_payments(set(replaced.values())) if replaced else {}
    found = {}
    for place, key in keys.items():
        reissue = replaced.get(place)
        again = idempotency_key(Record.REISSUE, reissue, 1) if reissue else ""
        state, reference, at, reissued_as = line_outcome(said.get(place, []), again)
        found[place] = PaymentFacts(
            state, key, reference, at, reissued_as, then.get(reissue) if reissue else None
        )
    return found


def _reissue_payments(reissue_ids: set[int]) -> dict[int, PaymentFacts]:
    """{re-issue id: the payment of its own line}; a re-issue that failed in turn and was
    re-issued again is followed the same way."""
    releases = dict(
        LedgerRelease.objects.filter(reissue__in=reissue_ids).values_list("pk", "reissue_id")
    )
    keys = {
        (release, 1): idempotency_key(Record.REISSUE, pk, 1) for release, pk in releases.items()
    }
    payments = _release_line_payments(keys)
    return {releases[release]: payment for (release, _), payment in payments.items()}


def player_totals(player: str) -> list[tuple[str, str, int]]:
    """What approved records owe ``player`` across every case, as (currency, unit, amount):
    approved settlements and adjustments (reversals taken off) and approved compensation,
    less the prizes given in error whose taking back was approved. Seats and points are
    counts, not money: their currency is empty. Three queries."""
    totals: dict[tuple[str, str], int] = defaultdict(int)
    signed = Case(
        When(reversal=True, then=-F("amount")), default=F("amount"), output_field=BigIntegerField()
    )
    lines = (
        SettlementLine.objects.filter(player=player, settlement__status=SettlementStatus.APPROVED)
        .values_list("settlement__currency", "unit")
        .annotate(total=Sum(signed))
        .order_by()
    )
    items = (
        CompensationItem.objects.filter(
            player=player, compensation__status=CompensationStatus.APPROVED
        )
        .values_list("compensation__case__tournament__currency", "unit")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    # Only an approved take-back is a debit: a proposal may still be rejected, and a prize
    # left with the player moves no money.
    taken_back = (
        PrizeWithdrawal.objects.filter(
            player=player,
            status=PrizeWithdrawalStatus.APPROVED,
            outcome=PrizeWithdrawal.Outcome.WITHDRAW,
        )
        .values_list("case__tournament__currency", "unit")
        .annotate(total=-Sum("amount"))
        .order_by()
    )
    for currency, unit, total in [*lines, *items, *taken_back]:
        totals[currency if unit in MONEY_UNITS else "", unit] += total
    return sorted(
        ((currency, unit, amount) for (currency, unit), amount in totals.items() if amount),
        key=lambda total: (total[0], unit_rank(total[1])),
    )
