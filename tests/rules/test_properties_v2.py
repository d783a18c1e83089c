"""RULES.md §8's properties over generated crash-snapshot/2 documents: the sums, each player's
bounds, order independence, and version 1's settlements unchanged by §8's defaults."""

import json
import random
from collections import Counter, defaultdict

from hypothesis import assume, event, given
from hypothesis import strategies as st

from settlements.rules import InvalidInput, Policy, assess, parse_snapshot, settle

from .builders import line_sums
from .test_properties import PROPERTY_SETTINGS, policies, prize_list, snapshots


@st.composite
def v2_snapshots(draw) -> dict:
    """A regular or satellite snapshot with rebuys, add-ons and bounties, its pool and payouts
    (or seat value) worked out again from every entry and add-on."""
    document = draw(snapshots())
    t = document["tournament"]
    assume(t["type"] != "freeroll")
    document["format"] = "crash-snapshot/2"
    players = document["players"]
    sells = draw(st.booleans())
    if sells:
        t["add_on"] = draw(st.integers(0, 3000))
        if draw(st.booleans()):
            t["add_on_fee"] = draw(st.integers(0, 300))
    bounty = draw(st.sampled_from([0, 1, 250, 1000]))
    if bounty:
        t["entry_bounty"] = bounty
    for player in players:
        entries = draw(st.integers(1, 4))
        if entries > 1 or draw(st.booleans()):
            player["entries"] = entries
        if sells:
            player["add_ons"] = draw(st.integers(0, 2))
    entries = sum(p.get("entries", 1) for p in players)
    if bounty:
        # Each remaining head holds K at least; knock-outs move the rest of the entries' money.
        spare = bounty * (entries - sum(1 for p in players if p["chips"]))
        for player in players:
            if player["chips"]:
                extra = draw(st.integers(0, spare))
                spare -= extra
                player["bounty"] = bounty + extra
    paid = entries * t["buy_in"] + sum(p.get("add_ons", 0) for p in players) * t.get("add_on", 0)
    pool = max(paid, t.get("guarantee", 0))
    if t["type"] == "regular":
        t["payouts"] = prize_list(draw, pool, min(len(t["payouts"]), pool))
    else:
        remaining = sum(1 for p in players if p["chips"])
        seats = draw(st.integers(1, min(pool, remaining)))
        most = pool // seats
        t["seat_value"] = draw(st.integers(min(most, pool // (seats + 1) + 1), most))
    return document


def settle_v2(document: dict, policy: Policy, choose):
    snapshot = parse_snapshot(json.dumps(document))
    try:
        assessment = assess(snapshot, policy)
    except InvalidInput as error:
        assert [p.path for p in error.problems] == ["players"]
        return None
    decision = choose(assessment.decision_options) if assessment.decision_options else None
    event(f"{document['tournament']['type']} {assessment.stage}")
    return settle(snapshot, decision=decision, policy=policy)


def by_kind(result) -> dict[str, Counter]:
    """line kind -> player -> amount (tickets counted as seats)."""
    kinds: dict[str, Counter] = defaultdict(Counter)
    for line in result.lines:
        kinds[line.kind][line.player] += line.amount
    return kinds


@PROPERTY_SETTINGS
@given(document=v2_snapshots(), policy=policies(), data=st.data())
def test_section_8_sums_and_bounds(document, policy, data):
    result = settle_v2(document, policy, lambda options: data.draw(st.sampled_from(options)))
    if result is None:
        return
    t = document["tournament"]
    k, b, f = t.get("entry_bounty", 0), t["buy_in"], t["fee"]
    a, g = t.get("add_on", 0), t.get("add_on_fee", 0)
    players = {p["id"]: p for p in document["players"]}
    paid = {i: p.get("entries", 1) * b + p.get("add_ons", 0) * a for i, p in players.items()}
    fees = {i: p.get("entries", 1) * f + p.get("add_ons", 0) * g for i, p in players.items()}
    remaining = {i for i, p in players.items() if p["chips"]}
    kinds = by_kind(result)

    # Rows are the sums of their lines; no zero lines; the pool pays no more than it holds.
    rows = defaultdict(Counter)
    for line in result.lines:
        assert line.amount > 0
        rows[line.player][line.unit] += line.amount
    assert result.line_totals == line_sums(result)
    for row in result.payouts:
        assert (row.cash, row.tdollars, row.tickets) == tuple(
            rows[row.player][u] for u in ("cash", "tdollars", "tickets")
        )
    pool_paid = sum(
        line.amount * (t.get("seat_value", 0) if line.kind == "ticket" else 1)
        for line in result.lines
        if line.source == "pool"
    )
    assert pool_paid == result.pool_distributed <= result.pool

    if result.stage == "pre":
        assert kinds["refund_buy_in"] == +Counter(paid)
        assert kinds["refund_fee"] == +Counter(fees)
        refunds = {i: p.get("entries", 1) * k for i, p in players.items()}
        assert kinds["refund_bounty"] == +Counter(refunds)
        assert not kinds["bounty"]
        return
    assert not kinds["refund_bounty"]
    if result.remedy is not None:
        # Every remaining player's head, and nobody else's, is paid to them.
        heads = {i: p.get("bounty", 0) for i, p in players.items() if i in remaining}
        assert kinds["bounty"] == +Counter(heads)
    if result.remedy == "refund_even_split":
        assert kinds["refund_buy_in"] == +Counter({i: paid[i] for i in remaining})
        assert kinds["refund_fee"] == +Counter({i: fees[i] for i in remaining})
        assert result.pool_distributed == result.pool
    if t["type"] == "regular" and result.stage == "middle":
        first = t["payouts"][0]
        for player in remaining:
            prize = kinds["prize"][player]
            assert paid[player] <= prize <= max(first, paid[player])
        assert sum(kinds["prize"].values()) == result.pool


@PROPERTY_SETTINGS
@given(document=v2_snapshots(), policy=policies(), seed=st.integers(0, 2**32))
def test_section_8_order_of_players_changes_nothing(document, policy, seed):
    def option(options):
        return options[seed % len(options)]

    result = settle_v2(document, policy, option)
    if result is None:
        return
    players = random.Random(seed).sample(document["players"], k=len(document["players"]))
    reordered = settle_v2(dict(document, players=players), policy, option)
    assert reordered == result
    assert dict(reordered.explanations) == dict(result.explanations)


@PROPERTY_SETTINGS
@given(document=snapshots(), policy=policies(), data=st.data())
def test_version_1_settles_the_same_as_version_2_at_its_defaults(document, policy, data):
    seed = data.draw(st.integers(0, 2**32))

    def option(options):
        return options[seed % len(options)]

    v1 = settle_v2(document, policy, option)
    defaults = json.loads(json.dumps(document))
    defaults["format"] = "crash-snapshot/2"
    t = defaults["tournament"]
    if t["type"] != "freeroll":
        for key in ("entry_bounty", "add_on", "add_on_fee"):
            if data.draw(st.booleans()):
                t[key] = 0
        for player in defaults["players"]:
            for key, default in (("entries", 1), ("add_ons", 0), ("bounty", 0)):
                if data.draw(st.booleans()):
                    player[key] = default
    v2 = settle_v2(defaults, policy, option)
    if v1 is None:
        assert v2 is None
        return
    assert v2 == v1
    assert v2.to_json() == v1.to_json()
    assert dict(v2.explanations) == dict(v1.explanations)
