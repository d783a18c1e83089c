"""Player ids are what they look like: checks for every id that arrives, in a snapshot or typed.

An id is shown on every page and in every ledger, and people tell players apart by reading
it. So an id may not hold control or invisible format characters (Unicode categories Cc and
Cf: a zero-width space, a soft hyphen, a right-to-left override), nor lone surrogates, and it
must be in Unicode's composed normal form (NFC): otherwise ``alice`` and ``alice`` + U+200B,
or ``é`` written in one or two code points, would be different players that look the same.

Two ids of one snapshot (or one typed list) may not be confusable either: ``alice`` and
``аlice`` with a Cyrillic а, or ``player1`` and ``playerl``. Confusable means having the same
skeleton in the sense of Unicode's UTS #39: decompose (NFD), replace every character by the
prototype of its confusable class, decompose again.

The classes come from Unicode's confusables table as confusable-homoglyphs ships it. That
package keeps each source -> prototype pair of the table in both directions; a source's entry
holds only its prototype, while a prototype's entry holds all its sources, which is how the
direction is told apart. A prototype with a single source is stored the same way as its source,
so both are mapped to the smaller of the two: the pair still shares one skeleton, which is all
the comparison needs. (The table marks right-to-left characters with U+200E for display;
those marks are not part of the characters and are dropped.)

Pure Python with no Django, like the rules engine; but the engine validates snapshots exactly
as the specification says, so these stricter checks run where ids enter the desk.

Where an id is shown, its escaped form (every character outside printable ASCII written as its
code point) stands beside it when the two differ, so an id that slipped in before these checks,
or is typed in a search, still shows what it is made of.
"""

import unicodedata
from collections.abc import Sequence

from confusable_homoglyphs.confusables import confusables_data

REFUSED_CATEGORIES = {"Cc": "control", "Cf": "invisible formatting", "Cs": "surrogate"}
# How many look-alike pairs one refusal lists before summarising the rest.
LIST_LIMIT = 20
_DISPLAY_MARK = "\u200e"
# Joins ids to check them in one pass; ids never hold it (it is a control character).
_SEPARATOR = "\x00"


def id_problem(player: str) -> str | None:
    """Why ``player`` cannot be a player id, or None. Ids are not empty (checked elsewhere)."""
    if player.isascii() and player.isprintable():
        return None  # ASCII has no format characters and is always NFC
    for character in player:
        kind = REFUSED_CATEGORIES.get(unicodedata.category(character))
        if kind is not None:
            return f"must not contain the {kind} character U+{ord(character):04X}"
    if not unicodedata.is_normalized("NFC", player):
        return (
            "must be in Unicode's composed form (NFC): it has characters written in parts "
            "that look like others written whole"
        )
    return None


def id_problems(players: Sequence[str]) -> list[tuple[int, str]]:
    """(index, problem) of every id that id_problem refuses, in order.

    Checked over the joined text first, so that 300,000 good ids cost a few passes in C
    rather than a Python loop over every character.
    """
    text = _SEPARATOR.join(players)
    if text.count(_SEPARATOR) == len(players) - 1 and _clean(text):
        return []
    return [
        (index, problem)
        for index, player in enumerate(players)
        if (problem := id_problem(player)) is not None
    ]


def _clean(text: str) -> bool:
    """Whether ids joined by _SEPARATOR (and holding none) are all good."""
    if text.isascii():
        # ASCII's only refused characters are its controls, and it is always NFC. One pass,
        # where the set of the characters of 300,000 ids took 50 ms.
        return text.replace(_SEPARATOR, "").isprintable()
    characters = set(text) - {_SEPARATOR}
    return (
        not any(unicodedata.category(c) in REFUSED_CATEGORIES for c in characters)
        # NUL is a starter that composes with nothing, so the joined text is NFC exactly
        # when every id is.
        and unicodedata.is_normalized("NFC", text)
    )


def _prototype_table() -> dict[int, str]:
    """Each confusable character's prototype, as a str.translate table."""
    table: dict[int, str] = {}
    for character, entries in confusables_data.items():
        character = character.replace(_DISPLAY_MARK, "")
        if len(character) != 1 or len(entries) != 1:
            continue  # a sequence, or a prototype with several sources: maps to itself
        target = entries[0]["c"].replace(_DISPLAY_MARK, "")
        back = confusables_data.get(entries[0]["c"], ())
        if len(back) == 1 and len(target) == 1:
            target = min(character, target)  # a pair: which one is the prototype is not kept
        if target != character:
            table[ord(character)] = target
    return table


# Built with the module (a few ms), as the table it is built from is loaded with it.
PROTOTYPES = _prototype_table()


def skeleton(text: str) -> str:
    """UTS #39's skeleton: equal for two strings exactly when they are confusable."""
    return skeletons([text])[0]


def skeletons(texts: Sequence[str]) -> list[str]:
    """The skeleton of each text (which must hold no NUL), computed on the joined texts."""
    joined = _SEPARATOR.join(texts)
    prototypes = PROTOTYPES
    if joined.isascii():
        # Already NFD; translate caches ASCII lookups, so the whole table is fine here.
        mapped = joined.translate(prototypes)
    else:
        decomposed = unicodedata.normalize("NFD", joined)
        # Every character present gets an entry: a missing key costs translate an exception.
        table = {ord(c): prototypes.get(ord(c), c) for c in set(decomposed)}
        mapped = decomposed.translate(table)
    result = unicodedata.normalize("NFD", mapped).split(_SEPARATOR)
    if len(result) != len(texts):
        raise ValueError("a text holds the NUL character")
    return result


def look_alikes(players: Sequence[str]) -> list[tuple[int, int]]:
    """(earlier, later) index pairs of distinct ids that look the same, in the later's order.

    One skeleton per id, compared through a set, then a dict when some are alike: linear in
    the number of ids.
    """
    shapes = skeletons(players)
    if len(set(shapes)) == len(shapes):
        return []
    first: dict[str, int] = {}
    pairs = []
    for index, shape in enumerate(shapes):
        earlier = first.setdefault(shape, index)
        if earlier != index and players[earlier] != players[index]:
            pairs.append((earlier, index))
    return pairs


# Printable ASCII except the space: the only characters shown as they are.
_PLAIN = frozenset(chr(code) for code in range(0x21, 0x7F))


def escaped(player: str) -> str:
    """The id with every character outside printable ASCII written as its code point
    ("\\u0430lice", "bob\\u0020"); an empty string when the id has no such character."""
    if all(character in _PLAIN for character in player):
        return ""
    return "".join(_shown(character) for character in player)


def _shown(character: str) -> str:
    if character == "\\":  # doubled, so that an escaped form never reads two ways
        return "\\\\"
    return character if character in _PLAIN else _code_point(character)


def _code_point(character: str) -> str:
    code = ord(character)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def tournament_key(operator_id: str) -> str:
    """What two tournament ids are compared by: one tournament is one key, however its id is
    written. Compatibility-normalised (NFKC: a full-width letter is its ASCII letter, a
    no-break space a space), stripped of surrounding whitespace, case folded, then reduced
    to its skeleton, so ``DEMO-REG-LATE``, ``demo-reg-late `` and one with a Cyrillic ``Р``
    share a key. The id must hold no NUL (id_problem refuses it first)."""
    return skeleton(unicodedata.normalize("NFKC", operator_id).strip().casefold())
