"""The rulebook's parameters: RULES.md §9 (the stage thresholds of §2, the formulas of §3–§4
and the eight keys that let a published operator policy be applied).

`POLICY_KEYS` is the single registry of the keys: their types, allowed values, defaults and a
plain explanation, so validation, the echo in a settlement and any form or API that edits a
rulebook read the same table. Every settlement records the policy it was computed with.
"""

from collections.abc import Mapping
from dataclasses import dataclass

import msgspec

from .errors import InvalidInput, Problem
from .jsondoc import duplicate_key_problems, problem_from_validation, problems_from_decode_error
from .remedy_names import CHIP_EQUITY, CHIP_POSITION, CHIP_PROPORTIONAL

# The formulas the rulebook may choose between, each also the name of the remedy it pays by.
LATE_FORMULAS = (CHIP_EQUITY, CHIP_POSITION)
MIDDLE_FORMULAS = (CHIP_EQUITY, CHIP_PROPORTIONAL)
ROOT = "--policy"


@dataclass(frozen=True, slots=True)
class PolicyKey:
    """One §9 key. `choices` lists the allowed values (default first) for the named ones;
    integer keys give `minimum`/`maximum` instead (and `final_table_icm` its gap, 1)."""

    name: str
    type: type
    default: object
    explanation: str
    choices: tuple = ()
    minimum: int | None = None
    maximum: int | None = None

    def allowed(self) -> str:
        """The allowed values in words, for error messages and forms."""
        if self.choices:
            return " or ".join(str(choice).lower() for choice in self.choices)
        if self.name == "final_table_icm":
            return "0 (never) or a whole number from 2 to 10"
        return f"a whole number from {self.minimum} to {self.maximum}"


POLICY_KEYS: tuple[PolicyKey, ...] = (
    PolicyKey(
        "pre_pct",
        int,
        5,
        "Percentage of entrants eliminated up to which a tournament is still in its first stage "
        "and everybody gets buy-in and fee back.",
        minimum=0,
        maximum=100,
    ),
    PolicyKey(
        "early_pct",
        int,
        25,
        "Percentage of entrants eliminated up to which the early stage lasts (buy-ins and fees "
        "back to those left, the rest split evenly); equal to pre_pct means no early stage.",
        minimum=0,
        maximum=100,
    ),
    PolicyKey(
        "late_formula",
        str,
        CHIP_EQUITY,
        "How the prize money still in play is split once the tournament is in the money.",
        choices=LATE_FORMULAS,
    ),
    PolicyKey(
        "final_table_icm",
        int,
        0,
        "From this many players left (in the money), pay them by ICM instead of the late "
        "formula; 0 never uses ICM.",
        minimum=0,
        maximum=10,
    ),
    PolicyKey(
        "late_registration",
        str,
        "ignore",
        "With refund, a tournament that crashed while late registration was open refunds "
        "everybody in full.",
        choices=("ignore", "refund"),
    ),
    PolicyKey(
        "guarantee_before_itm",
        str,
        "pool",
        "With house, a guarantee's overlay is paid only once the tournament is in the money; "
        "before that only what players paid is split.",
        choices=("pool", "house"),
    ),
    PolicyKey(
        "middle_formula",
        str,
        CHIP_EQUITY,
        "How the prize pool is split in the middle stage (after the early stage, before the "
        "money).",
        choices=MIDDLE_FORMULAS,
    ),
    PolicyKey(
        "middle_floor",
        str,
        "buy_in",
        "With none, players left in the middle stage are not guaranteed their buy-in back.",
        choices=("buy_in", "none"),
    ),
    PolicyKey(
        "middle_fee_refund",
        bool,
        False,
        "With true, players left in the middle stage also get their fee back.",
        choices=(False, True),
    ),
    PolicyKey(
        "bounty_refund",
        str,
        "current",
        "Knock-out bounties after the first stage: current pays each player still in their own "
        "bounty (what others could win by knocking them out), entry only one entry's bounty.",
        choices=("current", "entry"),
    ),
    PolicyKey(
        "satellite_prizes",
        str,
        "tickets",
        "With cash, a satellite pays its seats and shares as cash instead of tickets.",
        choices=("tickets", "cash"),
    ),
)
KEYS_BY_NAME = {key.name: key for key in POLICY_KEYS}
# Always echoed in a settlement's `policy`; the other keys only when they differ (§9, Echo).
ALWAYS_ECHOED = ("pre_pct", "early_pct", "late_formula")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _key_problem(key: PolicyKey, value: object) -> Problem | None:
    if key.type is bool:
        ok = isinstance(value, bool)
    elif key.type is int:
        ok = _is_int(value) and key.minimum <= value <= key.maximum
        if ok and key.name == "final_table_icm":
            ok = value != 1
    else:
        ok = value in key.choices
    return None if ok else Problem(f"{ROOT}.{key.name}", "must be " + key.allowed())


def _problems(values: Mapping) -> list[Problem]:
    """Every problem of these key values (keys known already), the order of the two
    percentages included once each is valid on its own."""
    problems = [
        problem
        for name, value in values.items()
        if (problem := _key_problem(KEYS_BY_NAME[name], value)) is not None
    ]
    pre = values.get("pre_pct", KEYS_BY_NAME["pre_pct"].default)
    early = values.get("early_pct", KEYS_BY_NAME["early_pct"].default)
    if (
        not any(p.path in (f"{ROOT}.pre_pct", f"{ROOT}.early_pct") for p in problems)
        and pre > early
    ):
        problems.append(
            Problem(f"{ROOT}.early_pct", f"must be at least pre_pct ({pre}), not {early}")
        )
    return problems


@dataclass(frozen=True, slots=True)
class Policy:
    pre_pct: int = 5
    early_pct: int = 25
    late_formula: str = CHIP_EQUITY
    final_table_icm: int = 0
    late_registration: str = "ignore"
    guarantee_before_itm: str = "pool"
    middle_formula: str = CHIP_EQUITY
    middle_floor: str = "buy_in"
    middle_fee_refund: bool = False
    bounty_refund: str = "current"
    satellite_prizes: str = "tickets"

    def __post_init__(self) -> None:
        if problems := _problems({key.name: getattr(self, key.name) for key in POLICY_KEYS}):
            raise InvalidInput(problems)

    @property
    def parameters(self) -> dict:
        """Every key with its value, defaults included, in the registry's order."""
        return {key.name: getattr(self, key.name) for key in POLICY_KEYS}

    def to_dict(self) -> dict:
        """The settlement's echo: the three keys of §2–§4 always, the others when not default.

        A settlement under the default rulebook thus reads exactly as before §9 existed.
        """
        return {
            key.name: value
            for key in POLICY_KEYS
            if (value := getattr(self, key.name)) != key.default or key.name in ALWAYS_ECHOED
        }

    def differences(self, other: "Policy") -> dict[str, tuple]:
        """{key: (this value, other's value)} for every key on which the two differ."""
        return {
            key.name: (getattr(self, key.name), getattr(other, key.name))
            for key in POLICY_KEYS
            if getattr(self, key.name) != getattr(other, key.name)
        }


DEFAULT_POLICY = Policy()


def parse_policy(data: bytes | str | Mapping) -> Policy:
    """A policy from a JSON document (the `--policy` file) or an already decoded mapping.

    Missing keys take their defaults; an unknown key, a wrong type or a value outside §9's
    table is an `InvalidInput` whose problems name `--policy.KEY`.
    """
    raw = b""
    if isinstance(data, Mapping):
        doc = dict(data)
    else:
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
        try:
            doc = msgspec.json.decode(raw, type=dict)
        except msgspec.ValidationError as error:  # a subclass of DecodeError, so caught first
            raise InvalidInput([problem_from_validation(error, root=ROOT)]) from None
        except msgspec.DecodeError as error:
            raise InvalidInput(problems_from_decode_error(error, raw, root=ROOT)) from None
        # The file is a few bytes: checking it for repeated keys costs nothing.
        if repeated := duplicate_key_problems(raw, root=ROOT):
            raise InvalidInput(repeated)
    problems = [
        Problem(f"{ROOT}.{name}", "is not a policy key")
        for name in doc
        if not isinstance(name, str) or name not in KEYS_BY_NAME
    ]
    problems += _problems({name: value for name, value in doc.items() if name in KEYS_BY_NAME})
    if problems:
        raise InvalidInput(problems)
    return Policy(**doc)
