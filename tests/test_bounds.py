"""The bounds every arriving time and number is checked against (settlements.bounds)."""

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from settlements import bounds

MINUTE_EAST = timezone(timedelta(minutes=1))
MINUTE_WEST = timezone(timedelta(minutes=-1))


@pytest.mark.parametrize(
    "value",
    [
        bounds.EARLIEST,
        bounds.LATEST,
        datetime(2026, 11, 30, 20, 14, 5, tzinfo=UTC),
        # The same instants written in other zones.
        bounds.EARLIEST.astimezone(timezone(timedelta(hours=23, minutes=59))),
        bounds.LATEST.astimezone(timezone(timedelta(hours=-23, minutes=-59))),
    ],
)
def test_times_inside_the_range_pass(value):
    assert bounds.time_problem(value) is None


@pytest.mark.parametrize(
    "value",
    [
        bounds.EARLIEST - timedelta(microseconds=1),
        bounds.LATEST + timedelta(microseconds=1),
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
        # Their UTC time is before year 1 or after year 9999: Python cannot even hold it.
        datetime(1, 1, 1, tzinfo=MINUTE_EAST),
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=MINUTE_WEST),
    ],
)
def test_times_outside_the_range_are_refused(value):
    assert bounds.time_problem(value) == bounds.OUT_OF_RANGE


def test_the_range_leaves_room_to_show_a_time_in_any_zone():
    for zone in (timezone(timedelta(hours=-23, minutes=-59)), timezone(timedelta(hours=23))):
        assert bounds.EARLIEST.astimezone(zone).year >= 1
        assert bounds.LATEST.astimezone(zone).year <= 9999


@pytest.mark.parametrize(
    ("day", "ok"),
    [
        (date(1, 1, 1), False),
        (date(1, 1, 2), True),
        (date(9999, 12, 30), True),
        (date(9999, 12, 31), False),
    ],
)
def test_days(day, ok):
    assert (bounds.date_problem(day) is None) is ok


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T20:14:05Z", datetime(2026, 11, 30, 20, 14, 5, tzinfo=UTC)),
        ("2026-11-30t20:14:05z", datetime(2026, 11, 30, 20, 14, 5, tzinfo=UTC)),
        (
            "2026-11-30T21:14:05.123456789+01:00",
            datetime(2026, 11, 30, 20, 14, 5, 123456, tzinfo=UTC),
        ),
        # A leap second is the first instant of the next minute, as PostgreSQL reads it.
        ("2016-12-31T23:59:60Z", datetime(2017, 1, 1, tzinfo=UTC)),
        ("0001-01-02T00:00:00Z", bounds.EARLIEST),
        ("9999-12-30T23:59:59.999999Z", bounds.LATEST),
    ],
)
def test_rfc3339_times_that_can_be_stored(text, expected):
    assert bounds.parse_rfc3339(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("0001-01-01T00:00:00+00:01", bounds.OUT_OF_RANGE),
        ("9999-12-31T23:59:59-00:01", bounds.OUT_OF_RANGE),
        ("0001-01-01T00:00:00Z", bounds.OUT_OF_RANGE),
        ("9999-12-31T23:59:60Z", bounds.OUT_OF_RANGE),
        ("0000-06-01T00:00:00Z", "is not a time that exists in the calendar"),
        ("2026-11-30 20:14:05Z", "must be an RFC 3339 time such as 2026-11-30T20:14:05Z"),
    ],
)
def test_rfc3339_times_that_cannot_be_stored(text, reason):
    with pytest.raises(ValueError, match="^" + reason.replace("(", r"\(").replace(")", r"\)")):
        bounds.parse_rfc3339(text)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("0", 0),
        ("7", 7),
        ("007", 7),
        (str(bounds.BIGINT_MAX), bounds.BIGINT_MAX),
        (str(bounds.BIGINT_MAX + 1), None),
        ("9" * 40, None),
        ("", None),
        (None, None),
        ("²", None),  # str.isdigit() says yes, int() refuses it
        ("١", None),  # int() reads it as 1
        ("７", None),  # a full-width 7, also read by int()
        (" 7", None),
        ("7 ", None),
        ("+7", None),
        ("-7", None),
        ("7_0", None),
        ("7.0", None),
    ],
)
def test_whole_numbers_are_ascii_digits_only(raw, expected):
    assert bounds.whole_number(raw) == expected


def test_whole_numbers_have_a_maximum():
    assert bounds.whole_number("50", maximum=50) == 50
    assert bounds.whole_number("51", maximum=50) is None
