"""A share of a split of the pool (a refund and even split, a chip equity, proportional or
position split): the pool shared, the guaranteed part, the cap, the rest shared equally and
by chips, and the rounding."""

from fractions import Fraction

from settlements import wording
from settlements.rules import Basis, SplitSummary
from settlements.statements.document import SHARE, Part
from settlements.statements.draft import Draft, Outcome
from settlements.statements.entries import bought_in, own_payments, paid_expression, per_player
from settlements.statements.facts import Explained
from settlements.statements.words import floor_label, floor_words, money, seat_words, value_text


def share(draft: Draft) -> Outcome:
    basis = draft.basis
    if basis is None or basis.split is None:
        return Outcome(SHARE, draft.paid_headline(), [])
    split = basis.split
    explained = draft.player.explained or _unpaid_explanation(split, draft.player.chips)
    out = []
    pool = _pool_step(draft, basis, split)
    if basis.fees_refunded and per_player(basis):
        paid, fees = own_payments(draft)
        out.append(
            f"{bought_in(draft)}: {draft.money(paid + fees)} back first (your buy-ins and "
            "fees), and an equal share of what the prize pool holds beyond the buy-ins given "
            "back."
        )
    elif basis.fees_refunded:
        out.append(
            "You get your buy-in and fee back, and an equal share of what the prize pool "
            "holds beyond the buy-ins given back."
        )
    if split.own_floors is not None:
        out.append(
            f"{bought_in(draft)}: {draft.money(explained.guaranteed)} back first, then your "
            "share of the rest. Nobody gets less than they put into the prize pool, nor more "
            "than the first prize unless their own buy-ins were more."
        )
        draft.step(
            f"Every player's own buy-ins, guaranteed first to the {split.rest_players:,} "
            "players not capped",
            draft.figure(split.own_floors),
            Fraction(split.own_floors),
        )
    if split.floor:
        draft.step(
            f"{floor_words(basis, draft.facts.remaining)}, guaranteed first to each of the "
            f"{split.players:,} players",
            f"{split.players:,} × {draft.figure(split.floor)}",
            Fraction(split.players * split.floor),
        )
    if split.capped:
        out.append(_capped_words(draft, split))
    _rest_step(draft, split, pool)
    if explained.capped:
        cap = int(explained.exact)  # a cap is a whole amount: one H, or the player's own H_i
        out.append(
            f"Your share by the formula came to more than the cap, so you get the cap, "
            f"{draft.money(cap)}."
        )
        draft.exact = Fraction(cap)
        draft.step("Held at the cap", draft.figure(cap), draft.exact)
        # No split with a cap refunds fees (RULES.md §3), so the cap is the whole amount.
    else:
        out.append(_formula_words(draft, split))
        _share_steps(draft, basis, split, explained)
    draft.round(explained, leftover=split.leftover)
    if draft.facts.type == "satellite":
        out.append(seat_words(explained.rounded, basis, draft.currency))
    if not draft.player.lines:
        out.append("Your share came to less than one cent, so rounding left you nothing.")
    return Outcome(SHARE, draft.paid_headline(), out)


def line_amounts(lines) -> dict[str, int]:
    """A player's amounts by line kind (LineFacts)."""
    amounts: dict[str, int] = {}
    for line in lines:
        amounts[line.kind] = amounts.get(line.kind, 0) + line.amount
    return amounts


def payout_parts(
    basis: Basis | None,
    remedy: str | None,
    remaining: int,
    explained: Explained | None,
    currency,
    *,
    lines: dict[str, int] | None = None,
) -> tuple[Part, ...]:
    """The guaranteed part (buy-in and fee back, the buy-in, or the prize of the lowest place
    still in play) apart from the share of the rest, for a player paid by a split; empty for
    anyone else, and for a player whose share rounded to nothing (they have no payout row to
    break down). The review's payout rows and the statements show the same parts."""
    if basis is None or basis.split is None or explained is None or remedy is None:
        return ()
    if explained.rounded == 0:
        return ()
    split = basis.split
    if per_player(basis):
        return _own_parts(basis, explained, lines or {}, currency)
    share = explained.rounded - split.floor
    parts = []
    if basis.fees_refunded:
        back = basis.buy_in + basis.fee
        parts.append(Part("guaranteed", "Buy-in and fee back", back, money(back, currency)))
        share_label = "Equal share of the rest of the pool"
    elif split.floor:
        label = floor_label(basis, remaining)
        parts.append(Part("guaranteed", label, split.floor, money(split.floor, currency)))
        share_label = "Share of the rest of the pool"
    else:
        share_label = "Share of the pool"
    parts.append(Part("share", share_label, share, value_text(share, basis, currency)))
    return tuple(parts)


def _own_parts(basis: Basis, explained: Explained, lines: dict[str, int], currency) -> tuple:
    """§8's parts: the player's own buy-ins (and fees) back, their share, their bounty."""
    parts = []
    if basis.fees_refunded:
        back = lines.get("refund_buy_in", 0) + lines.get("refund_fee", 0)
        parts.append(Part("guaranteed", "Buy-ins and fees back", back, money(back, currency)))
        share_label = "Equal share of the rest of the pool"
    elif explained.guaranteed:
        label = "Own buy-ins back" if basis.split.own_floors is not None else "Guaranteed"
        guaranteed = explained.guaranteed
        parts.append(Part("guaranteed", label, guaranteed, money(guaranteed, currency)))
        share_label = "Share of the rest of the pool"
    else:
        share_label = "Share of the pool"
    share = explained.rounded - explained.guaranteed
    parts.append(Part("share", share_label, share, value_text(share, basis, currency)))
    bounty = lines.get("bounty", 0)
    parts.append(Part("bounty", "Their own bounty, returned", bounty, money(bounty, currency)))
    return tuple(parts)


# --- The steps of the arithmetic ---------------------------------------------------------------


def _pool_step(draft: Draft, basis: Basis, split: SplitSummary) -> str:
    """Adds the step that says what the split shares; returns the figure of that pool."""
    pool = draft.figure(split.pool)
    if basis.split_pool == "pool_less_refunds" and per_player(basis):
        draft.step(
            "The prize pool less the buy-ins and add-ons given back to the players still in",
            f"{draft.figure(basis.prize_pool)} − {draft.figure(basis.prize_pool - split.pool)}",
            Fraction(split.pool),
        )
    elif basis.split_pool == "pool_less_refunds":
        draft.step(
            f"The prize pool less the {draft.facts.remaining:,} buy-ins given back",
            f"{draft.figure(basis.prize_pool)} − {draft.facts.remaining:,} × "
            f"{draft.figure(basis.buy_in)}",
            Fraction(split.pool),
        )
    elif basis.split_pool == "late_pool" and basis.already_paid:
        draft.step(
            "The prize pool less the places the tournament already paid",
            f"{draft.figure(basis.prize_pool)} − {draft.figure(basis.already_paid)}",
            Fraction(split.pool),
        )
    else:
        draft.step("The prize pool being shared", pool, Fraction(split.pool))
    return pool


def _rest_step(draft: Draft, split: SplitSummary, pool: str) -> None:
    """Adds the step from the pool to what is left once the capped players and the
    guaranteed parts are paid, when anything is taken out."""
    expression = pool
    if split.capped_total is not None and split.capped:
        expression += f" − {draft.figure(split.capped_total)}"
    elif split.capped:
        expression += f" − {split.capped:,} × {draft.figure(split.cap)}"
    if split.own_floors:
        expression += f" − {draft.figure(split.own_floors)}"
    if split.floor:
        expression += f" − {split.rest_players:,} × {draft.figure(split.floor)}"
    if expression != pool:
        whom = "the players not capped" if split.capped else "the players"
        draft.step(
            f"Left to share among {whom} ({split.rest_players:,})",
            expression,
            Fraction(split.rest_pool),
        )


def _share_steps(draft: Draft, basis: Basis, split: SplitSummary, explained: Explained) -> None:
    """Adds the equal and the chip parts of a player below the cap, then their sum with the
    guaranteed part (and the refund) when there is more than one term, and sets the exact
    amount."""
    terms = [draft.figure(split.floor)] if split.floor else []
    if split.own_floors is not None and explained.guaranteed:
        terms = [draft.figure(explained.guaranteed)]
    if split.chip_share < 1:
        terms.append(_even_step(draft, split))
    if split.chip_share:
        terms.append(_chip_step(draft, split, explained))
    refunded = 0
    if basis.fees_refunded and per_player(basis):
        paid, fees = own_payments(draft)
        terms[:0] = [f"({paid_expression(draft, fees=True)})"]
        refunded = paid + fees
    elif basis.fees_refunded:
        terms[:0] = [draft.figure(basis.buy_in), draft.figure(basis.fee)]
        refunded = basis.buy_in + basis.fee
    draft.exact = Fraction(refunded) + explained.exact
    if len(terms) > 1:
        label = "In all, before rounding" if basis.fees_refunded else "Your exact amount"
        draft.step(label, " + ".join(terms), draft.exact)


def _even_step(draft: Draft, split: SplitSummary) -> str:
    rest = draft.figure(split.rest_pool)
    halves = "2 ÷ " if split.chip_share else ""
    expression = f"{rest} ÷ {halves}{split.rest_players:,}"
    draft.step(
        f"Your equal part: {'half of ' if split.chip_share else ''}{rest} shared by "
        f"{split.rest_players:,}",
        expression,
        split.even_part,
    )
    return expression


def _chip_step(draft: Draft, split: SplitSummary, explained: Explained) -> str:
    rest = draft.figure(split.rest_pool)
    weight = explained.weight if explained.weight is not None else draft.player.chips
    by_position = draft.facts.remedy == "chip_position"
    # Chip position weighs each player by a prize, in money; the other splits by chips.
    weight_figure = draft.amount_expression(weight) if by_position else f"{int(weight):,}"
    total = (
        draft.amount_expression(split.rest_weight) if by_position else f"{int(split.rest_weight):,}"
    )
    expression = f"{rest}{' ÷ 2' if split.chip_share != 1 else ''} × {weight_figure} ÷ {total}"
    draft.step(_chip_label(draft, split, explained), expression, split.chip_part(weight))
    return expression


def _unpaid_explanation(split: SplitSummary, chips: int) -> Explained:
    """A player still in whom the split paid nothing has no stored explanation: their
    share, by the engine's split summary, rounded down to nothing."""
    exact = split.floor + split.even_part + split.chip_part(chips)
    return Explained(guaranteed=split.floor, exact=exact, capped=False, rounding_cent=0)


# --- Words -------------------------------------------------------------------------------------


def _capped_words(draft: Draft, split: SplitSummary) -> str:
    facts = draft.facts
    cap_name = wording.cap_name(facts.type, facts.stage, facts.remedy)
    if split.capped_total is not None:
        # §8: each player's cap is the first prize, or their own buy-ins where those are more.
        return (
            f"{split.capped:,} player{'s were' if split.capped > 1 else ' was'} held at their "
            f"cap ({draft.money(split.capped_total)} in all): the first prize, "
            f"{draft.money(split.cap)}, or their own buy-ins where those were more; what the "
            f"formula gave {'them' if split.capped > 1 else 'that player'} above it went to the "
            f"other {split.rest_players:,}."
        )
    return (
        f"{split.capped:,} player{'s were' if split.capped > 1 else ' was'} held at the "
        f"cap of {draft.money(split.cap)} ({cap_name}); "
        f"what the formula gave {'them' if split.capped > 1 else 'that player'} above it "
        f"went to the other {split.rest_players:,}."
    )


def _formula_words(draft: Draft, split: SplitSummary) -> str:
    rest = draft.money(split.rest_pool)
    shared = f"{rest} is shared among the {split.rest_players:,}"
    if split.formula == "even":
        return f"{shared} players equally."
    if split.formula == "chip_proportional":
        return f"{shared} players in proportion to their chips."
    if split.formula == "chip_position":
        return (
            f"Half of {rest} is shared equally among the {split.rest_players:,} players and "
            "half by the prize each one's chip rank would win."
        )
    return (
        f"Half of {rest} is shared equally among the {split.rest_players:,} players and half "
        "in proportion to their chips."
    )


def _chip_label(draft: Draft, split: SplitSummary, explained: Explained) -> str:
    whose = "the players not capped" if split.capped else "all the players"
    if split.formula == "chip_position":
        first, last = explained.places or (0, 0)
        where = f"place {first:,}" if first == last else f"places {first:,} to {last:,}"
        return (
            f"Your part by chip rank: the prize of {where} against the prizes of the places "
            f"of {whose}"
        )
    return (
        f"Your part by chips: your {draft.player.chips:,} chips out of the "
        f"{int(split.rest_weight):,} chips of {whose}"
    )
