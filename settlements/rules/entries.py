"""RULES.md §8's validation: rebuys and re-entries, add-ons and knock-out bounties of a
crash-snapshot/2 document, checked on the document as decoded (absent fields are UNSET)."""

from dataclasses import dataclass
from itertools import compress

from msgspec import UNSET

from .checks import MAX_AMOUNT, check_amount, report
from .errors import Problem

PLAYER_V2_FIELDS = ("entries", "add_ons", "bounty")
TOURNAMENT_V2_FIELDS = ("entry_bounty", "add_on", "add_on_fee")


@dataclass(frozen=True, slots=True)
class EntryColumns:
    """e_i, a_i and h_i of RULES.md §8, one list each, aligned with a list of players."""

    entries: list[int]
    add_ons: list[int]
    heads: list[int]

    @classmethod
    def of(cls, players: list) -> "EntryColumns":
        """The columns of players that have their defaults (public players, not the document's
        rows)."""
        return cls(*_read_columns(players))

    def compressed(self, selectors: list) -> "EntryColumns":
        """The columns of the players whose selector is true (at C speed)."""
        return EntryColumns(*(list(compress(column, selectors)) for column in self.columns()))

    def columns(self) -> tuple[list[int], list[int], list[int]]:
        return self.entries, self.add_ons, self.heads


@dataclass(frozen=True, slots=True)
class GivenColumns:
    """The three §8 player fields of a version 2 document's rows, read once: as given (UNSET
    where absent; None where the rows were decoded with their defaults, never a freeroll's) and
    with their defaults; ``given`` counts the fields present."""

    raw: tuple[list, list, list] | None
    defaulted: EntryColumns
    given: int

    @classmethod
    def of(cls, players: list) -> "GivenColumns":
        raw = _read_columns(players)
        absent = [column.count(UNSET) for column in raw]
        # {UNSET: default}.get(v, v) is the default for an absent field and v otherwise, at C
        # speed.
        defaulted = (
            column if not missing else list(map({UNSET: default}.get, column, column))
            for column, missing, default in zip(raw, absent, (1, 0, 0), strict=True)
        )
        return cls(raw, EntryColumns(*defaulted), 3 * len(players) - sum(absent))


def fields_given(rows: list) -> int:
    """How many of the §8 player fields a version 2 document's rows give (UNSET where
    absent)."""
    return 3 * len(rows) - sum(column.count(UNSET) for column in _read_columns(rows))


def _read_columns(players: list) -> tuple[list, list, list]:
    """The players' entries, add_ons and bounty, a list each. List comprehensions rather than
    map(attrgetter(...)): Python 3.13 reads a struct's field inline, three times faster."""
    return (
        [p.entries for p in players],
        [p.add_ons for p in players],
        [p.bounty for p in players],
    )


_NO_FREEROLL = {
    "entries": "a freeroll sells no rebuys or re-entries; leave it out",
    "add_ons": "a freeroll sells no add-ons; leave it out",
    "bounty": "a freeroll puts no bounty on players; leave it out",
}


def entry_problems(
    problems: list[Problem], chips: list[int], columns: GivenColumns, t, *, freeroll: bool
) -> tuple:
    """RULES.md §8's validation of a version 2 document's rebuys, add-ons and bounties (`chips`
    of its players, as given). Returns what makes the pool beside the buy-in: (Σ e_i, Σ a_i·A).
    """
    if freeroll:
        for (name, message), raw in zip(_NO_FREEROLL.items(), columns.raw, strict=True):
            given = [i for i, value in enumerate(raw) if value is not UNSET]
            report(problems, given, lambda i, name=name: f"players[{i}].{name}", message, "players")
        return len(chips), 0
    bounty, add_on, add_on_fee = (
        0 if value is UNSET else value for value in (t.entry_bounty, t.add_on, t.add_on_fee)
    )
    amounts_ok = all(
        check_amount(problems, name, value, positive=False)
        for name, value in zip(TOURNAMENT_V2_FIELDS, (bounty, add_on, add_on_fee), strict=True)
    )
    entries, add_ons, heads = columns.defaulted.columns()
    counts_ok = _counts_in_range(problems, "entries", entries, low=1)
    counts_ok &= _counts_in_range(problems, "add_ons", add_ons, low=0)
    counts_ok &= _counts_in_range(problems, "bounty", heads, low=0)
    if not counts_ok:
        return len(chips), 0
    if t.add_on is UNSET and t.add_on_fee is UNSET and max(add_ons, default=0) > 0:
        report(
            problems,
            [i for i, count in enumerate(add_ons) if count],
            lambda i: f"players[{i}].add_ons",
            "is more than 0, but the tournament sells no add-ons (tournament.add_on is absent)",
            "players",
        )
    on_heads = sum(heads)
    _bounty_problems(problems, chips, heads, on_heads, bounty)
    total_entries, total_add_ons = sum(entries), sum(add_ons)
    if bounty and on_heads > bounty * total_entries:
        problems.append(
            Problem(
                "players",
                f"the bounties the players carry add up to {on_heads}, more than the "
                f"{total_entries} entries paid for bounties ({total_entries} × {bounty} = "
                f"{total_entries * bounty})",
            )
        )
    # Fees and bounty refunds are paid by the house, not from the pool; they must still fit.
    house = total_entries * (t.fee + bounty) + total_add_ons * add_on_fee
    if amounts_ok and house > MAX_AMOUNT:
        problems.append(Problem("players", f"the entries' fees and bounties exceed {MAX_AMOUNT}"))
    return total_entries, (total_add_ons * add_on if amounts_ok else 0)


def _counts_in_range(problems: list[Problem], name: str, values: list[int], *, low: int) -> bool:
    # The few distinct counts, rather than min() and max() over every player: one pass, and
    # hashing a small int is cheaper than comparing it.
    distinct = set(values)
    if not values or (low <= min(distinct) and max(distinct) <= MAX_AMOUNT):
        return True
    report(
        problems,
        [i for i, value in enumerate(values) if not low <= value <= MAX_AMOUNT],
        lambda i: f"players[{i}].{name}",
        f"must be an integer >= {low} (and at most {MAX_AMOUNT})",
        "players",
    )
    return False


def _bounty_problems(
    problems: list[Problem], chips: list[int], heads: list[int], on_heads: int, bounty: int
) -> None:
    """h_i > 0 only with K > 0; 0 for an eliminated player; at least K for one still in.
    Every h_i is >= 0 here, and `on_heads` is their sum."""
    if not bounty:
        if any(heads):
            report(
                problems,
                [i for i, head in enumerate(heads) if head],
                lambda i: f"players[{i}].bounty",
                "is more than 0, but the tournament puts no bounty on entries "
                "(tournament.entry_bounty is absent or 0)",
                "players",
            )
        return
    # Checked at C speed first; the offending rows are only looked for when there are some.
    # No h_i is negative, so the eliminated players' are all 0 exactly when the players still
    # in hold every bounty.
    still_in = list(compress(heads, chips))
    if sum(still_in) != on_heads:
        report(
            problems,
            [i for i, (c, head) in enumerate(zip(chips, heads, strict=True)) if head and not c],
            lambda i: f"players[{i}].bounty",
            "must be 0 for an eliminated player: their bounty went to whoever knocked them out",
            "players",
        )
    if min(still_in, default=bounty) < bounty:
        report(
            problems,
            [i for i, (c, h) in enumerate(zip(chips, heads, strict=True)) if c > 0 and h < bounty],
            lambda i: f"players[{i}].bounty",
            f"must be at least the entry bounty {bounty} for a player still in",
            "players",
        )
