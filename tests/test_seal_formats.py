"""Format 2's encoding of sealed values (settlements.seal_formats): every value says its type
and its length, so distinct values, rows and runs of rows never write the same text."""

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from settlements import seal_formats
from settlements.seal_formats import encode, encode_row, rows_encoder

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(),
    st.datetimes(timezones=st.just(UTC)),
    st.dates(),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


def typed(value):
    """What a value is, as the encoding must tell it apart: True and 1 are equal in Python."""
    return (type(value), value)


@given(scalars, scalars)
def test_distinct_values_never_encode_the_same(a, b):
    if typed(a) != typed(b):
        assert encode(a) != encode(b)


@given(st.lists(scalars, max_size=6), st.lists(scalars, max_size=6))
def test_distinct_rows_never_encode_the_same(a, b):
    if list(map(typed, a)) != list(map(typed, b)):
        assert "".join(map(encode, a)) != "".join(map(encode, b))


@given(st.lists(st.lists(scalars, max_size=4), max_size=4))
def test_a_run_of_values_reads_back_one_way(rows):
    """The length prefix lets a reader split any concatenation at exactly the boundaries it
    was written with: no value imitates the end of another."""
    values = [value for row in rows for value in row]
    assert split("".join(map(encode, values))) == [encode(value) for value in values]


def split(text: str) -> list[str]:
    parts, at = [], 0
    while at < len(text):
        colon = text.index(":", at)
        end = colon + 1 + int(text[at + 1 : colon])
        parts.append(text[at:end])
        at = end
    return parts


def test_none_empty_text_zero_and_false_differ():
    written = [encode(value) for value in (None, "", 0, False, "0", [], {})]
    assert written == ["n0:", "s0:", "i1:0", "b1:0", "s1:0", "j2:[]", "j2:{}"]


def test_the_length_prefix_keeps_concatenations_apart():
    assert encode_row(("ab", "c")) != encode_row(("a", "bc"))
    assert encode_row(("a\tb",)) != encode_row(("a", "b"))
    assert encode_row(("s1:a",)) != encode_row(("a", "a"))
    assert encode_row((12, 3)) != encode_row((1, 23))


def test_values_are_written_as_documented():
    at = datetime(2026, 1, 2, 4, 4, 5, 6, tzinfo=timezone(timedelta(hours=1)))
    assert encode(at) == "t32:2026-01-02T03:04:05.000006+00:00"
    assert encode(date(2026, 1, 2)) == "d10:2026-01-02"
    assert encode(-42) == "i3:-42"
    assert encode("héllo") == "s5:héllo"
    assert encode(True) == "b1:1"
    assert encode({"cash": 1, "a": "é"}) == 'j18:{"a":"é","cash":1}'


@pytest.mark.parametrize("value", [1.5, b"x", datetime(2026, 1, 2), object()])
def test_a_value_without_a_documented_encoding_is_refused(value):
    with pytest.raises(TypeError):
        encode(value)


@given(
    st.lists(
        st.tuples(st.integers(), st.text(), st.one_of(st.none(), st.integers(), st.booleans())),
        max_size=20,
    )
)
def test_the_column_encoder_writes_what_the_row_encoder_does(rows):
    assert rows_encoder(("int", "str", "any"))(rows) == "".join(map(encode_row, rows))


def test_the_header_names_the_format_kind_and_fields():
    current = seal_formats.get()
    assert current.version == seal_formats.CURRENT == 2
    header = current.header(seal_formats.ENTRANTS)
    assert header == encode_row(
        ("crashdesk-seal", 2, "entrants", *current.fields[seal_formats.ENTRANTS])
    )
    assert seal_formats.get(1).header(seal_formats.ENTRANTS) == ""


def test_an_unknown_format_is_refused():
    with pytest.raises(ValueError, match="no seal format 99"):
        seal_formats.get(99)
