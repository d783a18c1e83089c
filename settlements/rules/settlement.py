"""The settlement the engine produces, and its crash-settlement/1 JSON form (SNAPSHOT.md)."""

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import NamedTuple

import msgspec

from .basis import Basis
from .policy import Policy
from .split_result import Explanation, Split

FORMAT = "crash-settlement/1"


# Rows and lines are msgspec structs rather than dataclasses: a 300,000-player settlement builds
# close to a million of them, which is ten times faster this way, and they encode directly.
class PayoutRow(msgspec.Struct, frozen=True, gc=False):
    player: str
    cash: int = 0
    tdollars: int = 0
    tickets: int = 0
    fpp: int = 0


class Line(msgspec.Struct, frozen=True, gc=False):
    player: str
    kind: str
    unit: str
    amount: int
    source: str


class ExplanationTerms(NamedTuple):
    """An Explanation's figures with the share and the exact amount as reduced numerators
    over one denominator: storing 300,000 explanations this way needs no Fraction. Players
    whose explanations are equal (same chips, same guaranteed amount, same rounding cent)
    share one."""

    chips: int
    guaranteed: int
    share: int  # Explanation.share == Fraction(share, denominator)
    exact: int  # Explanation.exact == Fraction(exact, denominator)
    denominator: int
    capped: bool
    rounded: int
    rounding_cent: int
    # Explanation.weight as (numerator, denominator) where it is not the chips (chip position)
    weight: tuple[int, int] | None = None
    places: tuple[int, int] | None = None


class SplitPart:
    """Players paid by one split of a pool; lists aligned."""

    __slots__ = ("chips", "ids", "result")

    def __init__(self, ids: list[str], chips: list[int], result: Split):
        self.ids, self.chips, self.result = ids, chips, result

    def explain(self, i: int) -> Explanation:
        return self.result.explain(i, self.ids[i], self.chips[i])

    def terms_column(self) -> list[ExplanationTerms]:
        """The terms of each player, aligned with ``ids``."""
        result = self.result
        if not result.by_chips:
            return [self._terms(i) for i in range(len(self.ids))]
        # Worked out by chip group, so everything but the rounding cent and (§8) each player's
        # own L_i follows from the chips: one ExplanationTerms per distinct key, not per player.
        cents = result.cents
        if result.floors is None:
            keys = list(zip(self.chips, cents, strict=True))
        else:
            keys = list(zip(self.chips, result.floors, cents, strict=True))
        one_each = dict(zip(keys, range(len(keys)), strict=True))
        table = {key: self._terms(i) for key, i in one_each.items()}
        return list(map(table.__getitem__, keys))

    def _terms(self, i: int) -> ExplanationTerms:
        result = self.result
        exact, share, denominator = result.terms(i)
        weight = places = None
        if result.places is not None:
            value = result.weight(i)
            weight, places = (value.numerator, value.denominator), result.places[i]
        return ExplanationTerms(
            self.chips[i],
            result.guaranteed(i),
            share,
            exact,
            denominator,
            i in result.capped,
            result.amounts[i],
            result.cents[i],
            weight,
            places,
        )


class RankingPart:
    """Satellite players valued by their places by chips (RULES.md §3, late stage): a player
    alone on their chips takes the value of their place; tied players share their places'
    total by an even split."""

    __slots__ = ("chips", "ids", "places", "shared", "values")

    def __init__(
        self,
        ids: list[str],
        chips: list[int],
        values: list[int],
        places: list[tuple[int, int]],
        shared: list[tuple[list[int], Split]],
    ):
        self.ids, self.chips, self.values, self.places = ids, chips, values, places
        # player index -> (the even split of their tie group, their index in it)
        self.shared = {i: (even, j) for members, even in shared for j, i in enumerate(members)}

    def explain(self, i: int) -> Explanation:
        if i in self.shared:
            even, j = self.shared[i]
            explained = even.explain(j, self.ids[i], self.chips[i])
            return replace(explained, places=self.places[i])
        value = self.values[i]
        return Explanation(
            player=self.ids[i],
            chips=self.chips[i],
            guaranteed=0,
            share=Fraction(value),
            capped=False,
            exact=Fraction(value),
            rounded=value,
            rounding_cent=0,
            weight=Fraction(1),
            even_part=Fraction(value),
            places=self.places[i],
        )

    def terms_column(self) -> list[ExplanationTerms]:
        """The terms of each player, aligned with ``ids``."""
        column = []
        for i, (chips, places) in enumerate(zip(self.chips, self.places, strict=True)):
            if i in self.shared:
                even, j = self.shared[i]
                exact, share, denominator = even.terms(j)
                terms = ExplanationTerms(
                    chips,
                    0,
                    share,
                    exact,
                    denominator,
                    False,
                    even.amounts[j],
                    even.cents[j],
                    None,
                    places,
                )
            else:
                value = self.values[i]
                terms = ExplanationTerms(chips, 0, value, value, 1, False, value, 0, None, places)
            column.append(terms)
        return column


class Explanations(Mapping[str, Explanation]):
    """Player id -> Explanation for every player paid by the settlement's split or ranking
    (``part``; None when it has neither), built on first access.

    Building Fractions for 300,000 players takes longer than the whole settlement, and only a
    web page showing a few players needs them, so the part keeps its integers until asked.
    """

    def __init__(self, part: SplitPart | RankingPart | None = None):
        self._part = part
        self._index: dict[str, int] | None = None

    def _lookup(self) -> dict[str, int]:
        if self._index is None:
            ids = self._part.ids if self._part is not None else []
            self._index = {player: i for i, player in enumerate(ids)}
        return self._index

    def __getitem__(self, player: str) -> Explanation:
        position = self._lookup()[player]  # a KeyError for anyone not explained
        return self._part.explain(position)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._lookup()))

    def terms_at(self, positions: list[int]) -> list[ExplanationTerms | None]:
        """The terms of the players at ``positions`` among the part's players; None for each
        when nothing is explained."""
        if self._part is None:
            return [None] * len(positions)
        column = self._part.terms_column()
        return [column[i] for i in positions]

    def __len__(self) -> int:
        return len(self._lookup())

    def __repr__(self) -> str:
        return f"<Explanations for {len(self)} players>"


class SettlementDocument(msgspec.Struct, kw_only=True):
    """SNAPSHOT.md's crash-settlement/1 document: built here both for what the engine returns
    and for a settlement stored by the desk (whose adjustments list a take-back as a negative
    amount and have no ``pool_distributed`` of their own)."""

    format: str = FORMAT
    tournament_id: str
    policy: dict
    stage: str
    remedy: str | None
    decision: str | None
    decision_options: list[str]
    entrants: int
    eliminated: int
    remaining: int
    pool: int
    pool_distributed: int | None
    payouts: list[PayoutRow]
    lines: list[Line]

    def to_dict(self) -> dict:
        """The document in plain Python types."""
        return msgspec.to_builtins(self)


@dataclass(frozen=True, slots=True)
class Settlement:
    tournament_id: str
    currency: str
    policy: Policy
    stage: str
    remedy: str | None  # None while a decision is pending
    decision: str | None
    decision_options: list[str]  # non-empty only while a decision is pending
    entrants: int
    eliminated: int
    remaining: int
    pool: int
    pool_distributed: int
    payouts: list[PayoutRow]  # sorted by player id; players paid nothing are left out
    lines: list[Line]  # sorted by player, then kind in SNAPSHOT.md's order
    line_totals: dict[str, dict[str, int]]  # {unit: {source: the lines' sum}}
    explanations: Explanations = field(default_factory=Explanations, compare=False)
    basis: Basis | None = field(default=None, compare=False)
    # The players settled (every entrant for a refund, else those with chips, in the
    # snapshot's order): their chips, and each payout row's player as a position among them.
    # The desk stores 300,000 rows with their chips and explanations; these align them with
    # the rows without a look-up per player.
    settled_chips: list[int] = field(default_factory=list, compare=False, repr=False)
    paid_positions: list[int] = field(default_factory=list, compare=False, repr=False)

    def payout_chips(self) -> list[int]:
        """The chips at the crash of each payout row's player."""
        chips = self.settled_chips
        return [chips[i] for i in self.paid_positions]

    def payout_terms(self) -> list[ExplanationTerms | None]:
        """The explanation terms of each payout row's player; None for a player paid nothing
        the explanations cover (a refund)."""
        return self.explanations.terms_at(self.paid_positions)

    def _document(self) -> SettlementDocument:
        return SettlementDocument(
            tournament_id=self.tournament_id,
            policy=self.policy.to_dict(),
            stage=self.stage,
            remedy=self.remedy,
            decision=self.decision,
            decision_options=list(self.decision_options),
            entrants=self.entrants,
            eliminated=self.eliminated,
            remaining=self.remaining,
            pool=self.pool,
            pool_distributed=self.pool_distributed,
            payouts=self.payouts,
            lines=self.lines,
        )

    def to_dict(self) -> dict:
        """The settlement as SNAPSHOT.md's crash-settlement/1 document, in plain Python types."""
        return self._document().to_dict()

    def to_json(self) -> bytes:
        """The same document encoded as JSON (fast path for large settlements)."""
        return msgspec.json.encode(self._document())
