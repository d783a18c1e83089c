"""Bounds and the reporting of problems that the snapshot's rules share."""

import calendar
import re

from .errors import Problem

# Upper bounds on inputs. Arithmetic is exact at any size, but amounts are stored as 64-bit
# integers downstream, and a value beyond these is an export fault, not a real tournament.
MAX_AMOUNT = 10**15
MAX_CHIPS = 10**18

# How many offending items one rule lists before summarising the rest in one line.
LIST_LIMIT = 20


def report(problems: list[Problem], indices: list[int], path, message: str, summary: str) -> None:
    """One problem per offending item, up to LIST_LIMIT, then one line for the rest."""
    for index in indices[:LIST_LIMIT]:
        problems.append(Problem(path(index), message))
    if len(indices) > LIST_LIMIT:
        rest = len(indices) - LIST_LIMIT
        problems.append(Problem(summary, f"{rest} more have the same problem: {message}"))


def check_amount(problems: list[Problem], name: str, value: int, *, positive: bool) -> bool:
    low = 1 if positive else 0
    if low <= value <= MAX_AMOUNT:
        return True
    word = "> 0" if positive else ">= 0"
    problems.append(
        Problem(f"tournament.{name}", f"must be an integer {word} and at most {MAX_AMOUNT}")
    )
    return False


_RFC3339 = re.compile(
    r"(?P<y>[0-9]{4})-(?P<mo>[0-9]{2})-(?P<d>[0-9]{2})[Tt]"
    r"(?P<h>[0-9]{2}):(?P<mi>[0-9]{2}):(?P<s>[0-9]{2})(?:\.[0-9]+)?"
    r"(?:[Zz]|[+-](?P<oh>[0-9]{2}):(?P<om>[0-9]{2}))"
)


_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def is_rfc3339(text: str) -> bool:
    match = _RFC3339.fullmatch(text)
    if not match:
        return False
    year, month, day = int(match["y"]), int(match["mo"]), int(match["d"])
    if not 1 <= month <= 12:
        return False
    if not 1 <= day <= (29 if month == 2 and calendar.isleap(year) else _DAYS[month - 1]):
        return False
    # Second 60 is a leap second, which RFC 3339 allows.
    if int(match["h"]) > 23 or int(match["mi"]) > 59 or int(match["s"]) > 60:
        return False
    return match["oh"] is None or (int(match["oh"]) <= 23 and int(match["om"]) <= 59)
