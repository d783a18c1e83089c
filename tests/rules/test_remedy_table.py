"""The §3 table's public face: remedy_for, decision_options and split_terms, and that the
terms a person is told match what the engine computes with."""

import json

import pytest

from settlements.demo import build_snapshot
from settlements.rules import (
    DEFAULT_POLICY,
    InvalidInput,
    Policy,
    SplitTerms,
    decision_options,
    parse_snapshot,
    remedy_for,
    settle,
    split_terms,
)

TYPES = ("regular", "freeroll", "satellite")
STAGES = ("pre", "early", "middle", "late")
CHIP_POSITION = Policy(late_formula="chip_position")

# (type, stage) -> the remedy without a decision, or {option: remedy}.
EXPECTED = {
    ("regular", "pre"): "refund",
    ("regular", "early"): "refund_even_split",
    ("regular", "middle"): "chip_equity",
    ("regular", "late"): "chip_equity",
    ("freeroll", "pre"): "fpp_refund",
    ("freeroll", "early"): {"reschedule": "fpp_refund", "no_reschedule": "fpp_refund"},
    ("freeroll", "middle"): {"reschedule": "reschedule", "chip_equity": "chip_equity"},
    ("freeroll", "late"): "chip_equity",
    ("satellite", "pre"): "refund",
    ("satellite", "early"): "refund_even_split",
    ("satellite", "middle"): {
        "chip_proportional": "chip_proportional",
        "chip_equity": "chip_equity",
    },
    ("satellite", "late"): "satellite_rank",
}


def every_outcome():
    """(type, stage, decision, remedy) for each cell and each of its options."""
    for (kind, stage), expected in EXPECTED.items():
        if isinstance(expected, dict):
            for option, remedy in expected.items():
                yield kind, stage, option, remedy
        else:
            yield kind, stage, None, expected


@pytest.mark.parametrize(("kind", "stage", "decision", "remedy"), list(every_outcome()))
def test_remedy_for_every_cell_and_option(kind, stage, decision, remedy):
    assert remedy_for(kind, stage, decision=decision) == remedy


@pytest.mark.parametrize(("kind", "stage"), list(EXPECTED))
def test_decision_options_are_the_options_in_display_order(kind, stage):
    expected = EXPECTED[kind, stage]
    assert decision_options(kind, stage) == (list(expected) if isinstance(expected, dict) else [])


def test_a_pending_decision_has_no_remedy_yet():
    for kind, stage in (("freeroll", "early"), ("freeroll", "middle"), ("satellite", "middle")):
        assert remedy_for(kind, stage) is None


def test_the_late_formula_follows_the_policy_where_the_table_leaves_it_to_the_site():
    assert remedy_for("regular", "late", policy=CHIP_POSITION) == "chip_position"
    assert remedy_for("freeroll", "late", policy=CHIP_POSITION) == "chip_position"
    # Elsewhere the policy's late formula changes nothing.
    assert remedy_for("regular", "middle", policy=CHIP_POSITION) == "chip_equity"
    assert remedy_for("satellite", "late", policy=CHIP_POSITION) == "satellite_rank"


@pytest.mark.parametrize(
    ("kind", "stage", "decision", "words"),
    [
        ("regular", "middle", "chip_equity", "takes no decision"),
        ("freeroll", "early", "chip_equity", "choose reschedule or no_reschedule"),
        ("satellite", "middle", "reschedule", "choose chip_proportional or chip_equity"),
        ("freeroll", "middle", "", "choose reschedule or chip_equity"),
    ],
)
def test_a_decision_not_taken_or_not_offered_is_a_decision_problem(kind, stage, decision, words):
    with pytest.raises(InvalidInput) as error:
        remedy_for(kind, stage, decision=decision)
    [problem] = error.value.problems
    assert problem.path == "--decision"
    assert words in problem.message


def test_an_unknown_cell_is_a_programming_error():
    with pytest.raises(ValueError, match="'final'"):
        remedy_for("regular", "final")
    with pytest.raises(ValueError, match="'knockout'"):
        decision_options("knockout", "pre")


@pytest.mark.parametrize(("kind", "stage", "decision", "remedy"), list(every_outcome()))
def test_the_engine_settles_with_the_remedy_remedy_for_names(kind, stage, decision, remedy):
    snapshot = parse_snapshot(json.dumps(build_snapshot(type=kind, stage=stage)))
    assert settle(snapshot, decision=decision).remedy == remedy


# --- Split terms ------------------------------------------------------------------------------

EARLY = SplitTerms("pool_less_refunds", floor=None, cap=None, fees_refunded=True)
LATE = SplitTerms("late_pool", floor="next_payout", cap="first_prize", fees_refunded=False)


@pytest.mark.parametrize(
    ("kind", "stage", "remedy", "terms"),
    [
        ("regular", "early", "refund_even_split", EARLY),
        ("satellite", "early", "refund_even_split", EARLY),
        (
            "regular",
            "middle",
            "chip_equity",
            SplitTerms("prize_pool", floor="buy_in", cap="first_prize", fees_refunded=False),
        ),
        (
            "freeroll",
            "middle",
            "chip_equity",
            SplitTerms("prize_pool", floor=None, cap="first_prize", fees_refunded=False),
        ),
        (
            "satellite",
            "middle",
            "chip_proportional",
            SplitTerms("prize_pool", floor=None, cap="one_seat", fees_refunded=False),
        ),
        (
            "satellite",
            "middle",
            "chip_equity",
            SplitTerms("prize_pool", floor=None, cap="one_seat", fees_refunded=False),
        ),
        ("regular", "late", "chip_equity", LATE),
        ("regular", "late", "chip_position", LATE),
        ("freeroll", "late", "chip_equity", LATE),
        ("freeroll", "late", "chip_position", LATE),
    ],
)
def test_split_terms_of_every_split(kind, stage, remedy, terms):
    assert split_terms(kind, stage, remedy) == terms


@pytest.mark.parametrize(
    ("kind", "stage", "remedy"),
    [
        ("regular", "pre", "refund"),
        ("satellite", "pre", "refund"),
        ("freeroll", "pre", "fpp_refund"),
        ("freeroll", "early", "fpp_refund"),
        ("freeroll", "middle", "reschedule"),
        ("satellite", "late", "satellite_rank"),
        ("freeroll", "middle", None),  # the decision is still pending
    ],
)
def test_a_remedy_that_is_not_a_split_has_no_split_terms(kind, stage, remedy):
    assert split_terms(kind, stage, remedy) is None


@pytest.mark.parametrize(
    ("kind", "stage", "remedy"),
    [
        # chip_proportional is the §9 middle_formula's other value; chip_position never is.
        ("regular", "middle", "chip_position"),
        ("satellite", "middle", "reschedule"),
        ("regular", "pre", "chip_equity"),
        ("regular", "middle", None),
    ],
)
def test_a_remedy_the_cell_never_pays_has_no_terms_to_borrow(kind, stage, remedy):
    with pytest.raises(ValueError, match="never pays"):
        split_terms(kind, stage, remedy)


@pytest.mark.parametrize(
    ("kind", "stage", "decision", "remedy"),
    [outcome for outcome in every_outcome() if split_terms(*outcome[:2], outcome[3])],
)
@pytest.mark.parametrize("policy", [DEFAULT_POLICY, CHIP_POSITION])
def test_the_engine_pays_what_the_split_terms_say(kind, stage, decision, remedy, policy):
    """Guaranteed amount, cap and refunds, read off the engine's own output."""
    document = build_snapshot(type=kind, stage=stage, entrants=40)
    snapshot = parse_snapshot(json.dumps(document))
    result = settle(snapshot, decision=decision, policy=policy)
    terms = split_terms(kind, stage, result.remedy)
    tournament = document["tournament"]
    remaining = sum(1 for player in document["players"] if player["chips"])
    payouts = tournament.get("payouts", [])
    floor = {
        None: 0,
        "buy_in": tournament.get("buy_in"),
        "next_payout": payouts[remaining - 1] if remaining <= len(payouts) else 0,
    }[terms.floor]
    cap = {
        None: None,
        "first_prize": payouts[0] if payouts else None,
        "one_seat": tournament.get("seat_value"),
    }[terms.cap]
    explanations = list(result.explanations.values())
    assert len(explanations) == remaining
    assert {explanation.guaranteed for explanation in explanations} == {floor}
    if cap is not None:
        assert max(explanation.rounded for explanation in explanations) <= cap
    refunds = {line.kind for line in result.lines} & {"refund_buy_in", "refund_fee"}
    assert bool(refunds) == terms.fees_refunded
