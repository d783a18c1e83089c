"""RULES.md §8's validation: rebuys and re-entries, add-ons and knock-out bounties of a
crash-snapshot/2 document, checked on the document as decoded (absent fields are UNSET)."""

from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, not_

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
        return cls(*(list(map(attrgetter(name), players)) for name in PLAYER_V2_FIELDS))

    def compressed(self, selectors: list) -> "EntryColumns":
        """The columns of the players whose selector is true (at C speed)."""
        return EntryColumns(*(list(compress(column, selectors)) for column in self.columns()))

    def columns(self) -> tuple[list[int], list[int], list[int]]:
        return self.entries, self.add_ons, self.heads


@dataclass(frozen=True, slots=True)
class GivenColumns:
    """The three §8 player fields of a version 2 document's rows, read once: as given (UNSET
    where absent; None for a document known to give exactly the fields that differ from their
    defaults, never a freeroll's) and with their defaults; ``given`` counts the fields present."""

    raw: tuple[list, list, list] | None
    defaulted: EntryColumns
    given: int

    @classmethod
    def of(cls, players: list) -> "GivenColumns":
        raw = tuple(list(map(attrgetter(name), players)) for name in PLAYER_V2_FIELDS)
        absent = [column.count(UNSET) for column in raw]
        # {UNSET: default}.get(v, v) is the default for an absent field and v otherwise, at C
        # speed.
        defaulted = (
            column if not missing else list(map({UNSET: default}.get, column, column))
            for column, missing, default in zip(raw, absent, (1, 0, 0), strict=True)
        )
        return cls(raw, EntryColumns(*defaulted), 3 * len(players) - sum(absent))


_NO_FREEROLL = {
    "entries": "a freeroll sells no rebuys or re-entries; leave it out",
    "add_ons": "a freeroll sells no add-ons; leave it out",
    "bounty": "a freeroll puts no bounty on players; leave it out",
}


def entry_problems(
    problems: list[Problem], players: list, columns: GivenColumns, t, *, freeroll: bool
) -> tuple:
    """RULES.md §8's validation of a version 2 document's rebuys, add-ons and bounties.
    Returns what makes the pool beside the buy-in: (Σ e_i, Σ a_i·A)."""
    if freeroll:
        for (name, message), raw in zip(_NO_FREEROLL.items(), columns.raw, strict=True):
            given = [i for i, value in enumerate(raw) if value is not UNSET]
            report(problems, given, lambda i, name=name: f"players[{i}].{name}", message, "players")
        return len(players), 0
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
        return len(players), 0
    if t.add_on is UNSET and t.add_on_fee is UNSET and max(add_ons, default=0) > 0:
        report(
            problems,
            [i for i, count in enumerate(add_ons) if count],
            lambda i: f"players[{i}].add_ons",
            "is more than 0, but the tournament sells no add-ons (tournament.add_on is absent)",
            "players",
        )
    _bounty_problems(problems, players, heads, bounty)
    total_entries = sum(entries)
    if bounty and sum(heads) > bounty * total_entries:
        problems.append(
            Problem(
                "players",
                f"the bounties on heads add up to {sum(heads)}, more than the {total_entries} "
                f"entries paid for bounties ({total_entries} × {bounty} = "
                f"{total_entries * bounty})",
            )
        )
    # Fees and bounty refunds are paid by the house, not from the pool; they must still fit.
    house = total_entries * (t.fee + bounty) + sum(add_ons) * add_on_fee
    if amounts_ok and house > MAX_AMOUNT:
        problems.append(Problem("players", f"the entries' fees and bounties exceed {MAX_AMOUNT}"))
    return total_entries, (sum(add_ons) * add_on if amounts_ok else 0)


def _counts_in_range(problems: list[Problem], name: str, values: list[int], *, low: int) -> bool:
    if not values or (low <= min(values) and max(values) <= MAX_AMOUNT):
        return True
    report(
        problems,
        [i for i, value in enumerate(values) if not low <= value <= MAX_AMOUNT],
        lambda i: f"players[{i}].{name}",
        f"must be an integer >= {low} (and at most {MAX_AMOUNT})",
        "players",
    )
    return False


def _bounty_problems(problems: list[Problem], players, heads: list[int], bounty: int) -> None:
    """h_i > 0 only with K > 0; 0 for an eliminated player; at least K for one still in."""
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
    chips = [p.chips for p in players]
    if any(compress(heads, map(not_, chips))):
        report(
            problems,
            [i for i, (c, head) in enumerate(zip(chips, heads, strict=True)) if head and not c],
            lambda i: f"players[{i}].bounty",
            "must be 0 for an eliminated player: their bounty went to whoever knocked them out",
            "players",
        )
    if min(compress(heads, chips), default=bounty) < bounty:
        report(
            problems,
            [i for i, (c, h) in enumerate(zip(chips, heads, strict=True)) if c > 0 and h < bounty],
            lambda i: f"players[{i}].bounty",
            f"must be at least the entry bounty {bounty} for a player still in",
            "players",
        )
