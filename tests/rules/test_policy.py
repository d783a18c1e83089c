"""The --policy document: every key optional, strict types, problems at --policy paths."""

import pytest

from settlements.rules import DEFAULT_POLICY, InvalidInput, Policy, parse_policy


def test_defaults_and_round_trip():
    assert parse_policy(b"{}") == DEFAULT_POLICY == Policy(5, 25, "chip_equity")
    policy = parse_policy('{"pre_pct": 10, "early_pct": 30, "late_formula": "chip_position"}')
    assert policy.to_dict() == {"pre_pct": 10, "early_pct": 30, "late_formula": "chip_position"}
    assert parse_policy(policy.to_dict()) == policy


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (b'{"pre_pct": 5.0}', "--policy.pre_pct"),
        (b'{"pre_pct": true}', "--policy.pre_pct"),
        (b'{"pre_pct": null}', "--policy.pre_pct"),
        (b'{"early_pct": NaN}', "--policy.early_pct"),
        (b'{"early_pct": 101}', "--policy.early_pct"),
        (b'{"pre_pct": 40}', "--policy.early_pct"),
        (b'{"late_formula": "chip_proportional"}', "--policy.late_formula"),
        (b'{"late_formula": 1}', "--policy.late_formula"),
        (b'{"late": "chip_equity"}', "--policy.late"),
        (b'{"pre_pct": 5, "pre_pct": 6}', "--policy.pre_pct"),
        (b"[]", "--policy"),
        (b"{", "--policy"),
        (b"", "--policy"),
        (b"\xff", "--policy"),
        ({"pre_pct": False}, "--policy.pre_pct"),
        ({"colour": "red"}, "--policy.colour"),
    ],
)
def test_problems_are_reported_at_policy_paths(data, path):
    with pytest.raises(InvalidInput) as rejected:
        parse_policy(data)
    assert path in [p.path for p in rejected.value.problems]
