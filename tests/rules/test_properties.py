"""Properties that hold for every valid snapshot of every type and stage, and for every
invalid one: generated with hypothesis rather than picked by hand."""

import contextlib
import io
import json
import os
import random
import tempfile
from collections import Counter

import pytest
from django.core.management import load_command_class
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from settlements.rules import InvalidInput, Policy, assess, parse_snapshot, settle

from .builders import line_sums

PROPERTY_SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def prize_list(draw, pool: int, places: int) -> list[int]:
    """`places` positive, non-increasing prizes summing to `pool` (places <= pool)."""
    weights = sorted(
        draw(st.lists(st.integers(1, 50), min_size=places, max_size=places)), reverse=True
    )
    spare = pool - places
    prizes = [1 + spare * w // sum(weights) for w in weights]
    for k in range(pool - sum(prizes)):  # leftover to the top places keeps the order
        prizes[k] += 1
    return prizes


@st.composite
def snapshots(draw) -> dict:
    kind = draw(st.sampled_from(["regular", "freeroll", "satellite"]))
    entrants = draw(st.integers(2, 60))
    # Aim at every stage: around the 5 % and 25 % thresholds, and far beyond them.
    share = draw(st.sampled_from([0, 5, 15, 25, 60, 95]))
    eliminated = min(entrants - 1, entrants * share // 100 + draw(st.integers(0, 2)))
    # A narrow chip range makes ties (rounding, satellite bubbles) common.
    stack = st.integers(1, draw(st.sampled_from([3, 50, 10**6])))
    chips = draw(st.lists(stack, min_size=entrants - eliminated, max_size=entrants - eliminated))
    chips += [0] * eliminated
    order = draw(st.permutations(range(entrants)))
    # Varied ids (case, digits, colon, non-ASCII) test code-point order; "#n" keeps them unique.
    prefixes = draw(
        st.lists(st.text(alphabet="abAB:_09é", max_size=3), min_size=entrants, max_size=entrants)
    )
    ids = [f"{prefix}#{n}" for n, prefix in enumerate(prefixes)]
    players = [{"id": ids[i], "chips": chips[k]} for k, i in enumerate(order)]
    tournament: dict = {"id": "T-prop", "type": kind, "currency": "EUR"}
    if draw(st.integers(0, 5)) == 0:
        tournament["started"] = draw(st.booleans())
    if kind == "freeroll":
        pool = draw(st.integers(1, 10**6))
        tournament["prize_pool"] = pool
        tournament["fpp_buy_in"] = draw(st.integers(0, 1000))
    else:
        tournament["buy_in"] = draw(st.integers(1, 5000))
        tournament["fee"] = draw(st.integers(0, 500))
        pool = entrants * tournament["buy_in"]
        if draw(st.booleans()):
            tournament["guarantee"] = draw(st.integers(0, 2 * pool))
            pool = max(pool, tournament["guarantee"])
    if kind == "satellite":
        # Usually at least R seats' worth of pool per seat, so the snapshot is not rejected.
        seats = draw(st.integers(1, min(pool, entrants - eliminated)))
        most = pool // seats
        tournament["seat_value"] = draw(st.integers(min(most, pool // (seats + 1) + 1), most))
    else:
        places = draw(st.integers(1, min(pool, entrants + 2)))
        tournament["payouts"] = prize_list(draw, pool, places)
    document = {"format": "crash-snapshot/1", "tournament": tournament, "players": players}
    if draw(st.booleans()):
        document["crashed_at"] = "2026-11-30T20:14:05Z"
    return document


@st.composite
def policies(draw) -> Policy:
    if draw(st.booleans()):
        return Policy()
    pre = draw(st.integers(0, 100))
    early = draw(st.integers(pre, 100))
    return Policy(pre, early, draw(st.sampled_from(["chip_equity", "chip_position"])))


def settle_any(document: dict, policy: Policy, choose):
    """Settle, taking a decision when the case asks for one; None if validly rejected."""
    snapshot = parse_snapshot(json.dumps(document))
    try:
        assessment = assess(snapshot, policy)
    except InvalidInput as error:
        # The only rule that needs the stage: a satellite past pre with R < S.
        assert [p.path for p in error.problems] == ["players"]
        return None
    decision = choose(assessment.decision_options) if assessment.decision_options else None
    event(f"{document['tournament']['type']} {assessment.stage}")
    return settle(snapshot, decision=decision, policy=policy)


def pool_value(result, seat_value: int) -> dict[str, int]:
    """What each player receives out of the pool (refunded buy-in, prizes, a seat as V)."""
    value: Counter = Counter()
    for line in result.lines:
        if line.source == "pool":
            value[line.player] += line.amount * (seat_value if line.kind == "ticket" else 1)
    return value


@PROPERTY_SETTINGS
@given(document=snapshots(), policy=policies(), data=st.data())
def test_settlement_invariants(document, policy, data):
    result = settle_any(document, policy, lambda options: data.draw(st.sampled_from(options)))
    if result is None:
        return
    t = document["tournament"]
    seat_value = t.get("seat_value", 0)
    by_player = pool_value(result, seat_value)

    # Pool-sourced lines add up to pool_distributed, a ticket counting as one seat.
    assert sum(by_player.values()) == result.pool_distributed <= result.pool

    # Each player's lines add up to their payouts row; no empty rows, no zero lines.
    totals: dict[str, Counter] = {}
    for line in result.lines:
        assert line.amount > 0
        field = {"cash": "cash", "tdollars": "tdollars", "tickets": "tickets", "fpp": "fpp"}[
            line.unit
        ]
        totals.setdefault(line.player, Counter())[field] += line.amount
    assert [row.player for row in result.payouts] == sorted(totals)
    for row in result.payouts:
        for field in ("cash", "tdollars", "tickets", "fpp"):
            assert getattr(row, field) == totals[row.player][field]
        assert row.tickets <= 1
    assert result.line_totals == line_sums(result)

    chips = {p["id"]: p["chips"] for p in document["players"]}
    remaining = [player for player, c in chips.items() if c > 0]
    splits = {"chip_equity", "chip_proportional", "chip_position", "refund_even_split"}
    if result.remedy in splits | {"satellite_rank"}:
        # Only remaining players are paid, and more chips never means less.
        assert set(by_player) <= set(remaining)
        ranked = sorted(remaining, key=lambda p: chips[p])
        for low, high in zip(ranked, ranked[1:], strict=False):
            if chips[high] > chips[low]:
                assert by_player[high] >= by_player[low]
    if result.remedy in splits - {"refund_even_split"}:
        first_prize = seat_value or t["payouts"][0]
        assert max(by_player.values()) <= first_prize
        if result.stage == "late":
            floor = (
                t["payouts"][result.remaining - 1] if result.remaining <= len(t["payouts"]) else 0
            )
            assert min(by_player[p] for p in remaining) >= floor
            assert result.pool_distributed == result.pool - sum(t["payouts"][result.remaining :])
        else:
            assert result.pool_distributed == result.pool
        if t["type"] == "regular" and result.stage == "middle":
            assert min(by_player[p] for p in remaining) >= t["buy_in"]
        for player, explained in result.explanations.items():
            assert abs(explained.exact - explained.rounded) < 1
            assert explained.rounded == by_player[player]
    if result.remedy == "refund_even_split":
        assert result.pool_distributed == result.pool
        assert max(by_player.values()) - min(by_player[p] for p in remaining) <= 1


@PROPERTY_SETTINGS
@given(document=snapshots(), policy=policies(), seed=st.integers(0, 2**32))
def test_order_of_players_and_repetition_change_nothing(document, policy, seed):
    def first_option(options):
        return options[seed % len(options)]

    result = settle_any(document, policy, first_option)
    if result is None:
        return
    shuffled = dict(
        document,
        players=random.Random(seed).sample(document["players"], k=len(document["players"])),
    )
    reordered = settle_any(shuffled, policy, first_option)
    assert reordered == result
    assert dict(reordered.explanations) == dict(result.explanations)
    again = settle_any(document, policy, first_option)
    assert again == result and again.to_json() == result.to_json()


# --- Invalid documents ------------------------------------------------------------------------

MUTATIONS = [
    "bool_amount",
    "float_amount",
    "string_amount",
    "null_amount",
    "negative_chips",
    "unknown_key",
    "foreign_field",
    "missing_field",
    "duplicate_id",
    "payout_sum",
    "duplicate_key",
    "nan",
    "truncate",
    "bad_format",
]


@st.composite
def invalid_documents(draw) -> tuple[bytes, str]:
    document = draw(snapshots())
    t = document["tournament"]
    mutation = draw(st.sampled_from(MUTATIONS))
    amount = draw(
        st.sampled_from([k for k in ("buy_in", "fee", "prize_pool", "seat_value") if k in t])
    )
    k = draw(st.integers(0, len(document["players"]) - 1))
    if mutation == "bool_amount":
        t[amount] = True
    elif mutation == "float_amount":
        t[amount] = t[amount] + 0.5
    elif mutation == "string_amount":
        t[amount] = str(t[amount])
    elif mutation == "null_amount":
        document["players"][k]["chips"] = None
    elif mutation == "negative_chips":
        document["players"][k]["chips"] = -draw(st.integers(1, 10**6))
    elif mutation == "unknown_key":
        where = draw(st.sampled_from([document, t, document["players"][k]]))
        where["surprise"] = 1
    elif mutation == "foreign_field":
        foreign = {"regular": "seat_value", "freeroll": "buy_in", "satellite": "payouts"}[t["type"]]
        t[foreign] = 1
    elif mutation == "missing_field":
        del t[draw(st.sampled_from(["id", "currency", "type", amount]))]
    elif mutation == "duplicate_id":
        other = (k + 1) % len(document["players"])
        document["players"][other]["id"] = document["players"][k]["id"]
    elif mutation == "payout_sum":
        if "payouts" in t:
            t["payouts"][0] += 1
        else:
            t["seat_value"] = 0
    elif mutation == "bad_format":
        document["format"] = "crash-snapshot/0"
    text = json.dumps(document)
    if mutation == "duplicate_key":
        text = text.replace('"currency": ', '"currency": "XXX", "currency": ', 1)
    elif mutation == "nan":
        text = text.replace(f'"{amount}": {t[amount]}', f'"{amount}": NaN', 1)
    elif mutation == "truncate":
        text = text[: draw(st.integers(0, len(text) - 1))]
    return text.encode(), mutation


KNOWN_ROOTS = ("$", "format", "tournament", "players", "crashed_at", "surprise")


@PROPERTY_SETTINGS
@given(case=invalid_documents())
def test_every_invalid_document_is_rejected_with_paths(case):
    data, mutation = case
    event(mutation)
    with pytest.raises(InvalidInput) as rejected:
        parse_snapshot(data)
    for problem in rejected.value.problems:
        assert problem.message
        assert problem.path.split(".")[0].split("[")[0] in KNOWN_ROOTS, problem.path


def run_settle_command(*argv: str) -> tuple[int, str, str]:
    """The command's real command-line path (argument parsing, exit status), in-process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        command = load_command_class("settlements", "settle")  # binds the redirected streams
        try:
            command.run_from_argv(["manage.py", "settle", *argv])
            status = 0
        except SystemExit as exit_:
            status = exit_.code
    return status, out.getvalue(), err.getvalue()


@PROPERTY_SETTINGS
@given(case=invalid_documents())
def test_the_command_exits_2_with_path_first_lines_for_every_invalid_document(case):
    data, _ = case
    handle, path = tempfile.mkstemp(suffix=".json")
    try:
        os.write(handle, data)
        os.close(handle)
        status, out, err = run_settle_command(path)
    finally:
        os.unlink(path)
    assert (status, out) == (2, "")
    lines = err.splitlines()
    assert lines
    for line in lines:
        path_part, _, message = line.partition(": ")
        assert message and path_part.split(".")[0].split("[")[0] in KNOWN_ROOTS, line
