"""A satellite's late stage: the players still in ranked by chips, each place worth a seat (or
what the seats leave over), tied places shared equally."""

from settlements.rules.satellite import position_value
from settlements.statements.document import SEAT_RANK
from settlements.statements.draft import Draft, Outcome
from settlements.statements.words import seat_words


def seat_rank(draft: Draft) -> Outcome:
    basis, explained = draft.basis, draft.player.explained
    if basis is None or explained is None or explained.places is None:
        return Outcome(SEAT_RANK, draft.paid_headline(), [])
    first, last = explained.places
    tied = last - first + 1
    values = [
        position_value(k, seat_value=basis.seat_value, seats=basis.seats, remainder=basis.remainder)
        for k in range(first, last + 1)
    ]
    out = [
        f"The {draft.facts.remaining:,} players still in were ranked by chips: places 1 to "
        f"{basis.seats:,} are worth one seat ({draft.money(basis.seat_value)}) each"
        + (
            f", and place {basis.seats + 1:,} the {draft.money(basis.remainder)} the seats "
            "leave over."
            if basis.remainder
            else "."
        )
    ]
    chips = draft.player.chips
    if tied == 1:
        out.append(f"With {chips:,} chips you were in place {first:,}.")
        draft.step(f"The value of place {first:,}", draft.figure(values[0]), explained.exact)
    else:
        out.append(
            f"With {chips:,} chips you were tied with {tied - 1:,} other "
            f"player{'s' if tied > 2 else ''} for places {first:,} to {last:,}, so you share "
            "what those places are worth equally."
        )
        draft.step(
            f"Places {first:,} to {last:,} shared by {tied:,} players",
            f"({' + '.join(draft.figure(v) for v in values)}) ÷ {tied:,}",
            explained.exact,
        )
    draft.exact = explained.exact
    draft.round(explained, leftover=None)
    out.append(seat_words(explained.rounded, basis, draft.currency))
    return Outcome(SEAT_RANK, draft.paid_headline(), out)
