"""Satellites: the late-stage position values of RULES.md §3 and the ticket rule of §5."""

from .formulas import places_by_chips, split, tie_break_order, tie_groups
from .split_result import Split


def pay_as_seat(value: int, seat_value: int) -> tuple[int, int]:
    """§5: (tickets, T$) for a rounded prize value: one seat at most, the rest in T$."""
    if value >= seat_value:
        return 1, value - seat_value
    return 0, value


def pay_as_seats(values: list[int], seat_value: int) -> tuple[list[int], list[int]]:
    """pay_as_seat for every value at once: the tickets column and the T$ column."""
    tickets = [1 if value >= seat_value else 0 for value in values]
    tdollars = [value - seat_value * t for value, t in zip(values, tickets, strict=True)]
    return tickets, tdollars


def position_value(position: int, *, seat_value: int, seats: int, remainder: int) -> int:
    """Value of finishing position k: a seat for k ≤ S, the cash remainder at S+1, else 0."""
    if position <= seats:
        return seat_value
    if position == seats + 1:
        return remainder
    return 0


def rank_values(
    chips: list[int],
    ids: list[str],
    *,
    seat_value: int,
    seats: int,
    remainder: int,
    ids_sorted: bool = False,
) -> tuple[list[int], list[tuple[list[int], Split]], list[tuple[int, int]]]:
    """Each remaining player's value by chip rank, ties sharing their positions' total.

    Returns the values aligned with the players passed in; for every group of tied players
    the indices of its members with the even split (§4 rounding) that shared its total; and
    each player's places, (first, last) of their tie group.
    """
    values = [0] * len(chips)
    shared: list[tuple[list[int], Split]] = []
    order = tie_break_order(chips, ids, ids_sorted=ids_sorted)
    groups = tie_groups(chips, order)
    for start, size in groups:
        members = order[start : start + size]
        total = sum(
            position_value(k, seat_value=seat_value, seats=seats, remainder=remainder)
            for k in range(start + 1, start + size + 1)
        )
        if size == 1:
            values[members[0]] = total
        else:
            even = split(
                total,
                [chips[i] for i in members],
                [ids[i] for i in members],
                formula="even",
                ids_sorted=True,  # tied players come in id order along `order`
            )
            for i, amount in zip(members, even.amounts, strict=True):
                values[i] = amount
            shared.append((members, even))
    return values, shared, places_by_chips(order, groups)
