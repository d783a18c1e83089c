"""A statement being drawn up: the facts it is about, and the working so far (the steps of
arithmetic, the exact amount before rounding, the words on rounding).

Each situation (refund, reschedule, knocked out, seat rank, share) adds its steps here and
answers with an ``Outcome``; the builder then puts the statement together.
"""

from fractions import Fraction
from typing import NamedTuple

from settlements.money import UNIT_ORDER, format_figure
from settlements.statements.document import Amount, Step
from settlements.statements.facts import Explained, PlayerFacts, SettlementFacts
from settlements.statements.words import exact_text, money, unit_amount


class Outcome(NamedTuple):
    """What a situation says: the statement's kind, its headline and what it means for the
    player (paragraphs, possibly none)."""

    kind: str
    headline: str
    paragraphs: list[str]


class Draft:
    def __init__(self, facts: SettlementFacts, player: PlayerFacts):
        self.facts, self.player = facts, player
        self.currency = facts.currency
        self.basis = facts.basis
        self.still_in = player.chips > 0
        self.steps: list[Step] = []
        self.rounding = ""
        self.exact: Fraction | None = None

    # The working.

    def step(self, label: str, expression: str, result: Fraction | int) -> None:
        self.steps.append(Step(label, expression, Fraction(result), self.exact_text(result)))

    def round(self, explained: Explained, *, leftover: int | None) -> None:
        """Say how the exact amount became whole minor units (and where leftover cents went)."""
        rounded, exact = explained.rounded, explained.exact
        if exact.denominator == 1:
            self.rounding = f"No rounding was needed: {self.money(rounded)}."
            return
        down = self.money(rounded - explained.rounding_cent)
        if explained.rounding_cent:
            self.rounding = (
                f"Rounding: {self.exact_text(exact)} is rounded down to {down}, plus one of the "
                f"cents left over after rounding everyone down: {self.money(rounded)}."
            )
        else:
            self.rounding = f"Rounding: {self.exact_text(exact)} is rounded down to {down}."
        if leftover:
            self.rounding += (
                f" The {leftover:,} leftover cent{'s go' if leftover > 1 else ' goes'} one each to "
                "the players whose amounts had the largest fractions (on a tie: more chips first, "
                "then the smaller player id)."
            )

    # What the player is paid.

    def amounts(self) -> tuple[Amount, ...]:
        """The player's ledger lines summed by unit, in the usual unit order."""
        totals = dict.fromkeys(UNIT_ORDER, 0)
        for line in self.player.lines:
            totals[line.unit] += line.amount
        return tuple(
            Amount(unit, amount, unit_amount(amount, unit, self.currency))
            for unit, amount in totals.items()
            if amount
        )

    def total(self, unit: str) -> int:
        return sum(line.amount for line in self.player.lines if line.unit == unit)

    def paid_headline(self) -> str:
        amounts = self.amounts()
        if not amounts:
            return "This settlement pays you nothing."
        return f"You receive {' + '.join(amount.shown for amount in amounts)}."

    # Figures in the currency.

    def money(self, amount: int) -> str:
        return money(amount, self.currency)

    def exact_text(self, amount: Fraction | int) -> str:
        return exact_text(Fraction(amount), self.currency)

    def figure(self, amount: int) -> str:
        """An amount in minor units as a number in the major unit, for the arithmetic."""
        return format_figure(amount, self.currency)

    def amount_expression(self, amount: Fraction) -> str:
        """An exact amount in minor units as arithmetic on decimals: "15.00" or, for the
        mean prize of tied places, "(25.00 ÷ 3)"."""
        if amount.denominator == 1:
            return self.figure(amount.numerator)
        return f"({self.figure(amount.numerator)} ÷ {amount.denominator:,})"
