"""RULES.md §2: stage boundaries, evaluated in order, with the policy's thresholds."""

import pytest

from settlements.rules import DEFAULT_POLICY, InvalidInput, Policy, assess, parse_snapshot
from settlements.rules.stage import classify

from .builders import encode, freeroll, regular, satellite


def stage(entrants, eliminated, paid_places, *, started=True, policy=DEFAULT_POLICY):
    return classify(
        started=started,
        entrants=entrants,
        eliminated=eliminated,
        remaining=entrants - eliminated,
        paid_places=paid_places,
        policy=policy,
    )


@pytest.mark.parametrize(
    ("entrants", "eliminated", "expected"),
    [
        (100, 0, "pre"),
        (100, 4, "pre"),
        (100, 5, "early"),  # exactly 5 %
        (20, 1, "early"),  # exactly 5 % of 20
        (21, 1, "pre"),  # 4.76 %
        (100, 24, "early"),
        (100, 25, "middle"),  # exactly 25 %
        (20, 5, "middle"),
        (21, 5, "early"),  # 23.8 %
        (100, 80, "middle"),
    ],
)
def test_thresholds_with_integer_arithmetic(entrants, eliminated, expected):
    assert stage(entrants, eliminated, paid_places=3) == expected


def test_late_when_every_remaining_player_is_in_the_money():
    assert stage(100, 97, paid_places=3) == "late"  # R = M
    assert stage(100, 96, paid_places=3) == "middle"  # R = M + 1
    assert stage(100, 99, paid_places=3) == "late"  # R < M


def test_late_is_checked_before_early():
    assert stage(100, 10, paid_places=90) == "late"
    assert stage(100, 10, paid_places=89) == "early"


def test_pre_is_checked_before_late():
    assert stage(10, 0, paid_places=10) == "pre"
    assert stage(10, 9, paid_places=10, started=False) == "pre"


def test_not_started_is_pre_whatever_the_eliminations():
    assert stage(100, 60, paid_places=3, started=False) == "pre"


def test_policy_thresholds_move_the_boundaries():
    policy = Policy(pre_pct=10, early_pct=30)
    assert stage(100, 9, 3, policy=policy) == "pre"
    assert stage(100, 10, 3, policy=policy) == "early"
    assert stage(100, 29, 3, policy=policy) == "early"
    assert stage(100, 30, 3, policy=policy) == "middle"


def test_zero_thresholds_skip_stages():
    assert stage(100, 0, 3, policy=Policy(pre_pct=0, early_pct=0)) == "middle"
    assert stage(100, 0, 3, policy=Policy(pre_pct=0, early_pct=25)) == "early"
    assert stage(100, 99, 3, policy=Policy(pre_pct=100, early_pct=100)) == "pre"
    assert stage(100, 20, 3, policy=Policy(pre_pct=25, early_pct=25)) == "pre"
    assert stage(100, 25, 3, policy=Policy(pre_pct=25, early_pct=25)) == "middle"


def test_assess_reports_the_terms_and_the_pending_decision():
    a = assess(parse_snapshot(encode(freeroll([5, 5, 5, 5, 5, 5, 0, 0, 0, 0]))))
    assert (a.stage, a.entrants, a.eliminated, a.remaining) == ("middle", 10, 4, 6)
    assert (a.paid_places, a.pool, a.pre_pct, a.early_pct) == (1, 10000, 5, 25)
    assert a.decision_options == ["reschedule", "chip_equity"]
    b = assess(parse_snapshot(encode(regular([5] * 10))), Policy(pre_pct=0, early_pct=0))
    assert (b.stage, b.decision_options, b.pre_pct) == ("middle", [], 0)


def test_satellite_paid_places_count_the_remainder_place():
    # P = 20 × 1000 = 20000, V = 6000: S = 3 seats and a remainder of 2000, so M = 4.
    chips = [9, 8, 7, 6, 5] + [0] * 15
    assert assess(parse_snapshot(encode(satellite(chips, seat_value=6000)))).stage == "middle"
    assert (
        assess(parse_snapshot(encode(satellite(chips[1:] + [0], seat_value=6000)))).stage == "late"
    )
    # V = 5000 divides P: M = S = 4, so four remaining players are late.
    assert (
        assess(parse_snapshot(encode(satellite(chips[1:] + [0], seat_value=5000)))).stage == "late"
    )


def test_a_satellite_past_pre_with_fewer_players_than_seats_is_rejected():
    chips = [9, 8, 7] + [0] * 17  # S = 4 seats, R = 3
    with pytest.raises(InvalidInput) as rejected:
        assess(parse_snapshot(encode(satellite(chips, seat_value=5000))))
    assert [p.path for p in rejected.value.problems] == ["players"]
    # Before the start the same snapshot is a plain refund.
    not_started = satellite(chips, seat_value=5000, started=False)
    assert assess(parse_snapshot(encode(not_started))).stage == "pre"


def test_policy_validation():
    for kwargs, path in [
        ({"pre_pct": -1}, "--policy.pre_pct"),
        ({"early_pct": 101}, "--policy.early_pct"),
        ({"pre_pct": 30, "early_pct": 20}, "--policy.early_pct"),
        ({"pre_pct": True}, "--policy.pre_pct"),
        ({"late_formula": "even"}, "--policy.late_formula"),
    ]:
        with pytest.raises(InvalidInput) as rejected:
            Policy(**kwargs)
        assert [p.path for p in rejected.value.problems] == [path]
