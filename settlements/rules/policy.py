"""Site policy: the stage thresholds of RULES.md §2 and the late-stage formula of §4.

A site may change these; every settlement records the policy it was computed with.
"""

from collections.abc import Mapping
from dataclasses import dataclass

import msgspec

from .errors import InvalidInput, Problem
from .jsondoc import duplicate_key_problems, problem_from_validation, problems_from_decode_error

LATE_FORMULAS = ("chip_equity", "chip_position")
ROOT = "--policy"


@dataclass(frozen=True, slots=True)
class Policy:
    pre_pct: int = 5
    early_pct: int = 25
    late_formula: str = "chip_equity"

    def __post_init__(self) -> None:
        if problems := _policy_problems(self.pre_pct, self.early_pct, self.late_formula):
            raise InvalidInput(problems)

    def to_dict(self) -> dict:
        return {
            "pre_pct": self.pre_pct,
            "early_pct": self.early_pct,
            "late_formula": self.late_formula,
        }


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _policy_problems(pre_pct: object, early_pct: object, late_formula: object) -> list[Problem]:
    problems = []
    for key, value in (("pre_pct", pre_pct), ("early_pct", early_pct)):
        if not _is_int(value) or not 0 <= value <= 100:
            problems.append(Problem(f"{ROOT}.{key}", "must be a whole percentage from 0 to 100"))
    if not problems and pre_pct > early_pct:
        problems.append(
            Problem(f"{ROOT}.early_pct", f"must be at least pre_pct ({pre_pct}), not {early_pct}")
        )
    if late_formula not in LATE_FORMULAS:
        problems.append(Problem(f"{ROOT}.late_formula", "must be " + " or ".join(LATE_FORMULAS)))
    return problems


DEFAULT_POLICY = Policy()


class _PolicyDoc(msgspec.Struct, forbid_unknown_fields=True):
    pre_pct: int = DEFAULT_POLICY.pre_pct
    early_pct: int = DEFAULT_POLICY.early_pct
    late_formula: str = DEFAULT_POLICY.late_formula


def parse_policy(data: bytes | str | Mapping) -> Policy:
    """A policy from a JSON document (the `--policy` file) or an already decoded mapping."""
    raw = b""
    try:
        if isinstance(data, Mapping):
            doc = msgspec.convert(dict(data), _PolicyDoc, strict=True)
        else:
            raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
            doc = msgspec.json.decode(raw, type=_PolicyDoc)
    except msgspec.ValidationError as error:  # a subclass of DecodeError, so caught first
        raise InvalidInput([problem_from_validation(error, root=ROOT)]) from None
    except msgspec.DecodeError as error:
        raise InvalidInput(problems_from_decode_error(error, raw, root=ROOT)) from None
    # The file is a few bytes: checking it for repeated keys costs nothing.
    if raw and (repeated := duplicate_key_problems(raw, root=ROOT)):
        raise InvalidInput(repeated)
    return Policy(doc.pre_pct, doc.early_pct, doc.late_formula)
