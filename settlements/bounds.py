"""What a value must be for CrashDesk to store it and show it again: the one place that knows.

Every time and number that arrives (a snapshot's fields, a form, a query parameter) is checked
against these bounds before anything is written, and refused at its path with a message, so
that nothing is accepted that a page, the API or an export could not show afterwards.

Times: PostgreSQL's timestamptz reaches from 4713 BC to 294276 AD, but every stored time is
read back into a Python datetime (years 1 to 9999) and shown in the site's time zone, which
may be up to a day from UTC. So a time is kept only if it lies a day inside Python's range
once normalised to UTC: it can then be read back and shown in any zone. Nothing real is that
close to year 1 or year 9999.

Numbers: amounts and counts are stored in 64-bit integer columns (bigint).

Whole numbers in a URL (an id, a page, a limit) are ASCII digits and nothing else: Python's
``str.isdigit()`` and ``int()`` also take "²", "١" or " 7 ", which either fail later or are
read as another number than the one the client meant.
"""

import re
from datetime import UTC, date, datetime, timedelta

BIGINT_MAX = 2**63 - 1

EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, 23, 59, 59, 999999, tzinfo=UTC)
TIME_RANGE = "between 0001-01-02 and 9999-12-30 (UTC)"
OUT_OF_RANGE = f"must be a time {TIME_RANGE}; a time outside cannot be stored and shown"

_DIGITS = re.compile(r"[0-9]+")
# The same shape as the engine's RFC 3339 check (rules/snapshot.py), which has already
# passed when this reads a snapshot's time; here it only takes the time apart.
_RFC3339 = re.compile(
    r"(?P<date>[0-9]{4}-[0-9]{2}-[0-9]{2})[Tt](?P<hm>[0-9]{2}:[0-9]{2}):(?P<s>[0-9]{2})"
    r"(?P<rest>(?:\.[0-9]+)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2}))"
)


def in_utc(value: datetime) -> datetime:
    """An aware datetime that passed time_problem, in UTC: PostgreSQL refuses offsets beyond
    15:59 that Python (and RFC 3339) allow."""
    return value.astimezone(UTC)


def time_problem(value: datetime) -> str | None:
    """Why an aware datetime cannot be stored and shown, or None when it can."""
    try:
        utc = value.astimezone(UTC)
    except OverflowError:  # its UTC time is before year 1 or after year 9999
        return OUT_OF_RANGE
    return None if EARLIEST <= utc <= LATEST else OUT_OF_RANGE


def date_problem(day: date) -> str | None:
    """Why a calendar day cannot be used to select stored times, or None when it can."""
    if EARLIEST.date() <= day <= LATEST.date():
        return None
    return f"must be a day {TIME_RANGE}"


def parse_rfc3339(text: str) -> datetime:
    """An RFC 3339 time that can be stored and shown, in UTC; ValueError with the reason
    otherwise.

    A leap second (second 60) is read as the first instant of the next minute, as PostgreSQL
    reads it; Python's datetime has no second 60.
    """
    match = _RFC3339.fullmatch(text)
    if match is None:
        raise ValueError("must be an RFC 3339 time such as 2026-11-30T20:14:05Z")
    leap = match["s"] == "60"
    plain = f"{match['date']}T{match['hm']}:{'59' if leap else match['s']}{match['rest']}"
    try:
        parsed = datetime.fromisoformat(plain.upper()) + timedelta(seconds=leap)
    except ValueError:
        raise ValueError("is not a time that exists in the calendar") from None
    except OverflowError:
        raise ValueError(OUT_OF_RANGE) from None
    if problem := time_problem(parsed):
        raise ValueError(problem)
    return in_utc(parsed)


def whole_number(raw: str | None, *, maximum: int = BIGINT_MAX) -> int | None:
    """The number ``raw`` spells in ASCII digits 0-9 alone, up to ``maximum``; else None.

    No sign, space, underscore or other script's digits: what a client sends either means
    exactly this number or is refused.
    """
    if raw is None or len(raw) > len(str(maximum)) or not _DIGITS.fullmatch(raw):
        return None
    value = int(raw)
    return value if value <= maximum else None
