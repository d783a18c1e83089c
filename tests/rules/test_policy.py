"""The --policy document: every key optional, strict types, problems at --policy paths."""

import pytest

from settlements.rules import DEFAULT_POLICY, POLICY_KEYS, InvalidInput, Policy, parse_policy


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


def test_the_registry_is_the_policy():
    assert list(DEFAULT_POLICY.parameters) == [key.name for key in POLICY_KEYS]
    assert DEFAULT_POLICY.parameters == {key.name: key.default for key in POLICY_KEYS}
    assert all(key.explanation and key.allowed() for key in POLICY_KEYS)


def test_echo_holds_the_three_keys_and_what_differs():
    assert DEFAULT_POLICY.to_dict() == {
        "pre_pct": 5,
        "early_pct": 25,
        "late_formula": "chip_equity",
    }
    policy = parse_policy(
        {"final_table_icm": 9, "middle_fee_refund": True, "middle_floor": "buy_in"}
    )
    assert policy.to_dict() == {
        "pre_pct": 5,
        "early_pct": 25,
        "late_formula": "chip_equity",
        "final_table_icm": 9,
        "middle_fee_refund": True,
    }
    assert parse_policy(policy.to_dict()) == policy
    assert parse_policy(policy.parameters) == policy
    assert policy.differences(DEFAULT_POLICY) == {
        "final_table_icm": (9, 0),
        "middle_fee_refund": (True, False),
    }
    assert DEFAULT_POLICY.differences(DEFAULT_POLICY) == {}


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"final_table_icm": 1}, "--policy.final_table_icm"),
        ({"final_table_icm": 11}, "--policy.final_table_icm"),
        ({"final_table_icm": True}, "--policy.final_table_icm"),
        ({"middle_formula": "icm"}, "--policy.middle_formula"),
        ({"middle_fee_refund": "yes"}, "--policy.middle_fee_refund"),
        ({"middle_fee_refund": 0}, "--policy.middle_fee_refund"),
        ({"late_registration": True}, "--policy.late_registration"),
        ({"guarantee_before_itm": "overlay"}, "--policy.guarantee_before_itm"),
        ({"middle_floor": None}, "--policy.middle_floor"),
        ({"bounty_refund": "all"}, "--policy.bounty_refund"),
        ({"satellite_prizes": "seats"}, "--policy.satellite_prizes"),
    ],
)
def test_section_9_values_outside_the_table_are_refused(data, path):
    with pytest.raises(InvalidInput) as rejected:
        parse_policy(data)
    assert [p.path for p in rejected.value.problems] == [path]
