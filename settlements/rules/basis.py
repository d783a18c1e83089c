"""What a settlement's amounts were built from, as a whole: the tournament's figures and those
of its split. It travels with the settlement (stored beside it as JSON) so that a statement
shows the engine's own inputs and intermediate figures and never works them out again."""

from dataclasses import asdict, dataclass, fields
from fractions import Fraction

from .split_result import SplitSummary

_FRACTIONS = ("total_weight", "rest_weight", "chip_share")


@dataclass(frozen=True, slots=True)
class Basis:
    tournament_type: str
    prize_pool: int  # P
    buy_in: int  # B (0 for a freeroll)
    fee: int  # F (0 for a freeroll)
    fpp_buy_in: int  # FPP (0 unless freeroll)
    first_prize: int  # prize(1); a satellite's is one seat, V
    paid_places: int  # M
    next_payout: int  # prize(R): what the next player knocked out would have won
    already_paid: int  # prize(R+1) + … + prize(M): places the tournament paid itself
    seat_value: int  # V (0 unless satellite)
    seats: int  # S (0 unless satellite)
    remainder: int  # P − S·V, the prize of place S+1 (0 unless satellite)
    # The split of the remedy, if it is one, and the names (remedies.SplitTerms) of what it
    # shares, what it guarantees first and what caps it.
    split: SplitSummary | None = None
    split_pool: str | None = None
    split_floor: str | None = None
    split_cap: str | None = None
    fees_refunded: bool = False
    # RULES.md §8: K, A and G (0 for a version 1 snapshot), and whether a player bought more
    # than one entry or an add-on, so that refunds and guarantees differ from player to player.
    entry_bounty: int = 0
    add_on: int = 0
    add_on_fee: int = 0
    per_player: bool = False

    def to_dict(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "split"}
        split = None
        if self.split is not None:
            split = asdict(self.split)
            for name in _FRACTIONS:
                split[name] = str(split[name])
        return {**data, "split": split}

    @classmethod
    def from_dict(cls, data: dict) -> "Basis":
        values = dict(data)
        split = values.pop("split", None)
        if split is not None:
            split = SplitSummary(
                **{
                    key: Fraction(value) if key in _FRACTIONS else value
                    for key, value in split.items()
                }
            )
        return cls(**values, split=split)
