"""A freeroll played again: nothing is paid now, and the statement says when it is played and
whether the player is invited."""

from datetime import UTC

from settlements.statements.document import RESCHEDULED
from settlements.statements.draft import Draft, Outcome


def rescheduled(draft: Draft) -> Outcome:
    headline = "Nothing is paid now: the freeroll will be played again."
    return Outcome(RESCHEDULED, headline, reschedule_words(draft, refunded=False))


def reschedule_words(draft: Draft, *, refunded: bool) -> list[str]:
    """What the decision on playing the freeroll again means for the player; an FPP refund
    says it too."""
    facts = draft.facts
    if facts.decision == "no_reschedule":
        return ["The freeroll will not be announced again."]
    if facts.decision != "reschedule" and facts.remedy != "reschedule":
        return []
    when = (
        f" on {facts.reschedule_at.astimezone(UTC):%d %b %Y at %H:%M} UTC"
        if facts.reschedule_at
        else ""
    )
    invited = _invited(draft)
    out = [f"The freeroll will be played again{when}."]
    if invited is True:
        out.append("You are invited to play it.")
    elif invited is False:
        out.append(
            "The invitation goes to "
            + (
                "the players who still had chips"
                if facts.invite_scope == "remaining"
                else "players chosen by the Marketing Manager"
            )
            + ", and you are not among them."
        )
    if not refunded:
        out.append("No FPP buy-in is given back, since the freeroll will be played.")
    return out


def _invited(draft: Draft) -> bool | None:
    """Whether the player is invited to the replay; None when no replay is announced."""
    scope = draft.facts.invite_scope
    if scope == "entrants":
        return True
    if scope == "remaining":
        return draft.still_in
    if scope == "custom":
        return draft.player.player in draft.facts.invited
    return None
