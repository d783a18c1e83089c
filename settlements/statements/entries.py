"""RULES.md §8 in a player's statement: what their rebuys, re-entries and add-ons paid, what
comes back of it, and their own bounty, returned."""

from fractions import Fraction

from settlements.rules import Basis
from settlements.statements.draft import Draft

_TIMES = {1: "once", 2: "twice"}


def per_player(basis: Basis | None) -> bool:
    """Whether the settlement's refunds or guarantees differ from player to player (§8)."""
    return basis is not None and (basis.per_player or bool(basis.entry_bounty))


def bought_in(draft: Draft) -> str:
    """ "You bought in three times and took one add-on"."""
    entries, add_ons = draft.player.entries, draft.player.add_ons
    words = f"You bought in {_TIMES.get(entries, f'{entries:,} times')}"
    if add_ons:
        words += f" and took {'one add-on' if add_ons == 1 else f'{add_ons:,} add-ons'}"
    return words


def own_payments(draft: Draft) -> tuple[int, int]:
    """paid_i and fees_i: what the player put into the prize pool, and their fees."""
    basis, entries, add_ons = draft.basis, draft.player.entries, draft.player.add_ons
    return (
        entries * basis.buy_in + add_ons * basis.add_on,
        entries * basis.fee + add_ons * basis.add_on_fee,
    )


def paid_expression(draft: Draft, *, fees: bool) -> str:
    """The arithmetic of paid_i (and fees_i): "2 × 10.00 + 1 × 10.00 + 2 × 1.00"."""
    basis, entries, add_ons = draft.basis, draft.player.entries, draft.player.add_ons
    terms = [f"{entries:,} × {draft.figure(basis.buy_in)}"]
    if add_ons:
        terms.append(f"{add_ons:,} × {draft.figure(basis.add_on)}")
    if fees:
        terms.append(f"{entries:,} × {draft.figure(basis.fee)}")
        if add_ons and basis.add_on_fee:
            terms.append(f"{add_ons:,} × {draft.figure(basis.add_on_fee)}")
    return " + ".join(terms)


def refund_steps(draft: Draft) -> str:
    """A refund before the start: every entry and add-on back with their fees, and each
    entry's bounty. Adds the steps; returns the headline."""
    basis = draft.basis
    paid, fees = own_payments(draft)
    bounties = draft.player.entries * basis.entry_bounty
    draft.exact = Fraction(paid + fees + bounties)
    expression = paid_expression(draft, fees=True)
    if bounties:
        expression += f" + {draft.player.entries:,} × {draft.figure(basis.entry_bounty)}"
    draft.step("Buy-ins, add-ons, fees and entry bounties", expression, draft.exact)
    parts = [f"{draft.money(paid)} of buy-ins", f"{draft.money(fees)} of fees"]
    if bounties:
        parts.append(f"{draft.money(bounties)} of entry bounties, which the house refunds")
    return (
        f"You get {draft.money(int(draft.exact))} back. {bought_in(draft)}: "
        f"{', '.join(parts[:-1])} and {parts[-1]}."
    )


def bounty_words(draft: Draft) -> list[str]:
    """The bounty on the player's head, paid to them beside the settlement (§8)."""
    bounty = sum(line.amount for line in draft.player.lines if line.kind == "bounty")
    if not bounty:
        return []
    draft.step("Plus your own bounty, returned", draft.figure(bounty), Fraction(bounty))
    return [
        f"Your own bounty of {draft.money(bounty)} is paid back to you as well: it is the part "
        "of your entries set aside as the prize for whoever knocked you out, and nobody did "
        "before the tournament crashed. It comes from the bounty money the entries paid, not "
        "from the prize pool."
    ]
