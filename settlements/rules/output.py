"""A settlement's payout rows and lines, built from its columns of amounts.

The engine computes every column in the snapshot's order of players; the output lists players
by id. Sorting the ids once and reading every column through that permutation keeps the
per-player work at C speed (``map``, ``compress``, slice assignment): no Python loop runs per
player here.
"""

from itertools import compress, repeat
from operator import add, or_

import msgspec

from .settlement import Line, PayoutRow

# The columns of amounts in the order a player's lines are listed:
# (column, line kind, unit, source, payout row field).
COLUMNS = (
    ("refund_buy_in", "refund_buy_in", "cash", "pool", "cash"),
    ("refund_fee", "refund_fee", "cash", "house", "cash"),
    ("refund_bounty", "refund_bounty", "cash", "house", "cash"),
    ("refund_fpp", "refund_fpp", "fpp", "house", "fpp"),
    ("prize_cash", "prize", "cash", "pool", "cash"),
    ("prize_tdollars", "prize", "tdollars", "pool", "tdollars"),
    ("ticket", "ticket", "tickets", "pool", "tickets"),
    ("bounty", "bounty", "cash", "bounty", "cash"),
)
FIELDS = ("cash", "tdollars", "tickets", "fpp")


def output(
    columns: dict[str, list[int]], ids: list[str], seat_value: int
) -> tuple[list[PayoutRow], list[Line], int, list[int]]:
    """Payout rows and lines (players in id order), the part of P they pay out, and the
    position in `ids` of each row's player. Every column is aligned with `ids`; every amount
    is >= 0."""
    active = [
        (kind, unit, source, field, columns[name])
        for name, kind, unit, source, field in COLUMNS
        if name in columns and any(columns[name])
    ]
    if not active:
        return [], [], 0, []
    order = sorted(range(len(ids)), key=ids.__getitem__)
    players = _in_order(ids, order)
    active = [(*spec, _permuted(column, order)) for *spec, column in active]
    totals = {}
    for field in FIELDS:
        summed = [column for _, _, _, f, column in active if f == field]
        if summed:
            totals[field] = _combined(add, summed)
    rows = map(PayoutRow, players, *(totals.get(f, repeat(0)) for f in FIELDS))
    paid = list(totals.values())
    anything = _combined(or_, paid)  # non-zero where a player is paid anything
    someone_unpaid = 0 in anything
    payouts = list(compress(rows, anything) if someone_unpaid else rows)
    distributed = sum(
        sum(column) * (seat_value if kind == "ticket" else 1)
        for kind, _, source, _, column in active
        if source == "pool"
    )
    positions = list(compress(order, anything)) if someone_unpaid else order
    return payouts, _lines(players, active), distributed, positions


def line_totals(columns: dict[str, list[int]]) -> dict[str, dict[str, int]]:
    """{unit: {source: amount}} of the lines `columns` make, a column summed at a time (every
    amount is >= 0, so a unit and source with no line have no entry)."""
    totals: dict[str, dict[str, int]] = {}
    for name, _, unit, source, _ in COLUMNS:
        if amount := sum(columns.get(name, ())):
            by_source = totals.setdefault(unit, {})
            by_source[source] = by_source.get(source, 0) + amount
    return totals


def _in_order(ids: list[str], order: list[int]) -> list[str]:
    """The ids along `order`, as new strings laid out in that order.

    The decoded ids lie in memory in the snapshot's order; read in id order, as building the
    rows and lines and encoding them does, nearly every one misses the processor's caches.
    Copies made in id order (msgspec's round trip is the fastest copy) are read in sequence,
    which makes building and encoding 300,000 rows two to three times faster.
    """
    ordered = list(map(ids.__getitem__, order))
    try:
        return msgspec.json.decode(msgspec.json.encode(ordered))
    except UnicodeEncodeError:  # a lone surrogate (not UTF-8) in an id: keep the originals
        return ordered


def _permuted(column: list[int], order: list[int]) -> list[int]:
    """The column along `order`, every equal amount one and the same int object.

    An amount decoded from the snapshot (a bounty) or computed per player is an object of its
    own, lying in memory in the snapshot's order; read in id order, by the rows, the lines and
    the encoder, each would miss the caches. Amounts repeat (a tournament's bounties are
    multiples of one entry bounty, a split pays equal chips alike), so once shared they stay
    in the caches whatever the order.
    """
    share = {}.setdefault
    # List comprehensions: on Python 3.13 they read a list by index and call a bound method
    # about twice as fast as map() does.
    column = [share(amount, amount) for amount in column]  # in the snapshot's order
    return [column[i] for i in order]


def _lines(players: list[str], active: list) -> list[Line]:
    """Each column's lines, interleaved player by player in the order of COLUMNS, without the
    zero amounts."""
    by_column = [
        map(Line, players, repeat(kind), repeat(unit), column, repeat(source))
        for kind, unit, source, _, column in active
    ]
    if len(by_column) == 1:
        lines, amounts = list(by_column[0]), active[0][-1]
    else:
        step = len(by_column)
        lines, amounts = [None] * (step * len(players)), [0] * (step * len(players))
        for k, (made, spec) in enumerate(zip(by_column, active, strict=True)):
            lines[k::step], amounts[k::step] = made, spec[-1]
    return list(compress(lines, amounts)) if 0 in amounts else lines


def _combined(op, columns: list[list[int]]) -> list[int]:
    """`op` applied player by player across the columns."""
    combined = columns[0]
    for column in columns[1:]:
        combined = list(map(op, combined, column))
    return combined
