"""The terms of RULES.md §1, computed once from a valid snapshot."""

from dataclasses import dataclass

from .entries import EntryColumns
from .snapshot import PlayerV2, SatelliteTournament, Snapshot


@dataclass(frozen=True, slots=True)
class Terms:
    entrants: int  # N
    eliminated: int  # E
    remaining: int  # R
    pool: int  # P
    paid_places: int  # M
    first_prize: int  # prize(1); a satellite's is one seat, V
    prizes: tuple[int, ...]  # prize(1..M) of a regular or freeroll; empty for a satellite
    buy_in: int  # B (0 for a freeroll)
    fee: int  # F (0 for a freeroll)
    fpp_buy_in: int  # FPP (0 unless freeroll)
    seat_value: int  # V (0 unless satellite)
    seats: int  # S (0 unless satellite)
    remainder: int  # P - S·V, the prize of place S+1 (0 unless satellite)
    # RULES.md §8 (0 for a version 1 snapshot and for a freeroll)
    entry_bounty: int = 0  # K
    add_on: int = 0  # A
    add_on_fee: int = 0  # G
    per_player: bool = False  # whether any player bought more than one entry or an add-on
    # Σ paid_i over every entrant (N·B without §8): the pool without a guarantee's overlay,
    # which RULES.md §9's guarantee_before_itm "house" splits before the money. 0 for a freeroll.
    paid_in: int = 0

    def prize(self, place: int) -> int:
        """prize(k) for a regular or freeroll, 0 beyond the paid places."""
        return self.prizes[place - 1] if 1 <= place <= len(self.prizes) else 0


def terms_of(snapshot: Snapshot) -> Terms:
    t = snapshot.tournament
    players = snapshot.players
    entrants = len(players)
    chips = [p.chips for p in players]
    eliminated = chips.count(0)
    remaining = entrants - eliminated
    common = dict(entrants=entrants, eliminated=eliminated, remaining=remaining)
    if t.type == "freeroll":
        return Terms(
            **common,
            pool=t.prize_pool,
            paid_places=len(t.payouts),
            first_prize=t.payouts[0],
            prizes=tuple(t.payouts),
            buy_in=0,
            fee=0,
            fpp_buy_in=t.fpp_buy_in,
            seat_value=0,
            seats=0,
            remainder=0,
        )
    paid, per_player = _paid_in(t, snapshot)
    pool = max(paid, t.guarantee)
    common |= dict(
        pool=pool,
        buy_in=t.buy_in,
        fee=t.fee,
        fpp_buy_in=0,
        entry_bounty=t.entry_bounty,
        add_on=t.add_on,
        add_on_fee=t.add_on_fee,
        per_player=per_player,
        paid_in=paid,
    )
    if isinstance(t, SatelliteTournament):
        seats, remainder = divmod(pool, t.seat_value)
        return Terms(
            **common,
            paid_places=seats + (1 if remainder else 0),
            first_prize=t.seat_value,
            prizes=(),
            seat_value=t.seat_value,
            seats=seats,
            remainder=remainder,
        )
    return Terms(
        **common,
        paid_places=len(t.payouts),
        first_prize=t.payouts[0],
        prizes=tuple(t.payouts),
        seat_value=0,
        seats=0,
        remainder=0,
    )


def entry_columns(snapshot: Snapshot) -> EntryColumns:
    """e_i, a_i and h_i of every player of the snapshot: as parsing read them, or read from the
    players of a snapshot built by hand."""
    if snapshot.entry_columns is not None:
        return snapshot.entry_columns
    return EntryColumns.of(snapshot.players)


def _paid_in(t, snapshot: Snapshot) -> tuple[int, bool]:
    """Σ paid_i over every entrant, and whether any player bought more than one entry or an
    add-on. (What the players still in paid matters to the early stage alone, which settle
    works out from their refunds.)"""
    players = snapshot.players
    if not players or type(players[0]) is not PlayerV2:
        # Version 1 (or version 2 without a player field): one entry each, no add-on.
        return len(players) * t.buy_in, False
    own = entry_columns(snapshot)
    entries, add_ons = sum(own.entries), sum(own.add_ons)
    return entries * t.buy_in + add_ons * t.add_on, (entries != len(players) or add_ons > 0)
