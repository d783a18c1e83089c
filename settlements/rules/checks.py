"""Bounds and the reporting of problems that the snapshot's rules share."""

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
