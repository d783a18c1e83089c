"""RULES.md §9: properties of every rulebook key, on generated snapshots (see test_properties)."""

import json
from collections import Counter
from dataclasses import replace
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from settlements.rules import DEFAULT_POLICY, POLICY_KEYS, Policy, parse_snapshot, settle
from settlements.rules.icm import exact_equity
from settlements.rules.terms import terms_of

from .test_properties import PROPERTY_SETTINGS, pool_value, settle_any, snapshots
from .test_properties_v2 import by_kind, settle_v2, v2_snapshots


@st.composite
def rulebooks(draw) -> Policy:
    """Any valid policy: each key at its default or drawn from §9's table."""
    values = {}
    for key in POLICY_KEYS:
        if key.choices:
            values[key.name] = draw(st.sampled_from(key.choices))
        elif key.name == "final_table_icm":
            values[key.name] = draw(st.sampled_from([0, *range(2, 11)]))
    values["pre_pct"] = pre = draw(st.integers(0, 100))
    values["early_pct"] = draw(st.integers(pre, 100))
    return Policy(**values)


def choose_first(options):
    return options[0]


def cash_by_kind(result) -> dict[tuple[str, str], int]:
    sums: Counter = Counter()
    for line in result.lines:
        sums[line.player, line.kind] += line.amount
    return dict(sums)


@PROPERTY_SETTINGS
@given(document=snapshots(), policy=rulebooks())
def test_every_rulebook_pays_out_of_the_pool_no_more_than_it_holds(document, policy):
    result = settle_any(document, policy, choose_first)
    if result is None:
        return
    by_player = pool_value(result, document["tournament"].get("seat_value", 0))
    assert sum(by_player.values()) == result.pool_distributed <= result.pool
    assert all(line.amount > 0 for line in result.lines)
    assert result.policy.to_dict() == policy.to_dict()


@PROPERTY_SETTINGS
@given(document=snapshots(), icm_from=st.integers(2, 10))
def test_icm_pays_the_late_pool_each_between_the_next_payout_and_the_first(document, icm_from):
    policy = Policy(final_table_icm=icm_from)
    result = settle_any(document, policy, choose_first)
    if result is None or result.remedy != "icm":
        return
    terms = terms_of(parse_snapshot(json.dumps(document)))
    assert document["tournament"]["type"] != "satellite" and result.stage == "late"
    assert terms.remaining <= icm_from
    prizes = {row.player: row.cash for row in result.payouts}
    chips = {p["id"]: p["chips"] for p in document["players"] if p["chips"]}
    assert sum(prizes.get(player, 0) for player in chips) == sum(terms.prizes[: terms.remaining])
    for player in chips:
        assert terms.prize(terms.remaining) <= prizes.get(player, 0) <= terms.first_prize
    for a in chips:
        for b in chips:
            if chips[a] == chips[b]:
                assert abs(prizes.get(a, 0) - prizes.get(b, 0)) <= 1


@PROPERTY_SETTINGS
@given(
    chips=st.lists(st.integers(1, 6), min_size=1, max_size=7),
    prizes=st.lists(st.integers(0, 10**6), min_size=1, max_size=7),
)
def test_exact_icm_is_exact_bounded_and_fair_to_equal_stacks(chips, prizes):
    prizes = sorted(prizes, reverse=True)[: len(chips)]
    prizes += [0] * (len(chips) - len(prizes))
    values = exact_equity(chips, prizes)
    assert all(isinstance(value, Fraction) for value in values)
    assert sum(values) == sum(prizes)
    assert all(prizes[-1] <= value <= prizes[0] for value in values)
    for i, value in enumerate(values):
        for j, other in enumerate(values):
            if chips[i] == chips[j]:
                assert value == other
            elif chips[i] > chips[j]:
                assert value >= other


@PROPERTY_SETTINGS
@given(document=snapshots(), policy=rulebooks())
def test_keys_that_do_not_apply_change_nothing_but_the_echo(document, policy):
    kind = document["tournament"]["type"]
    inert = {"late_registration": policy.late_registration}  # no snapshot here says it is open
    if kind != "regular":
        inert |= {
            "middle_formula": policy.middle_formula,
            "middle_floor": policy.middle_floor,
            "middle_fee_refund": policy.middle_fee_refund,
        }
    if kind != "satellite":
        inert["satellite_prizes"] = policy.satellite_prizes
    if kind == "freeroll":
        inert["guarantee_before_itm"] = policy.guarantee_before_itm
    inert["bounty_refund"] = policy.bounty_refund  # version 1 snapshots carry no bounties
    defaults = {key.name: key.default for key in POLICY_KEYS if key.name in inert}
    with_keys = settle_any(document, policy, choose_first)
    without = settle_any(document, replace(policy, **defaults), choose_first)
    if with_keys is None:
        assert without is None
        return
    assert (with_keys.stage, with_keys.remedy) == (without.stage, without.remedy)
    assert with_keys.lines == without.lines


@PROPERTY_SETTINGS
@given(document=snapshots())
def test_the_default_rulebook_is_the_policy_of_sections_1_to_8(document):
    snapshot = parse_snapshot(json.dumps(document))
    spelled_out = Policy(**DEFAULT_POLICY.parameters)
    first = settle_any(document, DEFAULT_POLICY, choose_first)
    if first is None:
        return
    again = settle(snapshot, decision=first.decision, policy=spelled_out)
    assert again.to_json() == first.to_json()
    assert list(json.loads(first.to_json())["policy"]) == ["pre_pct", "early_pct", "late_formula"]


@PROPERTY_SETTINGS
@given(document=snapshots())
def test_middle_fee_refund_adds_each_fee_beside_the_same_split(document):
    plain = settle_any(document, DEFAULT_POLICY, choose_first)
    fees_back = settle_any(document, Policy(middle_fee_refund=True), choose_first)
    if plain is None or (document["tournament"]["type"], plain.stage) != ("regular", "middle"):
        return
    fee = document["tournament"]["fee"]
    extra = [line for line in fees_back.lines if line not in plain.lines]
    assert [line for line in fees_back.lines if line in plain.lines] == plain.lines
    assert {(line.kind, line.source, line.amount) for line in extra} <= {
        ("refund_fee", "house", fee)
    }
    assert len(extra) == (plain.remaining if fee else 0)


@PROPERTY_SETTINGS
@given(document=snapshots(), policy=rulebooks())
def test_before_the_money_house_keeps_the_overlay(document, policy):
    policy = replace(policy, guarantee_before_itm="house", late_registration="ignore")
    result = settle_any(document, policy, choose_first)
    kind = document["tournament"]["type"]
    if result is None or kind == "freeroll" or result.stage not in ("early", "middle"):
        return
    paid_in = len(document["players"]) * document["tournament"]["buy_in"]
    by_player = pool_value(result, document["tournament"].get("seat_value", 0))
    assert sum(by_player.values()) <= paid_in


@PROPERTY_SETTINGS
@given(document=snapshots(), policy=rulebooks())
def test_open_late_registration_refunds_everyone(document, policy):
    document["tournament"]["late_registration_open"] = True
    result = settle_any(document, replace(policy, late_registration="refund"), choose_first)
    assert result is not None and result.stage == "pre"
    refunded = {line.player for line in result.lines}
    assert result.remedy in ("refund", "fpp_refund")
    paying = document["tournament"].get("buy_in", document["tournament"].get("fpp_buy_in"))
    assert refunded == ({p["id"] for p in document["players"]} if paying else set())


@PROPERTY_SETTINGS
@given(document=snapshots(), policy=rulebooks())
def test_satellite_cash_pays_what_the_seats_were_worth(document, policy):
    if document["tournament"]["type"] != "satellite":
        return
    tickets = settle_any(document, replace(policy, satellite_prizes="tickets"), choose_first)
    cash = settle_any(document, replace(policy, satellite_prizes="cash"), choose_first)
    if tickets is None:
        return
    seat = document["tournament"]["seat_value"]
    assert pool_value(tickets, seat) == pool_value(cash, seat)
    assert all(line.unit == "cash" for line in cash.lines)


@PROPERTY_SETTINGS
@given(document=v2_snapshots(), policy=rulebooks())
def test_bounty_refund_entry_pays_each_head_one_entrys_bounty_and_nothing_else_moves(
    document, policy
):
    current = settle_v2(document, replace(policy, bounty_refund="current"), choose_first)
    entry = settle_v2(document, replace(policy, bounty_refund="entry"), choose_first)
    if current is None:
        assert entry is None
        return
    assert (entry.stage, entry.remedy) == (current.stage, current.remedy)
    assert [line for line in entry.lines if line.kind != "bounty"] == [
        line for line in current.lines if line.kind != "bounty"
    ]
    bounty = document["tournament"].get("entry_bounty", 0)
    heads = by_kind(current)["bounty"]
    if current.stage == "pre" or not heads:
        assert by_kind(entry)["bounty"] == heads
        return
    # Each head that was paid its bounties is paid one entry's instead, never more.
    assert by_kind(entry)["bounty"] == Counter(dict.fromkeys(heads, bounty))
    assert all(line.source == "bounty" for line in entry.lines if line.kind == "bounty")
    assert sum(by_kind(entry)["bounty"].values()) <= sum(heads.values())


@PROPERTY_SETTINGS
@given(document=v2_snapshots(), policy=rulebooks())
def test_every_rulebook_on_rebuys_and_bounties_pays_out_of_the_pool_no_more_than_it_holds(
    document, policy
):
    result = settle_v2(document, policy, choose_first)
    if result is None:
        return
    seat = document["tournament"].get("seat_value", 0)
    assert sum(pool_value(result, seat).values()) == result.pool_distributed <= result.pool
    assert all(line.amount > 0 for line in result.lines)


@PROPERTY_SETTINGS
@given(
    document=snapshots().filter(lambda document: document["tournament"]["type"] == "regular"),
    policy=rulebooks(),
)
def test_chip_proportional_middle_pays_equal_stacks_alike_within_its_bounds(document, policy):
    # No pre or early stage by eliminations: a started regular before the money is middle.
    policy = replace(
        policy,
        pre_pct=0,
        early_pct=0,
        middle_formula="chip_proportional",
        late_registration="ignore",
    )
    result = settle_any(document, policy, choose_first)
    if result is None or (document["tournament"]["type"], result.stage) != ("regular", "middle"):
        return
    t = document["tournament"]
    chips = {p["id"]: p["chips"] for p in document["players"] if p["chips"]}
    prizes = by_kind(result)["prize"]
    assert result.remedy == "chip_proportional"
    assert sum(prizes.values()) == result.pool_distributed
    floor = t["buy_in"] if policy.middle_floor == "buy_in" else 0
    for player in chips:
        assert floor <= prizes[player] <= max(t["payouts"][0], floor)
    for a in chips:
        for b in chips:
            if chips[a] == chips[b]:
                assert abs(prizes[a] - prizes[b]) <= 1
