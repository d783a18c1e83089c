"""The result of a split (formulas.py): each player's amount, and the figures and the
explanations that show a person how it came about without working it out again."""

from dataclasses import dataclass
from fractions import Fraction
from math import gcd
from operator import add, sub

from .groups import Tables


@dataclass(frozen=True, slots=True)
class SplitSummary:
    """The figures of one split that every player's amount is built from, so that a person can
    be shown the arithmetic with its inputs rather than only its result.

    After the guaranteed amounts and the capped players, the formula shares ``rest_pool`` (Q'
    of §4) among ``rest_players``: the part ``chip_share`` of it by weight (chips, or for chip
    position the prize a player's chip rank would win), the rest equally.
    """

    formula: str
    pool: int  # Q, the amount split
    players: int  # n, the players sharing it
    total_weight: Fraction  # the weights of all n players added up (C for the chip formulas)
    floor: int  # L, paid to every player first
    cap: int | None  # H, nobody above it
    capped: int  # players held at H
    rest_pool: int  # Q' = Q − capped·H − rest_players·L
    rest_players: int  # n − capped
    rest_weight: Fraction  # the weights of the players not capped added up
    chip_share: Fraction  # the part of Q' shared by weight: 1/2, 1 (proportional) or 0 (even)
    leftover: int  # cents left after every amount was rounded down, given out one each
    # RULES.md §8's regular middle stage guarantees each player their own buy-ins, L_i, and
    # caps them at their own H_i: then `floor` is 0, and these hold Σ L_i over the players not
    # capped and Σ H_i over the capped ones. None for a split with one L and one H.
    own_floors: int | None = None
    capped_total: int | None = None

    @property
    def even_half(self) -> Fraction:
        """The part of Q' shared equally."""
        return self.rest_pool * (1 - self.chip_share)

    @property
    def chip_half(self) -> Fraction:
        """The part of Q' shared by weight."""
        return self.rest_pool * self.chip_share

    @property
    def even_part(self) -> Fraction:
        """What each player not capped gets of the part shared equally."""
        return self.even_half / self.rest_players

    def chip_part(self, weight: Fraction | int) -> Fraction:
        """What a player not capped with this weight gets of the part shared by weight."""
        if not self.chip_share or not self.rest_weight:
            return Fraction(0)
        return self.chip_half * weight / self.rest_weight


@dataclass(frozen=True, slots=True)
class Explanation:
    """How one player's amount came about, for showing to a person without recomputing."""

    player: str
    chips: int
    guaranteed: int  # L, paid before the formula
    share: Fraction  # what the formula added on top of L (after the cap), before rounding
    capped: bool  # held at the cap H
    exact: Fraction  # L + share: the exact amount before rounding
    rounded: int  # the amount paid (a satellite pays it as a seat and/or T$, §5)
    rounding_cent: int  # 1 if this player received one of the leftover cents
    # What the formula weighed this player by: the chips, or for chip position the prize their
    # chip rank would win (tied players: the mean over their places).
    weight: Fraction = Fraction(0)
    # share = even_part + chip_part for a player not capped (both 0 for a capped one).
    even_part: Fraction = Fraction(0)
    chip_part: Fraction = Fraction(0)
    # The places by chips (1 = most) the player shares with the players tied with them, where
    # the remedy ranks players (chip position, satellite seats); None elsewhere.
    places: tuple[int, int] | None = None


class Split:
    """The result of one split; lists are aligned with the players passed in.

    Players with equal chips are paid the same exact amount by every formula, so a split is
    worked out once per group of equal chips (see ChipGroups) and only ``amounts`` is built per
    player at once; the other lists, which only explanations read, are built when first read.
    """

    __slots__ = (
        "_cents",
        "_chips",
        "_numerators",
        "_places",
        "_tables",
        "_weights",
        "amounts",
        "cap",
        "capped",
        "denominator",
        "floor",
        "floors",
        "formula",
        "pool",
        "summary",
        "weight_scale",
    )

    def __init__(
        self,
        *,
        formula: str,
        pool: int,
        floor: int,
        cap: int | None,
        denominator: int,
        capped: frozenset[int],  # players held at the cap
        amounts: list[int],
        summary: "SplitSummary",
        weight_scale: int,
        chips: list[int],
        tables: Tables | None = None,
        numerators: list[int] | None = None,
        cents: list[int] | None = None,
        weights: list[int] | None = None,
        places: list[tuple[int, int]] | None = None,
        floors: list[int] | None = None,
    ):
        self.formula, self.pool, self.floor, self.cap = formula, pool, floor, cap
        self.denominator, self.capped, self.amounts = denominator, capped, amounts
        self.summary, self.weight_scale = summary, weight_scale
        # Each player's own L_i, where they differ (§8): then numerators[i] / denominator is the
        # share on top of it, and the exact amount is floors[i] plus that.
        self.floors = floors
        self._chips, self._tables = chips, tables
        self._numerators, self._cents, self._weights, self._places = (
            numerators,
            cents,
            weights,
            places,
        )

    def _by_chips(self, table: dict) -> list:
        return list(map(table.__getitem__, self._chips))

    @property
    def numerators(self) -> list[int]:
        """Exact amount of player i = numerators[i] / denominator (on top of floors[i])."""
        if self._numerators is None:
            self._numerators = self._by_chips(self._tables.numerators)
        return self._numerators

    @property
    def cents(self) -> list[int]:
        """1 for a player given one of the leftover cents."""
        if self._cents is None:
            rounded_down = self._by_chips(self._tables.rounded_down)
            if self.floors is not None:
                rounded_down = list(map(add, rounded_down, self.floors))
            self._cents = list(map(sub, self.amounts, rounded_down))
        return self._cents

    @property
    def weights(self) -> list[int]:
        """Player i weighs weights[i] / weight_scale."""
        if self._weights is None:
            self._weights = self._by_chips(self._tables.weights)
        return self._weights

    @property
    def places(self) -> list[tuple[int, int]] | None:
        """Chip position only: see Explanation.places."""
        if self._places is None and self._tables is not None and self._tables.places:
            self._places = self._by_chips(self._tables.places)
        return self._places

    @property
    def by_chips(self) -> bool:
        """Whether the split was worked out per chip group: then everything about a player
        but their rounding cent (and §8's own L_i) follows from their chips."""
        return self._tables is not None

    def guaranteed(self, i: int) -> int:
        return self.floor if self.floors is None else self.floors[i]

    def weight(self, i: int) -> Fraction:
        return Fraction(self.weights[i], self.weight_scale)

    def explain(self, i: int, player: str, chips: int) -> Explanation:
        exact = Fraction(self.numerators[i], self.denominator)
        if self.floors is not None:
            exact += self.floors[i]
        capped = i in self.capped
        weight = self.weight(i)
        even_part = chip_part = Fraction(0)
        if not capped:
            even_part, chip_part = self.summary.even_part, self.summary.chip_part(weight)
        guaranteed = self.guaranteed(i)
        return Explanation(
            player=player,
            chips=chips,
            guaranteed=guaranteed,
            share=exact - guaranteed,
            capped=capped,
            exact=exact,
            rounded=self.amounts[i],
            rounding_cent=self.cents[i],
            weight=weight,
            even_part=even_part,
            chip_part=chip_part,
            places=self.places[i] if self.places is not None else None,
        )

    def terms(self, i: int) -> tuple[int, int, int]:
        """Player i's exact amount and share as reduced fractions over one denominator,
        (exact numerator, share numerator, denominator), without building Fractions."""
        numerator, denominator = self.numerators[i], self.denominator
        divisor = gcd(numerator, denominator)
        numerator, denominator = numerator // divisor, denominator // divisor
        if self.floors is not None:
            # The numerator is the share alone; adding a whole L_i keeps the fraction reduced.
            return numerator + self.floors[i] * denominator, numerator, denominator
        # Taking a multiple of the denominator off keeps the numerator coprime to it, so the
        # share needs no second reduction.
        return numerator, numerator - self.guaranteed(i) * denominator, denominator
