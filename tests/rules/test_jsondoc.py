"""msgspec's error wording, as rules/jsondoc.py reads it.

jsondoc turns msgspec's messages into path-first problems by matching their text, so a msgspec
release that rewords one would quietly degrade every snapshot and policy error to msgspec's raw
text. pyproject.toml bounds msgspec to the minor version these tests were written against; when
that bound moves, these tests say which wording changed.
"""

import msgspec
import pytest

from settlements.rules import jsondoc


class _Inner(msgspec.Struct, forbid_unknown_fields=True):
    count: int


class _Doc(msgspec.Struct, forbid_unknown_fields=True, tag_field="type", tag="known"):
    name: str
    inner: _Inner
    items: list[_Inner] = []


def _validation_message(data: bytes) -> str:
    with pytest.raises(msgspec.ValidationError) as caught:
        msgspec.json.decode(data, type=_Doc)
    return str(caught.value)


def _decode_message(data: bytes) -> str:
    with pytest.raises(msgspec.DecodeError) as caught:
        msgspec.json.decode(data)
    assert not isinstance(caught.value, msgspec.ValidationError)
    return str(caught.value)


def _split(message: str) -> tuple[str, str | None]:
    found = jsondoc.AT_PATH.match(message)
    assert found is not None
    return found["message"], found["where"]


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            b'{"type": "known", "name": 1, "inner": {"count": 1}}',
            ("Expected `str`, got `int`", ".name"),
        ),
        (
            b'{"type": "known", "name": "a", "inner": {"count": 1}, "items": [{"count": "x"}]}',
            ("Expected `int`, got `str`", ".items[0].count"),
        ),
    ],
)
def test_the_path_suffix(data, expected):
    assert _split(_validation_message(data)) == expected


def test_a_message_at_the_root_has_no_path():
    message, where = _split(_validation_message(b'{"type": "known", "name": "a"}'))
    assert where is None
    assert message == "Object missing required field `inner`"


@pytest.mark.parametrize(
    ("value", "want", "got"),
    [
        (b"1", "str", "int"),
        (b"1.5", "str", "float"),
        (b"true", "str", "bool"),
        (b"null", "str", "null"),
        (b"[]", "str", "array"),
        (b"{}", "str", "object"),
    ],
)
def test_expected_got(value, want, got):
    data = b'{"type": "known", "name": ' + value + b', "inner": {"count": 1}}'
    message, _ = _split(_validation_message(data))
    found = jsondoc.EXPECTED_TYPE.match(message)
    assert found is not None, message
    assert (found["want"], found["got"]) == (want, got)


@pytest.mark.parametrize(
    ("value", "want"),
    [(b'"1"', "int"), (b"[]", "int")],
)
def test_expected_int(value, want):
    data = b'{"type": "known", "name": "a", "inner": {"count": ' + value + b"}}"
    message, where = _split(_validation_message(data))
    assert jsondoc.EXPECTED_TYPE.match(message)["want"] == want
    assert where == ".inner.count"


def test_unknown_field():
    data = b'{"type": "known", "name": "a", "inner": {"count": 1, "a b`c": 2}}'
    message, where = _split(_validation_message(data))
    found = jsondoc.UNKNOWN_FIELD.match(message)
    assert found is not None, message
    assert found["field"] == "a b`c"
    assert where == ".inner"


def test_missing_field():
    message, where = _split(_validation_message(b'{"type": "known", "name": "a", "inner": {}}'))
    found = jsondoc.MISSING_FIELD.match(message)
    assert found is not None, message
    assert found["field"] == "count"
    assert where == ".inner"


def test_invalid_tag_value():
    data = b'{"type": "other", "name": "a", "inner": {"count": 1}}'
    message, where = _split(_validation_message(data))
    found = jsondoc.INVALID_VALUE.match(message)
    assert found is not None, message
    assert found["value"] == "'other'"
    assert where == ".type"


def test_number_out_of_range():
    data = b'{"type": "known", "name": "a", "inner": {"count": 1e400}}'
    assert _split(_validation_message(data)) == ("Number out of range", ".inner.count")


def test_truncated_document():
    assert _decode_message(b'{"name": ') == "Input data was truncated"


@pytest.mark.parametrize(
    ("data", "offset"),
    [(b'{"a" 1}', 5), (b"[1,]", 3), (b'{"a": 1} x', 10)],  # trailing text: one past it
)
def test_malformed_json_names_its_byte(data, offset):
    message = _decode_message(data)
    assert message.startswith("JSON is malformed: ")
    found = jsondoc.BYTE_OFFSET.search(message)
    assert found is not None, message
    assert int(found["offset"]) == offset
