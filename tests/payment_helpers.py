"""A settlement whose lines have every payment outcome, for the tests of payment states on the
players page, the statements and their exports."""

from dataclasses import dataclass

from django.utils import timezone

from settlements.models import Settlement
from settlements.selectors.payments import lines as payment_lines
from settlements.selectors.payments.lines import LedgerLine
from settlements.services import payments as payment_services
from settlements.services import reissues as reissue_services
from settlements.services.payments import ConfirmationEntry


def answer(cashier, line: LedgerLine, status: str, reference: str) -> None:
    entry = ConfirmationEntry(line.key, status, reference, timezone.now(), line.amount)
    payment_services.payment_confirm(actor=cashier, confirmations=[entry])


@dataclass(frozen=True)
class PaidOut:
    settlement: Settlement
    paid: LedgerLine  # paid at once
    reissued: LedgerLine  # failed, then paid again by an approved re-issue
    reissue_key: str
    failed: LedgerLine  # failed, not paid again
    unconfirmed: LedgerLine


def paid_out(settlement: Settlement, users) -> PaidOut:
    """Four of the approved ``settlement``'s lines, each of another player, answered by the
    cashier differently; the re-issue proposed by one manager and approved by the other."""
    cashier = users["cashier"]
    lines: dict[str, LedgerLine] = {}
    for line in payment_lines.approved_lines(payment_lines.releases_of(settlement=settlement.pk)):
        lines.setdefault(line.player, line)
    paid, reissued, failed, unconfirmed = list(lines.values())[:4]
    answer(cashier, paid, "paid", "TX-PAID")
    answer(cashier, reissued, "failed", "ACCOUNT-CLOSED")
    answer(cashier, failed, "failed", "LIMIT")
    reissue = reissue_services.reissue_propose(
        actor=users["tournament_manager"], idempotency_key=reissued.key, reason="new account"
    )
    reissue = reissue_services.reissue_approve(reissue=reissue, actor=users["second_manager"])
    again = payment_lines.lines_of([f"R{reissue.pk}-1"])[f"R{reissue.pk}-1"]
    answer(cashier, again, "paid", "TX-AGAIN")
    return PaidOut(settlement, paid, reissued, again.key, failed, unconfirmed)
