"""The terms of RULES.md §1, computed once from a valid snapshot."""

from dataclasses import dataclass

from .snapshot import SatelliteTournament, Snapshot


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

    def prize(self, place: int) -> int:
        """prize(k) for a regular or freeroll, 0 beyond the paid places."""
        return self.prizes[place - 1] if 1 <= place <= len(self.prizes) else 0


def terms_of(snapshot: Snapshot) -> Terms:
    t = snapshot.tournament
    entrants = len(snapshot.players)
    eliminated = [p.chips for p in snapshot.players].count(0)
    common = dict(entrants=entrants, eliminated=eliminated, remaining=entrants - eliminated)
    if isinstance(t, SatelliteTournament):
        pool = max(entrants * t.buy_in, t.guarantee)
        seats, remainder = divmod(pool, t.seat_value)
        return Terms(
            **common,
            pool=pool,
            paid_places=seats + (1 if remainder else 0),
            first_prize=t.seat_value,
            prizes=(),
            buy_in=t.buy_in,
            fee=t.fee,
            fpp_buy_in=0,
            seat_value=t.seat_value,
            seats=seats,
            remainder=remainder,
        )
    if t.type == "regular":
        pool, buy_in, fee, fpp = max(entrants * t.buy_in, t.guarantee), t.buy_in, t.fee, 0
    else:
        pool, buy_in, fee, fpp = t.prize_pool, 0, 0, t.fpp_buy_in
    return Terms(
        **common,
        pool=pool,
        paid_places=len(t.payouts),
        first_prize=t.payouts[0],
        prizes=tuple(t.payouts),
        buy_in=buy_in,
        fee=fee,
        fpp_buy_in=fpp,
        seat_value=0,
        seats=0,
        remainder=0,
    )
