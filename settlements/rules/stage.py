"""RULES.md §2: the stage a tournament had reached when it crashed.

Integer comparisons only: "100·E < 5·N" rather than a percentage, so exactly 5 % eliminated is
early and exactly 25 % is middle, with no rounding anywhere.
"""

from .policy import DEFAULT_POLICY, Policy

STAGES = ("pre", "early", "middle", "late")


def classify(
    *,
    started: bool,
    entrants: int,
    eliminated: int,
    remaining: int,
    paid_places: int,
    policy: Policy = DEFAULT_POLICY,
) -> str:
    if not started or 100 * eliminated < policy.pre_pct * entrants:
        return "pre"
    if remaining <= paid_places:
        return "late"
    if 100 * eliminated < policy.early_pct * entrants:
        return "early"
    return "middle"
