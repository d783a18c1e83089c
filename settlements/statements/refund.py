"""Refunds: the buy-in and fee back (a crash before the start), or the FPP buy-in back (a
freeroll), paid to every entrant, knocked out or not."""

from fractions import Fraction

from settlements.statements.document import REFUND
from settlements.statements.draft import Draft, Outcome
from settlements.statements.entries import per_player, refund_steps
from settlements.statements.reschedule import reschedule_words


def refund(draft: Draft) -> Outcome:
    basis, total = draft.basis, draft.total("cash")
    out = [] if draft.still_in else ["Players already knocked out are refunded too."]
    if per_player(basis) and total:
        return Outcome(REFUND, refund_steps(draft), out)
    if basis is not None:
        draft.exact = Fraction(basis.buy_in + basis.fee)
        draft.step(
            "Buy-in plus fee",
            f"{draft.figure(basis.buy_in)} + {draft.figure(basis.fee)}",
            draft.exact,
        )
    if not total:
        return Outcome(REFUND, "You paid nothing to enter, so there is nothing to give back.", out)
    headline = f"You get {draft.money(total)} back: the tournament is called off."
    if basis is not None:
        headline = (
            f"You get {draft.money(total)} back: your buy-in of {draft.money(basis.buy_in)} "
            f"and your fee of {draft.money(basis.fee)}."
        )
    return Outcome(REFUND, headline, out)


def fpp_refund(draft: Draft) -> Outcome:
    points = draft.total("fpp")
    out = [] if draft.still_in else ["Players already knocked out get their FPP back too."]
    out += reschedule_words(draft, refunded=True)
    if draft.basis is not None:
        draft.exact = Fraction(draft.basis.fpp_buy_in)
        draft.step("FPP paid to enter", f"{draft.basis.fpp_buy_in:,}", draft.exact)
    headline = (
        f"You get your {points:,} FPP buy-in back; no prize is paid."
        if points
        else "The freeroll cost no FPP to enter, so there is nothing to give back."
    )
    return Outcome(REFUND, headline, out)
