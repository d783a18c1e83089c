"""Large, realistic crash snapshots for the benchmarks, written as JSON text directly.

Building the text without a dict of 300,000 players keeps the generating process small, so the
memory a benchmark reports is the memory of the thing measured. Players hold random stacks
(multiples of 500), ids are shuffled, 15 % of the field is paid (a steep payout table), and
the share of eliminated players puts the tournament in the stage asked for.
"""

import json
import random
from pathlib import Path

BUY_IN, FEE = 1000, 100
FPP_BUY_IN = 250
FREEROLL_POOL = 1_000_000
PAID_SHARE = 15  # per cent of the entrants in the money
TYPES = ("regular", "freeroll", "satellite")
STAGES = ("pre", "early", "middle", "late")
ENTRY_BOUNTY, ADD_ON = 500, 1000  # a rebuy knock-out's (crash-snapshot/2)


def payout_table(pool: int, places: int) -> list[int]:
    """A steep, non-increasing list of `places` positive prizes summing to `pool`."""
    weights = [10**12 // (k + 50) for k in range(places)]
    total = sum(weights)
    prizes = [pool * w // total for w in weights]
    for k in range(pool - sum(prizes)):  # the leftover cents go to the top places
        prizes[k] += 1
    return prizes


def tournament_json(tournament_id: str, type: str, entrants: int, *, started: bool = True) -> str:
    """The tournament object of a snapshot of `entrants` players, as JSON text."""
    head = f'"id":"{tournament_id}","name":"Benchmark {tournament_id}","currency":"USD"'
    if not started:
        head += ',"started":false'
    places = max(3, entrants * PAID_SHARE // 100)
    if type == "regular":
        payouts = ",".join(map(str, payout_table(entrants * BUY_IN, places)))
        return f'{{{head},"type":"regular","buy_in":{BUY_IN},"fee":{FEE},"payouts":[{payouts}]}}'
    if type == "freeroll":
        payouts = ",".join(map(str, payout_table(FREEROLL_POOL, min(places, FREEROLL_POOL))))
        return (
            f'{{{head},"type":"freeroll","prize_pool":{FREEROLL_POOL},'
            f'"fpp_buy_in":{FPP_BUY_IN},"payouts":[{payouts}]}}'
        )
    if type == "satellite":
        return (
            f'{{{head},"type":"satellite","buy_in":{BUY_IN},"fee":{FEE},'
            f'"seat_value":{satellite_seat_value(entrants)}}}'
        )
    raise ValueError(f"unknown tournament type {type!r}")


def satellite_seat_value(entrants: int) -> int:
    """About one seat per 50 entrants, worth a little more than 50 buy-ins; in a smaller field
    3.5 seats' worth: its late stage then leaves as many players as whole seats, as a large
    field's does (a quarter of the pool left four players for four seats, a finished one)."""
    return 50 * BUY_IN + 3 * FEE if entrants >= 200 else entrants * BUY_IN * 2 // 7


def paid_places(type: str, entrants: int) -> int:
    if type == "satellite":
        pool, seat = entrants * BUY_IN, satellite_seat_value(entrants)
        return pool // seat + (1 if pool % seat else 0)
    places = max(3, entrants * PAID_SHARE // 100)
    return min(places, FREEROLL_POOL) if type == "freeroll" else places


def eliminated_for(type: str, stage: str, entrants: int) -> int:
    """How many players are out, for `stage` under the default policy (5 % and 25 %)."""
    places = paid_places(type, entrants)
    if stage == "pre":
        return 0
    if stage == "early":
        return entrants // 10
    if stage == "middle":
        return min(entrants * 2 // 5, entrants - places - 1)
    if stage == "late":
        # Two thirds of the paid places still to play for (a satellite: the seats alone).
        left = places - 1 if type == "satellite" else max(1, places * 2 // 3)
        return entrants - left
    raise ValueError(f"unknown stage {stage!r}")


def players_json(entrants: int, eliminated: int, seed: int) -> str:
    rng = random.Random(seed)
    stacks = [rng.randint(1, 400) * 500 for _ in range(entrants - eliminated)]
    stacks += [0] * eliminated
    numbers = list(range(entrants))
    rng.shuffle(numbers)
    return ",".join(
        f'{{"id":"player-{n:07d}","chips":{c}}}' for n, c in zip(numbers, stacks, strict=True)
    )


def snapshot_text(
    *,
    tournament_id: str,
    type: str = "regular",
    stage: str = "middle",
    entrants: int = 300_000,
    seed: int = 0,
    tournament: str | None = None,
    eliminated: int | None = None,
) -> str:
    """A crash-snapshot/1 document as text. `tournament` and `eliminated` override the
    generated tournament object and the stage's number of eliminated players."""
    if tournament is None:
        tournament = tournament_json(tournament_id, type, entrants, started=stage != "pre")
    if eliminated is None:
        eliminated = eliminated_for(type, stage, entrants)
    players = players_json(entrants, eliminated, seed)
    return (
        f'{{"format":"crash-snapshot/1","tournament":{tournament},'
        f'"crashed_at":"2026-11-30T20:14:05Z","players":[{players}]}}'
    )


def outage_snapshots(
    prefix: str, tournaments: int, *, entrants: int, mix
) -> list[tuple[str, bytes]]:
    """One outage's snapshots as (name, bytes): tournament ``{prefix}T0000`` onwards, its type
    and stage taken from ``mix`` in turn, each its own seed."""
    named = []
    for n in range(tournaments):
        name = f"{prefix}T{n:04d}"
        type_, stage = mix[n % len(mix)]
        text = snapshot_text(tournament_id=name, type=type_, stage=stage, entrants=entrants, seed=n)
        named.append((name, text.encode()))
    return named


def write_snapshot(path: Path, **kwargs) -> int:
    """Write `snapshot_text(**kwargs)` to `path`; returns its size in bytes."""
    data = snapshot_text(**kwargs).encode()
    path.write_bytes(data)
    return len(data)


def rebuy_text(v1: str, entrants: int) -> str:
    """The crash-snapshot/2 twin of a regular tournament's version 1 snapshot text: the same
    players, chips and stage, where every third player bought a second entry, every tenth an
    add-on, every entry put ENTRY_BOUNTY on its player's head, and each player still in holds
    the bounty of each of their entries; the payouts are worked out from those entries."""
    document = json.loads(v1)
    players = document["players"]
    entries = add_ons = 0
    for n, player in enumerate(players):
        if n % 3 == 0:
            player["entries"] = 2
        if n % 10 == 0:
            player["add_ons"] = 1
        if player["chips"]:
            player["bounty"] = ENTRY_BOUNTY * player.get("entries", 1)
        entries += player.get("entries", 1)
        add_ons += player.get("add_ons", 0)
    t = document["tournament"]
    t.update(entry_bounty=ENTRY_BOUNTY, add_on=ADD_ON)
    places = max(3, entrants * PAID_SHARE // 100)
    t["payouts"] = payout_table(entries * BUY_IN + add_ons * ADD_ON, places)
    document["format"] = "crash-snapshot/2"
    return json.dumps(document, separators=(",", ":"))
