"""A player's statement put together: the situation that applies to them (by the remedy, and
whether they still had chips) gives the headline, the working and what it means for them;
around it go what happened, why this stage, what the policy gives, and where the settlement
stands."""

from collections.abc import Callable

from settlements import player_ids, wording
from settlements.statements.document import REFUND, SEAT_RANK, SHARE, Section, Statement
from settlements.statements.draft import Draft, Outcome
from settlements.statements.entries import bounty_words
from settlements.statements.facts import PlayerFacts, SettlementFacts
from settlements.statements.knocked_out import knocked_out
from settlements.statements.refund import fpp_refund, refund
from settlements.statements.reschedule import rescheduled
from settlements.statements.seat_rank import seat_rank
from settlements.statements.share import line_amounts, payout_parts, share
from settlements.statements.words import (
    WITHOUT_BASIS,
    followup_words,
    status_words,
    what_happened,
    why_stage,
)

# The remedies that pay everyone alike, knocked out or not; the others pay the players still in.
PAID_TO_EVERYONE: dict[str, Callable[[Draft], Outcome]] = {
    "refund": refund,
    "fpp_refund": fpp_refund,
    "reschedule": rescheduled,
}


def build(facts: SettlementFacts, player: PlayerFacts) -> Statement:
    """The statement of ``player`` (an entrant of the tournament) in this settlement."""
    draft = Draft(facts, player)
    kind, headline, paragraphs = _situation(draft)
    paragraphs = [*paragraphs, *bounty_words(draft)]
    parts = ()
    if kind == SHARE:
        parts = payout_parts(
            facts.basis,
            facts.remedy,
            facts.remaining,
            player.explained,
            facts.currency,
            lines=line_amounts(player.lines),
        )
    return Statement(
        settlement=facts,
        player=player.player,
        player_escaped=player_ids.escaped(player.player),
        chips=player.chips,
        kind=kind,
        headline=headline,
        sections=_sections(facts, player, kind, paragraphs),
        parts=parts,
        steps=tuple(draft.steps),
        exact=draft.exact,
        rounding=draft.rounding,
        amounts=draft.amounts(),
        lines=player.lines,
        followups=tuple(followup_words(f, facts.currency) for f in player.followups),
        capped=kind == SHARE and player.explained is not None and player.explained.capped,
    )


def _situation(draft: Draft) -> Outcome:
    remedy = draft.facts.remedy
    if remedy in PAID_TO_EVERYONE:
        return PAID_TO_EVERYONE[remedy](draft)
    if not draft.still_in:
        return knocked_out(draft)
    if remedy == "satellite_rank":
        return seat_rank(draft)
    return share(draft)


def _sections(
    facts: SettlementFacts, player: PlayerFacts, kind: str, paragraphs: list[str]
) -> tuple[Section, ...]:
    sections = [
        Section("What happened", (what_happened(facts, player),)),
        Section("Why this stage", (why_stage(facts),)),
    ]
    rule = wording.describe(facts.type, facts.stage, facts.remedy, decision=facts.decision or None)
    if rule:
        sections.append(Section("What the crash policy gives in this case", (rule,)))
    if paragraphs:
        sections.append(Section("What it means for you", tuple(paragraphs)))
    if facts.status and facts.status != "approved":
        sections.append(Section("Not final yet", (status_words(facts),)))
    if facts.basis is None and player.lines and kind in (REFUND, SHARE, SEAT_RANK):
        sections.append(Section("Why no working is shown", (WITHOUT_BASIS,)))
    return tuple(sections)
