"""Generated crash snapshots, for the demo data, the benchmark and the tests.

``build_snapshot`` makes a valid snapshot of any tournament type at any stage:

    build_snapshot(type="satellite", stage="middle", entrants=40, tournament_id="S-1")

The amounts follow RULES.md: regular and satellite pools are entrants x buy-in (or the
guarantee), a freeroll's fixed pool is 10,000 by default; payouts are [50 %, 30 %, 20 %] of
the pool (adding up exactly); a satellite's seat value is a quarter of its pool by default, so
it awards four seats. Remaining players hold distinct chip counts.

``rebuys=True`` makes a rebuy knock-out tournament (crash-snapshot/2, RULES.md §8; regular or
satellite): every third player bought a second entry, every fifth an add-on at the buy-in's
price, half of each buy-in again goes on the player's head, and the first players still in
hold the bounty of one player they knocked out besides their own.
"""

import json


def build_snapshot(
    *,
    type: str = "regular",
    stage: str = "middle",
    entrants: int = 20,
    tournament_id: str | None = None,
    name: str | None = None,
    currency: str = "USD",
    buy_in: int = 1000,
    fee: int = 100,
    prize_pool: int = 10000,
    fpp_buy_in: int = 250,
    seat_value: int | None = None,
    guarantee: int | None = None,
    payouts: list[int] | None = None,
    players: list[dict] | None = None,
    crashed_at: str | None = "2026-11-30T20:14:05Z",
    rebuys: bool = False,
    rulebook: str | None = None,
    starts_at: str | None = None,
) -> dict:
    """A valid snapshot (as a dict) whose stage under the default policy is ``stage``."""
    if entrants < 8:
        raise ValueError("use at least 8 entrants so every stage can be built")
    tournament: dict = {
        "id": tournament_id or f"{type[0].upper()}-{stage}-{entrants}",
        "name": name if name is not None else f"{type.title()} {stage} ({entrants} entrants)",
        "type": type,
        "currency": currency,
    }
    if stage == "pre":
        tournament["started"] = False
    if rulebook is not None:
        tournament["rulebook"] = rulebook
    if starts_at is not None:
        tournament["starts_at"] = starts_at
    if type == "freeroll":
        pool = prize_pool
        tournament.update(prize_pool=pool, fpp_buy_in=fpp_buy_in)
    else:
        tournament.update(buy_in=buy_in, fee=fee)
        paid = entrants * buy_in
        if rebuys:
            tournament.update(entry_bounty=buy_in // 2, add_on=buy_in, add_on_fee=fee)
            paid += (len(range(0, entrants, 3)) + len(range(0, entrants, 5))) * buy_in
        pool = max(paid, guarantee or 0)
        if guarantee is not None:
            tournament["guarantee"] = guarantee
    if type == "satellite":
        seat = seat_value or pool // 4
        tournament["seat_value"] = seat
        seats = pool // seat
        paid_places = seats + (1 if pool - seats * seat else 0)
    else:
        tournament["payouts"] = payouts or _three_places(pool)
        paid_places = len(tournament["payouts"])
        seats = 0

    if players is None:
        eliminated = _eliminated_for(stage, entrants, paid_places)
        if type == "satellite" and stage != "pre":
            eliminated = min(eliminated, entrants - seats)
        remaining = entrants - eliminated
        players = [
            {"id": f"p{i + 1:06d}", "chips": (remaining - i) * 1000 + 7 * i if i < remaining else 0}
            for i in range(entrants)
        ]
    if rebuys and type != "freeroll":
        _rebuy_knock_out(players, buy_in // 2)
    version = 2 if rebuys else 1
    snapshot = {"format": f"crash-snapshot/{version}", "tournament": tournament, "players": players}
    if crashed_at is not None:
        snapshot["crashed_at"] = crashed_at
    return snapshot


def _rebuy_knock_out(players: list[dict], bounty: int) -> None:
    """Entries, add-ons and bounties as the module's docstring says, on ``players`` in place."""
    remaining = [p for p in players if p["chips"]]
    knocked_out = len(players) - len(remaining)
    for i, player in enumerate(players):
        if i % 3 == 0:
            player["entries"] = 2
        if i % 5 == 0:
            player["add_ons"] = 1
    for i, player in enumerate(remaining):
        player["bounty"] = bounty * (2 if i < knocked_out else 1)


def snapshot_bytes(**kwargs) -> bytes:
    return json.dumps(build_snapshot(**kwargs)).encode()


def _three_places(pool: int) -> list[int]:
    first, second = pool * 5 // 10, pool * 3 // 10
    third = pool - first - second
    # A pool of 9 would pay 4, 2, 3: prizes must not increase, so the excess goes to first.
    excess = max(0, third - second)
    # A pool too small for three prizes pays fewer places, since every prize must be positive.
    return [prize for prize in (first + excess, second, third - excess) if prize]


def _eliminated_for(stage: str, entrants: int, paid_places: int) -> int:
    if stage == "pre":
        return 0
    if stage == "early":
        return max(-(-entrants * 5 // 100), entrants // 10)  # at least 5 %, under 25 %
    if stage == "middle":
        return min(entrants // 2, entrants - paid_places - 1)  # at least 25 %, R > M
    if stage == "late":
        return entrants - min(paid_places, 3)
    raise ValueError(f"unknown stage {stage!r}")
