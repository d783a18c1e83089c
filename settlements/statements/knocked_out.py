"""A player knocked out before the crash, under a remedy that pays only the players still in."""

from settlements.statements.document import KNOCKED_OUT
from settlements.statements.draft import Draft, Outcome


def knocked_out(draft: Draft) -> Outcome:
    facts, basis = draft.facts, draft.basis
    headline = "You were knocked out before the crash, so this settlement pays you nothing."
    out = []
    if facts.remedy == "refund_even_split":
        out.append(
            "At this stage only the players still holding chips get their buy-in and fee "
            "back; the buy-ins of the players knocked out stay in the prize pool, which is "
            "then shared equally among the players still in."
        )
    elif facts.stage == "late":
        out.append(
            "If you finished in a paid place, the tournament paid your prize when you went "
            "out; the settlement does not pay it a second time."
        )
        if basis is not None and basis.already_paid:
            out.append(
                f"The places already paid that way are worth {draft.money(basis.already_paid)}"
                " in all, and they are left out of the pool the settlement shares."
            )
    else:
        out.append(
            "The pool is shared only among the players who still held chips when it crashed."
        )
    return Outcome(KNOCKED_OUT, headline, out)
