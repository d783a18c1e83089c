"""The crash snapshot (SNAPSHOT.md) and the validation rules of RULES.md §1.

Parsing happens in two steps. msgspec decodes the document into typed structs; it is strict
(no booleans or decimals for integers, no null for absent fields, unknown keys rejected) and
decodes a 300,000-player snapshot in a few tens of milliseconds. Then the rules that need more
than one field (payouts summing to the pool, unique player ids, …) are checked in Python and
every problem found is reported, not just the first.
"""

import codecs
import dataclasses
import re
from typing import ClassVar, NoReturn

# msgspec, not pydantic: strict typed decoding out of the box, tagged unions on tournament.type
# so a field of another type is an unknown field at its own path, forbid_unknown_fields, and the
# speed to decode 300,000 players well inside the command's time budget.
import msgspec
from msgspec import UNSET, UnsetType

from .checks import LIST_LIMIT, MAX_AMOUNT, MAX_CHIPS, check_amount, is_rfc3339, report
from .entries import (
    PLAYER_V2_FIELDS,
    TOURNAMENT_V2_FIELDS,
    EntryColumns,
    GivenColumns,
    entry_problems,
    fields_given,
)
from .errors import InvalidInput, Problem
from .jsondoc import (
    duplicate_key_problems,
    format_problems,
    problem_from_validation,
    problems_from_decode_error,
    read_leniently,
    summarised,
)

FORMAT = "crash-snapshot/1"
# Version 2 adds rebuys, re-entries, add-ons and knock-out bounties (RULES.md §8).
FORMAT_V2 = "crash-snapshot/2"
FORMATS = (FORMAT, FORMAT_V2)
TYPES = ("regular", "freeroll", "satellite")

# --- Public types -----------------------------------------------------------------------------


class Player(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """An entrant of a version 1 snapshot: one entry, no add-on, no bounty (§8's defaults).

    The defaults are class attributes rather than fields so that version 1 still refuses the
    version 2 keys as unknown, and its 300,000-player documents decode exactly as before."""

    id: str
    chips: int
    entries: ClassVar[int] = 1
    add_ons: ClassVar[int] = 0
    bounty: ClassVar[int] = 0


class PlayerV2(Player, frozen=True, gc=False, forbid_unknown_fields=True):
    """An entrant of a version 2 snapshot (RULES.md §8)."""

    entries: int = 1  # e_i: the first entry plus every rebuy or re-entry
    add_ons: int = 0  # a_i
    bounty: int = 0  # h_i: the bounty on the player's head at the crash


class Tournament(msgspec.Struct, frozen=True, kw_only=True):
    type: ClassVar[str]
    id: str
    currency: str
    name: str = ""
    started: bool = True
    # RULES.md §9: whether registration was still open at the crash, and the rulebook and
    # start time that pick the version of the rules the desk applies (the engine itself
    # takes its policy as given).
    late_registration_open: bool = False
    rulebook: str | None = None
    starts_at: str | None = None


class RegularTournament(Tournament, frozen=True, kw_only=True):
    type: ClassVar[str] = "regular"
    buy_in: int
    fee: int
    payouts: list[int]
    guarantee: int = 0
    # RULES.md §8 (crash-snapshot/2 only): K, A and G, and whether add-ons were sold at all
    # (A or G given), since a free add-on is still an add-on.
    entry_bounty: int = 0
    add_on: int = 0
    add_on_fee: int = 0
    add_ons_sold: bool = False


class FreerollTournament(Tournament, frozen=True, kw_only=True):
    type: ClassVar[str] = "freeroll"
    prize_pool: int
    payouts: list[int]
    fpp_buy_in: int = 0


class SatelliteTournament(Tournament, frozen=True, kw_only=True):
    type: ClassVar[str] = "satellite"
    buy_in: int
    fee: int
    seat_value: int
    guarantee: int = 0
    entry_bounty: int = 0  # as for RegularTournament
    add_on: int = 0
    add_on_fee: int = 0
    add_ons_sold: bool = False


class Snapshot(msgspec.Struct, frozen=True, kw_only=True):
    format: str
    tournament: RegularTournament | FreerollTournament | SatelliteTournament
    players: list[Player]  # PlayerV2 rows when the document gave any of §8's player fields
    crashed_at: str | None = None
    # e_i, a_i and h_i of the players above, as parsing read them, so that settling 300,000
    # players need not read each of them again; None for version 1, and for a snapshot built
    # by hand (see terms.entry_columns).
    entry_columns: EntryColumns | None = None


# --- The document as decoded ------------------------------------------------------------------
# Optional fields decode to UNSET rather than to their defaults so that the keys actually
# present can be counted (see _may_repeat_keys); _publish() then fills in the defaults.


class _TournamentDoc(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, kw_only=True):
    id: str
    currency: str
    name: str | UnsetType = UNSET
    started: bool | UnsetType = UNSET
    late_registration_open: bool | UnsetType = UNSET
    rulebook: str | UnsetType = UNSET
    starts_at: str | UnsetType = UNSET


class _RegularDoc(_TournamentDoc, tag="regular"):
    buy_in: int
    fee: int
    payouts: list[int]
    guarantee: int | UnsetType = UNSET


class _FreerollDoc(_TournamentDoc, tag="freeroll"):
    prize_pool: int
    payouts: list[int]
    fpp_buy_in: int | UnsetType = UNSET


class _SatelliteDoc(_TournamentDoc, tag="satellite"):
    buy_in: int
    fee: int
    seat_value: int
    guarantee: int | UnsetType = UNSET


class _SnapshotDoc(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    format: str
    tournament: _RegularDoc | _FreerollDoc | _SatelliteDoc
    players: list[Player]
    crashed_at: str | UnsetType = UNSET


# Version 2: the fields of RULES.md §8. A freeroll takes none of them.


class _RegularDoc2(_RegularDoc, tag="regular"):
    entry_bounty: int | UnsetType = UNSET
    add_on: int | UnsetType = UNSET
    add_on_fee: int | UnsetType = UNSET


class _SatelliteDoc2(_SatelliteDoc, tag="satellite"):
    entry_bounty: int | UnsetType = UNSET
    add_on: int | UnsetType = UNSET
    add_on_fee: int | UnsetType = UNSET


class _PlayerDoc2(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    id: str
    chips: int
    entries: int | UnsetType = UNSET
    add_ons: int | UnsetType = UNSET
    bounty: int | UnsetType = UNSET


class _SnapshotDoc2(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    format: str
    tournament: _RegularDoc2 | _FreerollDoc | _SatelliteDoc2
    players: list[_PlayerDoc2]
    crashed_at: str | UnsetType = UNSET


class _SnapshotDoc2Defaulted(_SnapshotDoc2, kw_only=True):
    """Version 2 with its players decoded straight into PlayerV2, defaults filled in: what a
    valid document becomes without reading each player's fields twice. It cannot tell an
    absent field from one given with its default, so it serves only documents that leave
    defaults out (see _parse_defaulted); any other goes through _SnapshotDoc2."""

    players: list[PlayerV2]


class _TypeOnly(msgspec.Struct):
    class _Tag(msgspec.Struct):
        type: str = ""

    format: str = ""
    tournament: _Tag = msgspec.field(default_factory=_Tag)


SNAPSHOT_DECODER = msgspec.json.Decoder(_SnapshotDoc)
# The document's shape for those who describe it (the API's OpenAPI document); parsing checks
# more than the shape.
SnapshotDocument = _SnapshotDoc
SNAPSHOT_DECODER_V2 = msgspec.json.Decoder(_SnapshotDoc2)
_DECODER_V2_DEFAULTED = msgspec.json.Decoder(_SnapshotDoc2Defaulted)
_PUBLIC = {
    _RegularDoc: RegularTournament,
    _FreerollDoc: FreerollTournament,
    _SatelliteDoc: SatelliteTournament,
    _RegularDoc2: RegularTournament,
    _SatelliteDoc2: SatelliteTournament,
}
_FIELDS_BY_TYPE = {
    doc.__struct_config__.tag: set(doc.__struct_fields__)
    for doc in (_RegularDoc2, _FreerollDoc, _SatelliteDoc2)
}


# --- Parsing ----------------------------------------------------------------------------------


def parse_snapshot(data: bytes | str) -> Snapshot:
    """Decode and validate a snapshot document; raise InvalidInput listing every problem."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    # A byte-order mark is not JSON, but Windows tools add one; it carries no meaning.
    raw = raw.removeprefix(codecs.BOM_UTF8)
    doc = _decode(raw)
    if isinstance(doc, _SnapshotDoc2Defaulted):
        if (parsed := _parse_defaulted(raw, doc)) is not None:
            return parsed
        doc = SNAPSHOT_DECODER_V2.decode(raw)
    ids = [p.id for p in doc.players]
    columns = GivenColumns.of(doc.players) if isinstance(doc, _SnapshotDoc2) else None
    given = columns.given if columns is not None else 0
    if _may_repeat_keys(raw, doc, ids, given) and (repeated := duplicate_key_problems(raw)):
        raise InvalidInput(name_players(repeated, ids))
    if problems := _semantic_problems(doc, ids, columns):
        raise InvalidInput(name_players(problems, ids))
    return _publish(doc, ids, columns)


def _parse_defaulted(raw: bytes, doc: _SnapshotDoc2Defaulted) -> Snapshot | None:
    """The snapshot of a version 2 document without a repeated key; None for any other, which
    the exact path reads again (and for a freeroll, which refuses every §8 field given).

    A field that differs from its default was certainly given, so counting those gives a lower
    bound on the player keys present; if the colons then match (see _may_repeat_keys) every key
    is accounted for: no key is repeated and no default was written out (as the specification's
    examples leave them out). Only otherwise are the fields given counted exactly.
    """
    if isinstance(doc.tournament, _FreerollDoc):
        return None
    ids = [p.id for p in doc.players]
    own = EntryColumns.of(doc.players)
    given = 3 * len(ids) - sum(
        column.count(default) for column, default in zip(own.columns(), (1, 0, 0), strict=True)
    )
    if _may_repeat_keys(raw, doc, ids, given):
        given = fields_given(SNAPSHOT_DECODER_V2.decode(raw).players)
        if _may_repeat_keys(raw, doc, ids, given):
            return None
    if problems := _semantic_problems(doc, ids, GivenColumns(None, own, given)):
        raise InvalidInput(name_players(problems, ids))
    return _publish(doc, ids, None, own)


def _decode(raw: bytes) -> "_SnapshotDoc | _SnapshotDoc2":
    """The document decoded as version 1 if it fits, else as version 2.

    Version 1 first, so that its documents decode exactly as fast as before; a document that
    only fits version 2 but says it is version 1 is refused in version 1's words.
    """
    try:
        return SNAPSHOT_DECODER.decode(raw)
    except msgspec.ValidationError as error:  # a subclass of DecodeError, so caught first
        as_v1 = error
    except msgspec.DecodeError as error:
        raise InvalidInput(problems_from_decode_error(error, raw)) from None
    except RecursionError:
        raise InvalidInput.at("$", "is nested too deeply to be a snapshot") from None
    try:
        doc = _DECODER_V2_DEFAULTED.decode(raw)
    except msgspec.ValidationError:
        # The same types but for the players' defaults, so the same misfits; the error is
        # taken from the document's own types all the same.
        try:
            doc = SNAPSHOT_DECODER_V2.decode(raw)
        except msgspec.ValidationError as as_v2:
            _refuse(raw, as_v1, as_v2)
    if doc.format == FORMAT:
        _refuse(raw, as_v1, None)
    return doc


def _refuse(raw: bytes, as_v1, as_v2) -> NoReturn:
    # msgspec validates while it reads, so a broken document can fail on a field first;
    # broken JSON is the more useful thing to report.
    try:
        msgspec.json.decode(raw)
    except (msgspec.ValidationError, RecursionError):
        pass  # well-formed, or too deeply nested to tell: the field's problem stands
    except msgspec.DecodeError as syntax:
        raise InvalidInput(problems_from_decode_error(syntax, raw)) from None
    raise InvalidInput(_format_problems(raw, as_v1, as_v2)) from None


def _format_problems(raw: bytes, as_v1, as_v2) -> list[Problem]:
    """Every field of the wrong type, unknown or missing, not only the first one msgspec met
    (which is always among them, at the same path), against the version the document names."""
    hints = {
        "unknown_hint": lambda parent, field: _foreign_field_hint(raw, parent, field),
        "invalid_hint": _invalid_value_hint,
    }
    tree = read_leniently(raw)
    v2 = as_v2 is not None and isinstance(tree, dict) and tree.get("format") == FORMAT_V2
    first = problem_from_validation(as_v2 if v2 else as_v1, **hints)
    if tree is None:  # nested too deeply, or a number too long to read: msgspec's word stands
        return [first]
    problems = format_problems(tree, _SnapshotDoc2 if v2 else _SnapshotDoc, **hints)
    if all(problem.path != first.path for problem in problems):
        problems.insert(0, first)
    players = tree.get("players") if isinstance(tree, dict) else None
    ids = [
        row.get("id") if isinstance(row, dict) and isinstance(row.get("id"), str) else None
        for row in (players if isinstance(players, list) else [])
    ]
    return name_players(summarised(problems, LIST_LIMIT), ids)


_ROW = re.compile(r"players\[(?P<index>\d+)\]")


def name_players(problems: list[Problem], ids: list[str | None]) -> list[Problem]:
    """Each problem at `players[i]...` with the id of player i, where the document gives one."""
    named = []
    for problem in problems:
        row = _ROW.match(problem.path)
        index = int(row["index"]) if row else -1
        if 0 <= index < len(ids) and ids[index] is not None and problem.player is None:
            problem = dataclasses.replace(problem, player=ids[index])
        named.append(problem)
    return named


def _foreign_field_hint(raw: bytes, parent: str, field: str) -> str | None:
    on_player = _ROW.fullmatch(parent) is not None and field in PLAYER_V2_FIELDS
    if parent != "tournament" and not on_player:
        return None
    try:
        head = msgspec.json.decode(raw, type=_TypeOnly)
    except msgspec.MsgspecError:
        return None
    if field in PLAYER_V2_FIELDS + TOURNAMENT_V2_FIELDS and head.format != FORMAT_V2:
        return f"is not a known field of {FORMAT}; rebuys, add-ons and bounties need {FORMAT_V2}"
    if on_player:
        return None
    owners = [kind for kind, fields in _FIELDS_BY_TYPE.items() if field in fields]
    if not owners:
        return None
    return f"belongs to a {' or '.join(owners)} tournament, not to a {head.tournament.type} one"


def _invalid_value_hint(path: str) -> str | None:
    if path == "tournament.type":
        return "must be " + ", ".join(TYPES[:-1]) + " or " + TYPES[-1]
    return None


def _may_repeat_keys(
    raw: bytes, doc: "_SnapshotDoc | _SnapshotDoc2", ids: list[str], given: int
) -> bool:
    """Cheap test for duplicate keys, which msgspec silently collapses; `given` counts the §8
    player fields decoded.

    Every key is followed by exactly one colon, and the only other colons in valid JSON are
    inside strings. After a successful decode every key is a known field, so the document has a
    repeated key exactly when it holds more colons than the keys decoded plus the colons inside
    decoded strings. A colon written as a \\u escape breaks that count, hence the exact check.
    """
    if b"\\u003a" in raw or b"\\u003A" in raw:
        return True
    tournament = doc.tournament
    keys = 3 + (doc.crashed_at is not UNSET) + 1  # format, tournament, players; type
    keys += sum(getattr(tournament, f) is not UNSET for f in tournament.__struct_fields__)
    keys += 2 * len(doc.players) + given
    strings = [doc.format, tournament.id, tournament.currency, "".join(ids)]
    strings += [
        s
        for s in (tournament.name, doc.crashed_at, tournament.rulebook, tournament.starts_at)
        if s is not UNSET
    ]
    return raw.count(b":") != keys + sum(s.count(":") for s in strings)


def _publish(
    doc: "_SnapshotDoc | _SnapshotDoc2",
    ids: list[str],
    columns: GivenColumns | None,
    own: EntryColumns | None = None,
) -> Snapshot:
    """The public snapshot: `own` gives the columns of players decoded as PlayerV2 already,
    `columns` those of players still to be built from the document's rows."""
    t = doc.tournament
    fields = {k: v for k, v in msgspec.structs.asdict(t).items() if v is not UNSET}
    if isinstance(t, _RegularDoc2 | _SatelliteDoc2):
        fields["add_ons_sold"] = t.add_on is not UNSET or t.add_on_fee is not UNSET
    players = doc.players
    if columns is not None:
        chips = [p.chips for p in players]
        own = columns.defaulted
        players = list(map(PlayerV2, ids, chips, *own.columns()))
    return Snapshot(
        format=doc.format,
        tournament=_PUBLIC[type(t)](**fields),
        players=players,
        crashed_at=None if doc.crashed_at is UNSET else doc.crashed_at,
        entry_columns=own,
    )


# --- Validation (RULES.md §1) -----------------------------------------------------------------

_CURRENCY = re.compile(r"[A-Z]{3}")
_RULEBOOK_KEY = re.compile(r"[a-z0-9-]{1,64}")


def _semantic_problems(
    doc: "_SnapshotDoc | _SnapshotDoc2", ids: list[str], columns: GivenColumns | None
) -> list[Problem]:
    problems: list[Problem] = []
    _document_problems(problems, doc)
    chips = [p.chips for p in doc.players]
    _player_problems(problems, chips, ids)
    t = doc.tournament
    entries, add_on_money = len(chips), 0
    if columns is not None:
        entries, add_on_money = entry_problems(
            problems, chips, columns, t, freeroll=isinstance(t, _FreerollDoc)
        )
    pool = _pool_problems(problems, t, entries, add_on_money)
    if isinstance(t, _SatelliteDoc):
        seat_ok = check_amount(problems, "seat_value", t.seat_value, positive=True)
        if seat_ok and pool is not None and pool < t.seat_value:
            problems.append(
                Problem(
                    "tournament.seat_value",
                    f"is more than the prize pool {pool}: the satellite awards no seat",
                )
            )
    else:
        _payout_problems(problems, t.payouts, pool)
    return problems


def _document_problems(problems: list[Problem], doc: _SnapshotDoc) -> None:
    """The format, the tournament's id and currency, and the time of the crash."""
    t = doc.tournament
    if doc.format not in FORMATS:
        problems.append(
            Problem("format", f"must be {FORMAT!r} or {FORMAT_V2!r}, not {doc.format!r}")
        )
    if not t.id:
        problems.append(Problem("tournament.id", "must not be empty"))
    if not _CURRENCY.fullmatch(t.currency):
        problems.append(
            Problem("tournament.currency", "must be an ISO 4217 code of 3 capital letters")
        )
    if doc.crashed_at is not UNSET and not is_rfc3339(doc.crashed_at):
        problems.append(
            Problem("crashed_at", "must be an RFC 3339 time such as 2026-11-30T20:14:05Z")
        )
    if t.starts_at is not UNSET and not is_rfc3339(t.starts_at):
        problems.append(
            Problem("tournament.starts_at", "must be an RFC 3339 time such as 2026-11-30T20:00:00Z")
        )
    if t.rulebook is not UNSET and not _RULEBOOK_KEY.fullmatch(t.rulebook):
        problems.append(
            Problem(
                "tournament.rulebook",
                "must be 1 to 64 characters: lower-case letters, digits and '-'",
            )
        )


def _player_problems(problems: list[Problem], chips: list[int], ids: list[str]) -> None:
    """Chips out of range, empty or repeated ids, too few entrants, nobody with chips."""
    entrants = len(chips)
    chips_ok = True
    if chips and (min(chips) < 0 or max(chips) > MAX_CHIPS):
        chips_ok = False
        bad = [i for i, c in enumerate(chips) if not 0 <= c <= MAX_CHIPS]
        report(
            problems,
            bad,
            lambda i: f"players[{i}].chips",
            f"must be an integer >= 0 (and at most {MAX_CHIPS})",
            "players",
        )
    if "" in ids:
        empty = [i for i, player_id in enumerate(ids) if not player_id]
        report(problems, empty, lambda i: f"players[{i}].id", "must not be empty", "players")
    if len(set(ids)) != entrants:
        _repeated_id_problems(problems, ids)
    if entrants < 2:
        problems.append(Problem("players", f"must list at least 2 entrants, not {entrants}"))
    elif chips_ok and not any(chips):  # stops at the first player with chips
        problems.append(Problem("players", "at least one player must still have chips"))


def _repeated_id_problems(problems: list[Problem], ids: list[str]) -> None:
    first_at: dict[str, int] = {}
    repeated = []
    for i, player_id in enumerate(ids):
        if player_id in first_at and player_id:
            repeated.append(i)
        first_at.setdefault(player_id, i)
    for i in repeated[:LIST_LIMIT]:
        problems.append(
            Problem(
                f"players[{i}].id",
                f"repeats the id “{ids[i]}” of players[{first_at[ids[i]]}]; ids must be unique",
            )
        )
    if len(repeated) > LIST_LIMIT:
        rest = len(repeated) - LIST_LIMIT
        problems.append(Problem("players", f"{rest} more repeat the id of an earlier player"))


def _pool_problems(problems: list[Problem], t, entries: int, add_on_money: int) -> int | None:
    """The amounts that make the prize pool, from every entry and add-on sold; the pool, or
    None when an amount is wrong."""
    amounts_ok = True
    if isinstance(t, _RegularDoc | _SatelliteDoc):
        amounts_ok &= check_amount(problems, "buy_in", t.buy_in, positive=False)
        amounts_ok &= check_amount(problems, "fee", t.fee, positive=False)
        if t.guarantee is not UNSET:
            amounts_ok &= check_amount(problems, "guarantee", t.guarantee, positive=False)
        pool = max(entries * t.buy_in + add_on_money, 0 if t.guarantee is UNSET else t.guarantee)
        if amounts_ok and pool > MAX_AMOUNT:
            amounts_ok = False
            problems.append(
                Problem(
                    "tournament.buy_in",
                    f"makes a prize pool of {pool} ({entries} entries), above {MAX_AMOUNT}",
                )
            )
    else:
        if t.fpp_buy_in is not UNSET:
            check_amount(problems, "fpp_buy_in", t.fpp_buy_in, positive=False)
        amounts_ok &= check_amount(problems, "prize_pool", t.prize_pool, positive=True)
        pool = t.prize_pool
    return pool if amounts_ok else None


def _payout_problems(problems: list[Problem], payouts: list[int], pool: int | None) -> None:
    if not payouts:
        problems.append(Problem("tournament.payouts", "must list the prize of at least one place"))
        return
    bad = [k for k, prize in enumerate(payouts) if not 0 < prize <= MAX_AMOUNT]
    report(
        problems,
        bad,
        lambda k: f"tournament.payouts[{k}]",
        f"must be an integer > 0 and at most {MAX_AMOUNT}",
        "tournament.payouts",
    )
    rising = [k for k in range(1, len(payouts)) if payouts[k] > payouts[k - 1]]
    report(
        problems,
        rising,
        lambda k: f"tournament.payouts[{k}]",
        "is more than the prize of the place before it; payouts must not increase",
        "tournament.payouts",
    )
    total = sum(payouts)
    if pool is not None and total != pool:
        problems.append(
            Problem("tournament.payouts", f"must sum to the prize pool {pool}, not {total}")
        )
