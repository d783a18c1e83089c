"""Statements (settlements.statements), built straight from the engine: every entrant of every
cell gets one, its amounts are their ledger lines, and its arithmetic, evaluated, gives the
amount before rounding."""

import json
from dataclasses import replace
from fractions import Fraction
from math import floor

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from settlements import statements
from settlements.rules import Policy, parse_snapshot, settle
from tests.rules.builders import freeroll, regular, satellite
from tests.rules.test_properties import (
    PROPERTY_SETTINGS,
    policies,
    prize_list,
    settle_any,
    snapshots,
)
from tests.statement_helpers import evaluate, from_engine


def statements_of(document: dict, **options) -> dict[str, statements.Statement]:
    snapshot = parse_snapshot(json.dumps(document))
    result = settle(snapshot, **options)
    return {s.player: s for s in from_engine(result, snapshot)}


def arithmetic_holds(statement: statements.Statement) -> None:
    currency = statement.settlement.currency
    for step in statement.steps:
        assert evaluate(step.expression, currency) == step.result, step


def value_paid(statement: statements.Statement) -> int:
    totals = statement.totals
    if "fpp" in totals:
        return totals["fpp"]
    basis = statement.settlement.basis
    return (
        totals.get("cash", 0)
        + totals.get("tdollars", 0)
        + totals.get("tickets", 0) * (basis.seat_value)
    )


# --- By hand -------------------------------------------------------------------------------


def test_the_worked_example_prints_its_inputs():
    # RULES.md §7: a gets 20.00 first, then 40.00 ÷ 2 ÷ 3 + 40.00 ÷ 2 × 60,000 ÷ 100,000.
    document = regular([60000, 30000, 10000] + [0] * 7, payouts=[5000, 3000, 2000])
    a = statements_of(document)["p01"]
    assert a.kind == statements.SHARE
    assert [(p.code, p.amount) for p in a.parts] == [("guaranteed", 2000), ("share", 1867)]
    assert a.steps[-1].expression == "20.00 + 40.00 ÷ 2 ÷ 3 + 40.00 ÷ 2 × 60,000 ÷ 100,000"
    assert a.exact == Fraction(11600, 3)
    assert a.totals == {"cash": 3867}
    assert "one of the cents left over" in a.rounding
    arithmetic_holds(a)
    text = a.text()
    assert "60,000 chips out of the 100,000 chips of all the players" in text
    assert "In all: 38.67 USD." in text


def test_a_player_knocked_out_gets_an_answer_not_a_blank():
    document = regular([60000, 30000, 10000] + [0] * 7, payouts=[5000, 3000, 2000])
    out = statements_of(document)["p04"]
    assert out.kind == statements.KNOCKED_OUT
    assert out.amounts == () and out.steps == ()
    assert "paid your prize when you went out" in out.text()
    assert "In all: nothing." in out.text()


def test_the_middle_stage_names_the_buy_in_apart_from_the_share():
    # P = 20 × 1000; 15 out of 20: middle. Each of 5 gets 1000 first, 15000 shared.
    document = regular([500, 400, 300, 200, 100] + [0] * 15, payouts=[10000, 6000, 4000])
    result = statements_of(document)
    first = result["p01"]
    assert first.parts[0].label == "Buy-in back" and first.parts[0].amount == 1000
    assert sum(p.amount for p in first.parts) == first.totals["cash"]
    assert "Fee" not in first.amounts_text


def test_a_capped_player_is_told_where_the_excess_went():
    document = regular([9000, 10, 10, 0, 0, 0], payouts=[2200, 2000, 1300, 500])
    result = statements_of(document)
    capped, other = result["p01"], result["p02"]
    assert capped.exact == 2200 and capped.totals == {"cash": 2200}
    assert "more than the cap" in capped.text()
    assert "1 player was held at the cap of 22.00 USD (the first prize)" in other.text()
    assert any(step.expression == "55.00 − 1 × 22.00 − 2 × 13.00" for step in other.steps)
    arithmetic_holds(other)


def test_an_early_split_adds_the_refunds_to_the_equal_share():
    # 20 entrants, 18 still in: B + F back, and (20000 − 18 × 1000) ÷ 18 each.
    result = statements_of(regular([100] * 18 + [0, 0], payouts=[20000]))
    first = result["p01"]
    assert first.steps[0].expression == "200.00 − 18 × 10.00"
    assert first.steps[-1].expression == "10.00 + 1.00 + 20.00 ÷ 18"
    assert [p.amount for p in first.parts] == [1100, 112]
    assert first.totals == {"cash": 1212}
    knocked_out = result["p19"]
    assert knocked_out.kind == statements.KNOCKED_OUT
    assert "buy-ins of the players knocked out stay in the prize pool" in knocked_out.text()


def test_a_refund_before_the_start_includes_the_knocked_out():
    result = statements_of(regular([100] * 98 + [0, 0]))
    out = result["p99"]
    assert out.kind == statements.REFUND and out.totals == {"cash": 1100}
    assert out.steps[0].expression == "10.00 + 1.00"
    assert "knocked out are refunded too" in out.text()


def test_satellite_seat_winners_and_the_bubble():
    # P = 20000, V = 6000: 3 seats and 2000 over; p03 and p04 tie for places 3 and 4.
    result = statements_of(satellite([30000, 20000, 10000, 10000] + [0] * 16, seat_value=6000))
    winner, bubble = result["p01"], result["p03"]
    assert winner.kind == statements.SEAT_RANK and winner.totals == {"tickets": 1}
    assert "you were in place 1" in winner.text()
    assert bubble.steps[-1].expression == "(60.00 + 20.00) ÷ 2"
    assert bubble.totals == {"tdollars": 4000}
    assert "less than a seat" in bubble.text()


def test_a_satellite_share_above_a_seat_is_a_seat_and_tdollars():
    document = satellite([20000, 15000, 9000, 7000, 5000, 3000, 1000] + [0] * 13)
    leader = statements_of(document, decision="chip_proportional")["p01"]
    assert leader.totals == {"tickets": 1}
    assert "the value of one seat" in leader.text()


def test_a_rescheduled_freeroll_tells_who_is_invited():
    document = freeroll([300, 200, 100] + [0] * 5, payouts=[6000, 4000])
    result = statements_of(document, decision="reschedule")
    assert result["p01"].kind == statements.RESCHEDULED
    assert result["p01"].amounts == ()
    assert "No FPP buy-in is given back" in result["p01"].text()


def test_a_freeroll_refunds_points():
    result = statements_of(freeroll([300] * 99 + [0]))
    out = result["p100"]
    assert out.kind == statements.REFUND and out.totals == {"fpp": 250}
    assert out.exact == 250


def test_chip_position_weighs_tied_places_by_their_mean_prize():
    # p01 and p02 tie for places 1 and 2 of three prizes: weight (25.00 + 15.00) ÷ 2.
    document = regular([50, 50, 10, 0, 0], payouts=[2500, 1500, 1000])
    result = statements_of(document, policy=Policy(late_formula="chip_position"))
    tied = result["p01"]
    assert "the prize of places 1 to 2" in tied.text()
    arithmetic_holds(tied)
    assert tied.steps[-1].result == tied.exact


@pytest.mark.parametrize(
    ("player", "shown"),
    [("alice", ""), ("\u0430lice", "\\u0430lice"), ("bob ", "bob\\u0020")],
)
def test_look_alike_ids_are_written_out(player, shown):
    document = regular([{"id": player, "chips": 10}, {"id": "zed", "chips": 0}], started=False)
    statement = statements_of(document)[player]
    assert statement.player_escaped == shown
    assert (f"written out: {shown}" in statement.text()) == bool(shown)


def test_a_settlement_kept_without_its_basis_still_answers_from_its_lines():
    # Settlements prepared before the engine's basis was kept: words and the ledger lines,
    # without arithmetic that could not be shown from the engine's own figures.
    document = regular([500, 400, 300, 200, 100] + [0] * 15, payouts=[10000, 6000, 4000])
    snapshot = parse_snapshot(json.dumps(document))
    result = settle(snapshot)
    built = {s.player: s for s in from_engine(result, snapshot)}
    old = replace(built["p01"].settlement, basis=None)
    lines = built["p01"].lines
    statement = statements.build(old, statements.PlayerFacts("p01", 500, None, lines))
    assert statement.totals == built["p01"].totals and statement.steps == ()
    assert "a regular tournament, crashed" in statement.text()
    assert (
        "first gets back every buy-in they paid" in statement.text()
    )  # the policy's words still hold


def test_the_evaluator_reads_amounts_and_counts():
    assert evaluate("40.00 ÷ 2 × 60,000 ÷ 100,000", "USD") == 1200
    assert evaluate("(60.00 + 20.00) ÷ 2", "USD") == 4000
    assert evaluate("1,000 − 2 × 3", "JPY") == 994
    with pytest.raises(ValueError):
        evaluate("40.00 ÷", "USD")


# --- Every cell, at random --------------------------------------------------------------------

CELLS = [
    (kind, stage)
    for kind in ("regular", "freeroll", "satellite")
    for stage in ("pre", "early", "middle", "late")
]


@st.composite
def cell_snapshots(draw, kind: str, stage: str) -> dict:
    """A valid snapshot that the default policy puts at ``stage``."""
    entrants = draw(st.integers(8, 60))
    least_out = -(-5 * entrants // 100)  # 100·E >= 5·N
    middle_out = -(-25 * entrants // 100)  # 100·E >= 25·N
    started = True
    if stage == "pre":
        started = draw(st.booleans())
        eliminated = draw(st.integers(0, least_out - 1)) if started else 0
    elif stage == "early":
        eliminated = draw(st.integers(least_out, middle_out - 1))
    elif stage == "middle":
        eliminated = draw(st.integers(middle_out, entrants - 2))
    else:
        eliminated = draw(st.integers(least_out, entrants - 1))
    remaining = entrants - eliminated
    in_money = stage == "late"
    tournament: dict = {"id": "T-cell", "type": kind, "currency": "EUR", "started": started}
    if kind == "freeroll":
        places = draw(st.integers(remaining, remaining + 3) if in_money else st.integers(1, 3))
        pool = draw(st.integers(places, 10**6))
        tournament.update(prize_pool=pool, fpp_buy_in=draw(st.integers(0, 1000)))
    else:
        tournament.update(buy_in=draw(st.integers(1, 5000)), fee=draw(st.integers(0, 500)))
        pool = entrants * tournament["buy_in"]
        if draw(st.booleans()):
            tournament["guarantee"] = draw(st.integers(0, 2 * pool))
            pool = max(pool, tournament["guarantee"])
    if kind == "satellite":
        # Late: S <= R <= M = S (+1 with a remainder). Otherwise R > M, and S <= R always.
        seats = draw(
            st.integers(max(1, remaining - 1), remaining)
            if in_money
            else st.integers(1, max(1, remaining - 2))
        )
        low, high = pool // (seats + 1) + 1, pool // seats
        assume(low <= high)
        value = draw(st.integers(low, high))
        assume(remaining <= seats + (1 if pool % value else 0) if in_money else True)
        assume(stage == "pre" or remaining > seats + (1 if pool % value else 0) or in_money)
        tournament["seat_value"] = value
    else:
        if kind == "regular":
            places = draw(
                st.integers(remaining, remaining + 3) if in_money else st.integers(1, remaining - 1)
            )
        assume(places <= pool and (in_money or places < remaining))
        tournament["payouts"] = prize_list(draw, pool, places)
    stack = st.integers(1, draw(st.sampled_from([3, 50, 10**6])))
    chips = draw(st.lists(stack, min_size=remaining, max_size=remaining)) + [0] * eliminated
    prefixes = draw(
        st.lists(st.text(alphabet="abAB:_09é а", max_size=3), min_size=entrants, max_size=entrants)
    )
    order = draw(st.permutations(range(entrants)))
    players = [{"id": f"{prefixes[i]}#{i}", "chips": chips[k]} for k, i in enumerate(order)]
    return {"format": "crash-snapshot/1", "tournament": tournament, "players": players}


@pytest.mark.parametrize(("kind", "stage"), CELLS)
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_every_statement_of_every_cell_adds_up_to_the_ledger_lines(kind, stage, data):
    document = data.draw(cell_snapshots(kind, stage))
    policy = data.draw(st.sampled_from([Policy(), Policy(late_formula="chip_position")]))
    result = settle_any(document, policy, lambda options: data.draw(st.sampled_from(options)))
    assert result is not None and result.stage == stage
    assert_statements_hold(document, result)


@PROPERTY_SETTINGS
@given(document=snapshots(), policy=policies(), data=st.data())
def test_statements_hold_under_any_policy(document, policy, data):
    result = settle_any(document, policy, lambda options: data.draw(st.sampled_from(options)))
    if result is not None:
        assert_statements_hold(document, result)


def assert_statements_hold(document: dict, result) -> None:
    snapshot = parse_snapshot(json.dumps(document))
    built = from_engine(result, snapshot)
    assert sorted(s.player for s in built) == sorted(p["id"] for p in document["players"])
    lines: dict[str, dict[str, int]] = {}
    for line in result.lines:
        totals = lines.setdefault(line.player, {})
        totals[line.unit] = totals.get(line.unit, 0) + line.amount
    for statement in built:
        # The amounts by unit are exactly the player's ledger lines.
        assert statement.totals == lines.get(statement.player, {})
        arithmetic_holds(statement)
        if statement.exact is not None:
            # The last step gives the amount before rounding, which rounds to what is paid.
            assert statement.steps[-1].result == statement.exact
            explained = result.explanations.get(statement.player)
            cent = explained.rounding_cent if explained else 0
            assert value_paid(statement) == floor(statement.exact) + cent
        if statement.parts:
            assert sum(part.amount for part in statement.parts) == value_paid(statement)
        if statement.kind == statements.KNOCKED_OUT:
            assert statement.chips == 0 and not statement.amounts
        if statement.amounts:
            assert statement.exact is not None
        assert statement.amounts_text in statement.text()
