"""What a statement is built from: plain facts about one settlement and one of its players,
filled by the selectors from the stored settlement (or by tests straight from the engine).
"""

from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from math import floor

from settlements.rules import Basis


@dataclass(frozen=True)
class Explained:
    """A player's stored explanation (SettlementPayout) or the engine's (Explanation)."""

    guaranteed: int
    exact: Fraction
    capped: bool
    rounding_cent: int
    weight: Fraction | None = None  # stored for chip position only; else the chips
    places: tuple[int, int] | None = None

    @property
    def rounded(self) -> int:
        # A player at the guaranteed amount or at the cap is a whole number and gains no cent.
        return floor(self.exact) + self.rounding_cent


@dataclass(frozen=True)
class PaymentFacts:
    """What became of one ledger line. ``state``: "not_sent" (its settlement is not approved,
    so the wallet has not been asked), "withdrawn" (withdrawn with its case: never to be paid),
    "unconfirmed", "paid", "failed", or "reissued" (it failed and was paid again as the line
    ``reissued_as``, whose own fate is ``then``). ``reference`` and ``at`` are the wallet's
    latest answer about the line."""

    state: str
    key: str = ""
    reference: str = ""
    at: datetime | None = None
    reissued_as: str = ""
    then: "PaymentFacts | None" = None


@dataclass(frozen=True)
class LineFacts:
    kind: str
    unit: str
    amount: int  # signed: a reversal in an adjustment is negative
    source: str
    payment: PaymentFacts | None = None  # None where the payments were not read


@dataclass(frozen=True)
class Followup:
    """Something else on record for the player in this case, beside the settlement."""

    kind: str  # "adjustment", "compensation" or "prize_withdrawal"
    number: int
    status: str  # in words: "Approved", "Awaiting approval", "Withdraw the prize", …
    amounts: tuple[tuple[str, int], ...] = ()  # (unit, signed amount)
    words: str = ""  # the reason, or the prize given in error
    # Compensation proposed from the ICM second opinion: (the policy's amount, the ICM value).
    icm: tuple[int, int] | None = None


@dataclass(frozen=True)
class SettlementFacts:
    settlement_id: int | None
    case_id: int | None
    incident_id: int | None
    status: str  # settlement status code; empty for an engine result not stored
    status_label: str
    tournament_id: str
    tournament_name: str
    currency: str
    stage: str
    remedy: str | None
    decision: str | None
    entrants: int
    eliminated: int
    remaining: int
    pool: int
    pre_pct: int
    early_pct: int
    basis: Basis | None  # None for a settlement stored before bases were kept
    started: bool | None = None
    crashed_at: datetime | None = None
    reschedule_at: datetime | None = None
    invite_scope: str = ""  # "entrants", "remaining", "custom" or "" (no reschedule)
    invited: frozenset[str] = frozenset()  # the hand-picked list of a "custom" scope
    tournament_type: str = ""  # regular, freeroll or satellite (also in the basis, when kept)
    # (key, number) of the rulebook version the case was settled under; None for an engine
    # result not stored.
    rulebook: tuple[str, int] | None = None

    @property
    def type(self) -> str:
        """The tournament's type, from the engine's basis when it was kept."""
        return self.basis.tournament_type if self.basis is not None else self.tournament_type


@dataclass(frozen=True)
class PlayerFacts:
    player: str
    chips: int
    explained: Explained | None  # None when only refunds or nothing were paid
    lines: tuple[LineFacts, ...]
    followups: tuple[Followup, ...] = ()
    entries: int = 1  # RULES.md §8: paid entries (first + rebuys or re-entries)
    add_ons: int = 0
