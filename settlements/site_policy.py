"""The site's crash policy, from the CRASH_POLICY setting (RULES.md §2 and §4).

``settings.CRASH_POLICY`` maps policy keys to what the environment gave (strings), or to typed
values when set in code; a key left out keeps the engine's default. The values go through the
engine's own ``parse_policy``, so the site cannot run with a policy the engine would refuse.
Every problem names the environment variable to fix.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from settlements import money
from settlements.rules import InvalidInput, Policy, parse_policy
from settlements.rules.policy import ROOT

VARIABLES = {
    "pre_pct": "CRASH_POLICY_PRE_PCT",
    "early_pct": "CRASH_POLICY_EARLY_PCT",
    "late_formula": "CRASH_POLICY_LATE_FORMULA",
}
_PERCENTAGES = ("pre_pct", "early_pct")
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,9}")


def site_policy() -> Policy:
    """The policy new cases are assessed with; ImproperlyConfigured if the setting is bad."""
    policy, problems = _read(settings.CRASH_POLICY)
    if problems:
        raise ImproperlyConfigured("Bad crash policy: " + "; ".join(problems))
    return policy


def policy_problems(config: Mapping) -> list[str]:
    """What is wrong with ``config``, one message per problem, each naming its variable."""
    return _read(config)[1]


def _read(config: Mapping) -> tuple[Policy | None, list[str]]:
    values, problems = {}, []
    for key, raw in config.items():
        if key in _PERCENTAGES and isinstance(raw, str):
            # The environment only holds text; msgspec's strict typing would call "10" a
            # string rather than a number, which is no help to whoever set it.
            if not _WHOLE_NUMBER.fullmatch(raw.strip()):
                problems.append(f"{_name(key)}={raw!r}: give a whole percentage from 0 to 100")
                continue
            raw = int(raw)
        elif key == "late_formula" and isinstance(raw, str):
            raw = raw.strip()
        values[key] = raw
    if problems:
        # The thresholds are compared with each other, so with one unreadable only the other
        # settings can still be checked.
        values = {key: value for key, value in values.items() if key not in _PERCENTAGES}
    try:
        policy = parse_policy(values)
    except InvalidInput as invalid:
        return None, problems + [_described(problem, config) for problem in invalid.problems]
    return (None if problems else policy), problems


def _described(problem, config: Mapping) -> str:
    key = problem.path.removeprefix(ROOT).removeprefix(".")
    if key in config:
        return f"{_name(key)}={config[key]!r}: {problem.message}"
    return f"{_name(key)} (unset, so the published default): {problem.message}"


def _name(key: str) -> str:
    return VARIABLES.get(key) or (f"CRASH_POLICY[{key!r}]" if key else "CRASH_POLICY")


@dataclass(frozen=True)
class IcmFlag:
    """When the second opinion flags a player: the policy pays them less than their stack's
    ICM value by at least ``percent`` of that value and at least ``min_amount`` minor units."""

    percent: int
    min_amount: int

    def flags(self, difference: int, amount: int) -> bool:
        """Whether a player paid ``difference`` against an ICM value of ``amount`` is flagged
        (selectors.icm asks the database the same, in integers)."""
        loss = -difference
        return loss > 0 and loss >= self.min_amount and loss * 100 >= self.percent * amount

    def shortfall_reason(self, currency: str) -> str:
        """The reason the compensation form is filled with from the second opinion. One
        source: a statement leaves it out for a player the threshold does not flag."""
        return (
            "The settlement pays these players less than their stacks' ICM value by at least "
            f"{self.percent} % and {money.format_minor_units(self.min_amount, currency)}; "
            "compensated for the difference."
        )


def icm_flag() -> IcmFlag:
    """The site's threshold (ICM_FLAG_PERCENT, ICM_FLAG_MIN_AMOUNT); ImproperlyConfigured if
    either is out of range (the system check reports it before the site starts)."""
    problems = icm_flag_problems()
    if problems:
        raise ImproperlyConfigured("Bad ICM flag threshold: " + "; ".join(problems))
    return IcmFlag(percent=settings.ICM_FLAG_PERCENT, min_amount=settings.ICM_FLAG_MIN_AMOUNT)


def icm_flag_problems() -> list[str]:
    percent, min_amount = settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT
    problems = []
    if not 0 <= percent <= 100:
        problems.append(f"ICM_FLAG_PERCENT={percent}: give a percentage from 0 to 100")
    if min_amount < 0:
        problems.append(f"ICM_FLAG_MIN_AMOUNT={min_amount}: give 0 or more minor units")
    return problems
