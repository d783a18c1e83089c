"""Turning JSON decoding failures into path-first problems.

msgspec reports the first structural error with a path such as `$.players[2].chips`; this module
rewrites it into the path style of SNAPSHOT.md and into plain words. It also covers the two
things msgspec does not report the way the spec wants: NaN/Infinity (msgspec calls them
malformed JSON without a path) and duplicate keys (msgspec keeps the last value silently).
Both fallbacks re-read the document with the standard library, which is slow but only runs when
something is already wrong or suspicious.

The patterns below match msgspec's wording, which is not an API: pyproject.toml bounds msgspec to
one minor version and tests/rules/test_jsondoc.py pins every message relied on here.
"""

import json
import re
from collections.abc import Callable

import msgspec

from .errors import Problem

_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<where>[^`]*)`)?$", re.S)
_EXPECTED = re.compile(r"^Expected `(?P<want>[^`]+)`, got `(?P<got>[^`]+)`$")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<field>.*)`$", re.S)
_MISSING = re.compile(r"^Object missing required field `(?P<field>.*)`$", re.S)
_INVALID = re.compile(r"^Invalid value (?P<value>.*)$", re.S)
_BYTE = re.compile(r"\(byte (?P<offset>\d+)\)")

_WANT = {
    "int": "an integer",
    "str": "a string",
    "bool": "true or false",
    "object": "an object",
    "array": "a list",
}
_GOT = {
    "float": "a decimal number",
    "bool": "true/false",
    "null": "null (leave an optional field out instead)",
    "str": "a string",
    "int": "a number",
    "object": "an object",
    "array": "a list",
}

# Explains a field found where it does not belong: (parent path, field name) -> message.
UnknownHint = Callable[[str, str], str]


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def key_step(key: str) -> str:
    """The path step to an object key: `.name`, or `["..."]` (JSON-quoted) for a key that
    would make the path empty or ambiguous, such as "", " " or "a.b"."""
    return f".{key}" if _NAME.fullmatch(key) else f"[{json.dumps(key, ensure_ascii=False)}]"


def join_path(root: str, where: str) -> str:
    """`where` is msgspec's path with the leading `$` removed: "", ".a.b" or "[3].c"."""
    if not where:
        return root
    if root == "$":
        return where[1:] if where.startswith(".") else "$" + where
    return root + where


def problem_from_validation(
    error: msgspec.ValidationError,
    *,
    root: str = "$",
    unknown_hint: UnknownHint | None = None,
    invalid_hint: Callable[[str], str] | None = None,
) -> Problem:
    match = _AT.match(str(error))
    assert match is not None  # the pattern accepts any text
    message, where = match["message"], match["where"] or ""
    parent = join_path(root, where)
    if found := _EXPECTED.match(message):
        want = _WANT.get(found["want"], found["want"])
        got = _GOT.get(found["got"], found["got"])
        return Problem(parent, f"must be {want}, not {got}")
    if found := _UNKNOWN.match(message):
        path = join_path(root, where + key_step(found["field"]))
        hint = unknown_hint(parent, found["field"]) if unknown_hint else None
        return Problem(path, hint or "is not a known field (check the spelling)")
    if found := _MISSING.match(message):
        return Problem(join_path(root, where + key_step(found["field"])), "is required")
    if found := _INVALID.match(message):
        hint = invalid_hint(parent) if invalid_hint else None
        return Problem(parent, hint or f"has an unacceptable value {found['value']}")
    if message == "Number out of range":
        return Problem(parent, "is a number too large to be read")
    return Problem(parent, message)


def _position(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}"


class _NonFinite:
    def __init__(self, name: str):
        self.name = name


class _Pairs(list):
    """An object as the standard library read it, keeping repeated keys."""


def _walk(node, path: str, visit: Callable[[object, str], None]) -> None:
    stack = [(node, path)]
    while stack:
        node, path = stack.pop()
        visit(node, path)
        if isinstance(node, _Pairs):
            stack.extend((value, join_path(path, key_step(key))) for key, value in reversed(node))
        elif isinstance(node, list):
            stack.extend((item, f"{path}[{i}]") for i, item in reversed(list(enumerate(node))))


def _load_exactly(data: bytes):
    """The document as the standard library sees it, or None if it cannot be read at all."""
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=_Pairs, parse_constant=_NonFinite)
    except (ValueError, RecursionError):
        return None


def problems_from_decode_error(
    error: msgspec.DecodeError, data: bytes, *, root: str = "$"
) -> list[Problem]:
    """Why a document is not JSON: non-finite numbers get their own paths, the rest is `root`."""
    if not data.strip():
        return [Problem(root, "is empty; expected a JSON object")]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        where = _position(data, bad.start)
        return [Problem(root, f"is not UTF-8 text (the byte at {where} is not valid UTF-8)")]
    tree = _load_exactly(data)
    if tree is not None:
        problems: list[Problem] = []

        def visit(node, path):
            if isinstance(node, _NonFinite):
                problems.append(Problem(path, f"must be an integer, not {node.name}"))

        _walk(tree, root, visit)
        if problems:
            return problems
    message = str(error)
    if message == "Input data was truncated":
        return [Problem(root, "is not valid JSON: the document ends too early")]
    message = message.removeprefix("JSON is malformed: ")
    if found := _BYTE.search(message):
        where = _position(data, int(found["offset"]))
        message = _BYTE.sub(f"at {where}", message)
    return [Problem(root, f"is not valid JSON: {message}")]


def duplicate_key_problems(data: bytes, *, root: str = "$") -> list[Problem]:
    """Every key repeated inside one object, reported at the repeated key's path."""
    tree = _load_exactly(data)
    if tree is None:
        return []
    problems: list[Problem] = []

    def visit(node, path):
        if isinstance(node, _Pairs):
            seen: set[str] = set()
            for key, _ in node:
                if key in seen:
                    problems.append(
                        Problem(join_path(path, key_step(key)), "appears twice in the same object")
                    )
                seen.add(key)

    _walk(tree, root, visit)
    return problems
