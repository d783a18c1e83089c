"""Statements of crash-snapshot/2 settlements (RULES.md §8): every spec example's statements
add up and print true arithmetic, and the worked example says what the player bought, what
comes back first and the bounty, in words and figures."""

import json
from pathlib import Path

import pytest

from settlements.rules import parse_snapshot, settle
from tests.statement_helpers import from_engine

from .test_statements import arithmetic_holds

EXAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "spec" / "examples-v2"
SETTLED = sorted(
    p.name.removesuffix(".snapshot.json")
    for p in EXAMPLES.glob("*.snapshot.json")
    if "exit" not in json.loads((EXAMPLES / p.name.replace("snapshot", "expected")).read_text())
)


def statements_of(name: str) -> dict:
    snapshot = parse_snapshot((EXAMPLES / f"{name}.snapshot.json").read_bytes())
    args = (EXAMPLES / f"{name}.args").read_text().split()
    options = dict(zip(args[::2], args[1::2], strict=True))
    result = settle(snapshot, decision=options.get("--decision"))
    return {s.player: s for s in from_engine(result, snapshot)}


def test_the_examples_are_there():
    assert len(SETTLED) >= 7


@pytest.mark.parametrize("name", SETTLED)
def test_every_statement_of_every_example_adds_up(name):
    for statement in statements_of(name).values():
        arithmetic_holds(statement)
        if statement.parts:
            # The review's columns add up to what the player is paid in cash and T$.
            paid = statement.totals.get("cash", 0) + statement.totals.get("tdollars", 0)
            assert sum(part.amount for part in statement.parts) == paid


def test_the_worked_example_explains_buy_ins_share_and_bounty():
    a = statements_of("31-rebuy-ko-regular-middle-worked-example")["a"]
    words = " ".join(" ".join(section.paragraphs) for section in a.sections)
    assert "You bought in twice and took one add-on: 30.00 USD back first" in words
    assert "Your own bounty of 12.50 USD is paid back to you" in words
    assert [(part.code, part.amount) for part in a.parts] == [
        ("guaranteed", 3000),
        ("share", 2334),
        ("bounty", 1250),
    ]
    assert {step.label: step.result for step in a.steps}["Plus your own bounty, returned"] == 1250


def test_a_refund_before_the_start_counts_every_entry_add_on_and_bounty():
    statements = statements_of("32-rebuy-ko-regular-pre")
    p03 = statements["p03"]  # two entries: 2 × (10.00 + 1.00 + 6.00)
    assert p03.headline.startswith("You get 34.00 USD back. You bought in twice:")
    assert "12.00 USD of entry bounties" in p03.headline
    arithmetic_holds(p03)


def test_an_early_split_refunds_each_players_own_entries():
    r00 = statements_of("33-rebuy-regular-early-overlay")["r00"]
    words = " ".join(" ".join(section.paragraphs) for section in r00.sections)
    assert "You bought in 3 times: 49.50 USD back first" in words
    assert r00.parts[0].amount == 4950


def test_a_player_whose_buy_ins_exceed_the_first_prize_is_told_why_they_get_them_back():
    statements = statements_of("37-rebuy-regular-middle-own-buy-ins-above-first-prize")
    whale = statements["whale"]
    words = " ".join(" ".join(section.paragraphs) for section in whale.sections)
    assert "You bought in 9 times and took one add-on: 100.00 USD back first" in words
    assert "you get the cap, 100.00 USD" in words
    other = " ".join(" ".join(s.paragraphs) for s in statements["m1"].sections)
    assert "1 player was held at their cap (100.00 USD in all)" in other
