"""Player ids as a person must see them: exactly, with look-alike and invisible characters
made visible.

An id such as "аlice" (Cyrillic а) or "bob " (a trailing space) looks like another player's.
Wherever an id is shown, its escaped form is shown beside it when the two differ.
"""

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
