"""Turning JSON decoding failures into path-first problems.

msgspec reports the first structural error with a path such as `$.players[2].chips`; this module
rewrites it into the path style of SNAPSHOT.md and into plain words. Since a person fixing a file
wants every such problem at once, ``format_problems`` then walks the whole document against the
same msgspec types (read through ``msgspec.inspect``) and reports each misfit with the path and
words msgspec's own error would have had. It also covers the two things msgspec does not report
the way the spec wants: NaN/Infinity (msgspec calls them malformed JSON without a path) and
duplicate keys (msgspec keeps the last value silently). These fallbacks re-read the document,
which is slower but only runs when something is already wrong or suspicious.

The patterns below match msgspec's wording, which is not an API: pyproject.toml bounds msgspec to
one minor version and tests/rules/test_jsondoc.py pins every message relied on here.
"""

import json
import re
from collections.abc import Callable

import msgspec
import msgspec.inspect as schema

from .errors import Problem

AT_PATH = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<where>[^`]*)`)?$", re.S)
EXPECTED_TYPE = re.compile(r"^Expected `(?P<want>[^`]+)`, got `(?P<got>[^`]+)`$")
UNKNOWN_FIELD = re.compile(r"^Object contains unknown field `(?P<field>.*)`$", re.S)
MISSING_FIELD = re.compile(r"^Object missing required field `(?P<field>.*)`$", re.S)
INVALID_VALUE = re.compile(r"^Invalid value (?P<value>.*)$", re.S)
BYTE_OFFSET = re.compile(r"\(byte (?P<offset>\d+)\)")

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


def _type_problem(path: str, want: str, got: str) -> Problem:
    return Problem(path, f"must be {_WANT.get(want, want)}, not {_GOT.get(got, got)}")


def _unknown_problem(parent: str, field: str, path: str, hint: "UnknownHint | None") -> Problem:
    words = hint(parent, field) if hint else None
    return Problem(path, words or "is not a known field (check the spelling)")


def _invalid_problem(path: str, value: str, hint: Callable[[str], str] | None) -> Problem:
    words = hint(path) if hint else None
    return Problem(path, words or f"has an unacceptable value {value}")


_TOO_LARGE = "is a number too large to be read"


def problem_from_validation(
    error: msgspec.ValidationError,
    *,
    root: str = "$",
    unknown_hint: UnknownHint | None = None,
    invalid_hint: Callable[[str], str] | None = None,
) -> Problem:
    match = AT_PATH.match(str(error))
    assert match is not None  # the pattern accepts any text
    message, where = match["message"], match["where"] or ""
    parent = join_path(root, where)
    if found := EXPECTED_TYPE.match(message):
        return _type_problem(parent, found["want"], found["got"])
    if found := UNKNOWN_FIELD.match(message):
        path = join_path(root, where + key_step(found["field"]))
        return _unknown_problem(parent, found["field"], path, unknown_hint)
    if found := MISSING_FIELD.match(message):
        return Problem(join_path(root, where + key_step(found["field"])), "is required")
    if found := INVALID_VALUE.match(message):
        return _invalid_problem(parent, found["value"], invalid_hint)
    if message == "Number out of range":
        return Problem(parent, _TOO_LARGE)
    return Problem(parent, message)


# --- Every format problem of a document at once ------------------------------------------------


class _Decimal:
    """A JSON number written with a fraction or an exponent, kept as written: never an integer
    amount, and 1e400 is a number too large rather than infinity."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


_LENIENT = msgspec.json.Decoder(float_hook=_Decimal)

# msgspec's names for the JSON kinds, as its messages use them.
_KIND = {dict: "object", list: "array", str: "str", bool: "bool", int: "int", type(None): "null"}


def read_leniently(data: bytes):
    """The well-formed JSON document `data` as plain Python values (objects as dicts, numbers
    with a fraction as markers), or None when it cannot be read that way (nested too deeply, an
    integer beyond what msgspec reads)."""
    try:
        return _LENIENT.decode(data)
    except (msgspec.MsgspecError, RecursionError):
        return None


def format_problems(
    tree,
    type_: type,
    *,
    root: str = "$",
    unknown_hint: UnknownHint | None = None,
    invalid_hint: Callable[[str], str] | None = None,
) -> list[Problem]:
    """Every place where the document `tree` (from ``read_leniently``) does not fit `type_`, in
    document order, each with the path and words ``problem_from_validation`` gives the same
    misfit when msgspec stops at it."""
    misfits = _Misfits(root, unknown_hint, invalid_hint)
    misfits.check(tree, schema.type_info(type_), "")
    return misfits.problems


def _got(node) -> str:
    """msgspec's name for the JSON kind of a node of a leniently read document."""
    return "float" if isinstance(node, _Decimal) else _KIND.get(type(node), "value")


class _Misfits:
    """A walk of one document against the msgspec type information of its type, collecting a
    problem at each misfit (``where`` is the path below ``root``, msgspec's style)."""

    def __init__(
        self, root: str, unknown_hint: UnknownHint | None, invalid_hint: Callable[[str], str] | None
    ):
        self.root, self.unknown_hint, self.invalid_hint = root, unknown_hint, invalid_hint
        self.problems: list[Problem] = []

    def check(self, node, info, where: str) -> None:
        if isinstance(info, schema.UnionType):
            self.check_union(node, info, where)
        elif isinstance(info, schema.StructType):
            if not isinstance(node, dict):
                self.wrong_type(where, "object", node)
            else:
                self.check_fields(node, info, where)
        elif isinstance(info, schema.ListType):
            if not isinstance(node, list):
                self.wrong_type(where, "array", node)
            else:
                for index, item in enumerate(node):
                    self.check(item, info.item_type, f"{where}[{index}]")
        elif isinstance(info, schema.IntType):
            if isinstance(node, _Decimal) and float(node.text) in (float("inf"), float("-inf")):
                self.problems.append(Problem(self.path(where), _TOO_LARGE))
            elif not isinstance(node, int) or isinstance(node, bool):
                self.wrong_type(where, "int", node)
        elif isinstance(info, schema.StrType | schema.BoolType | schema.NoneType):
            want = {schema.StrType: str, schema.BoolType: bool, schema.NoneType: type(None)}
            if type(node) is not want[type(info)]:
                self.wrong_type(where, _KIND[want[type(info)]], node)

    def check_union(self, node, info, where: str) -> None:
        kinds = [t for t in info.types if not isinstance(t, schema.NoneType)]
        if node is None and len(kinds) < len(info.types):
            return
        tagged = [t for t in kinds if isinstance(t, schema.StructType) and t.tag_field]
        if len(kinds) == 1 or not tagged:
            self.check(node, kinds[0], where)
            return
        if not isinstance(node, dict):
            self.wrong_type(where, "object", node)
            return
        field = tagged[0].tag_field
        tag_where = where + key_step(field)
        if field not in node:
            self.missing(tag_where)
        elif not isinstance(node[field], str):
            self.wrong_type(tag_where, "str", node[field])
        else:
            chosen = next((t for t in tagged if t.tag == node[field]), None)
            if chosen is None:
                path = self.path(tag_where)
                self.problems.append(_invalid_problem(path, repr(node[field]), self.invalid_hint))
            else:
                self.check_fields(node, chosen, where)

    def check_fields(self, node: dict, info, where: str) -> None:
        fields = {field.encode_name: field for field in info.fields}
        for key, value in node.items():
            if key in fields:
                self.check(value, fields[key].type, where + key_step(key))
            elif key != info.tag_field and info.forbid_unknown_fields:
                path, parent = self.path(where + key_step(key)), self.path(where)
                self.problems.append(_unknown_problem(parent, key, path, self.unknown_hint))
        for name, field in fields.items():
            if field.required and name not in node:
                self.missing(where + key_step(name))

    def path(self, where: str) -> str:
        return join_path(self.root, where)

    def wrong_type(self, where: str, want: str, node) -> None:
        self.problems.append(_type_problem(self.path(where), want, _got(node)))

    def missing(self, where: str) -> None:
        self.problems.append(Problem(self.path(where), "is required"))


def summarised(problems: list[Problem], limit: int) -> list[Problem]:
    """The problems with at most `limit` of each kind (the same message at paths that differ
    only by their indexes); the rest of a kind become one line at the list they belong to."""
    counts: dict[tuple[str, str], int] = {}
    kept: list[Problem] = []
    for problem in problems:
        kind = (re.sub(r"\[\d+\]", "[]", problem.path), problem.message)
        counts[kind] = counts.get(kind, 0) + 1
        if counts[kind] <= limit:
            kept.append(problem)
    for (path, message), count in counts.items():
        if count > limit:
            where = path.split("[]", 1)[0] or "$"
            kept.append(Problem(where, f"{count - limit} more have the same problem: {message}"))
    return kept


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
    if found := BYTE_OFFSET.search(message):
        where = _position(data, int(found["offset"]))
        message = BYTE_OFFSET.sub(f"at {where}", message)
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
