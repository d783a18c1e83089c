"""Snapshot parsing and the validation rules of RULES.md §1, with SNAPSHOT.md's paths."""

import json

import msgspec
import pytest

from settlements.rules import InvalidInput, Snapshot, parse_snapshot
from settlements.rules.checks import is_rfc3339
from settlements.rules.jsondoc import problem_from_validation
from settlements.rules.snapshot import MAX_AMOUNT, MAX_CHIPS, SNAPSHOT_DECODER

from .builders import encode, freeroll, players, regular, satellite


def problems(data) -> dict[str, str]:
    """path -> message of every problem found in a document (dict, str or bytes)."""
    if isinstance(data, dict):
        data = encode(data)
    with pytest.raises(InvalidInput) as rejected:
        parse_snapshot(data)
    found = {}
    for problem in rejected.value.problems:
        assert problem.path and problem.message
        assert str(problem) == f"{problem.path}: {problem.message}"
        found.setdefault(problem.path, problem.message)
    return found


def with_raw(document: dict, path: tuple, raw: str) -> bytes:
    """The document with the value at `path` replaced by raw JSON text (NaN, 1e400, …)."""
    marker = "__RAW_VALUE__"
    node = document
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = marker
    return encode(document).replace(f'"{marker}"'.encode(), raw.encode())


# --- What a valid snapshot becomes ------------------------------------------------------------


def test_a_regular_snapshot_with_optional_fields_left_out():
    snapshot = parse_snapshot(encode(regular([500, 0, 300])))
    assert isinstance(snapshot, Snapshot)
    t = snapshot.tournament
    assert (t.type, t.id, t.currency, t.buy_in, t.fee, t.payouts) == (
        "regular",
        "T-1",
        "USD",
        1000,
        100,
        [3000],
    )
    assert (t.name, t.started, t.guarantee) == ("", True, 0)
    assert snapshot.crashed_at is None
    assert [(p.id, p.chips) for p in snapshot.players] == [("p01", 500), ("p02", 0), ("p03", 300)]


def test_freeroll_and_satellite_fields_and_defaults():
    f = parse_snapshot(encode(freeroll([1, 1], fpp_buy_in=0))).tournament
    assert (f.type, f.prize_pool, f.fpp_buy_in, f.payouts) == ("freeroll", 10000, 0, [10000])
    assert not hasattr(f, "buy_in") and not hasattr(f, "seat_value")
    s = parse_snapshot(encode(satellite([1] * 5, guarantee=9000, started=False))).tournament
    assert (s.type, s.seat_value, s.guarantee, s.started) == ("satellite", 5000, 9000, False)
    assert not hasattr(s, "payouts")


def test_text_input_a_byte_order_mark_and_crashed_at_are_accepted():
    document = regular([1, 2], crashed_at="2026-11-30T20:14:05Z", name="Sunday Warm-Up")
    assert parse_snapshot(json.dumps(document)).crashed_at == "2026-11-30T20:14:05Z"
    assert parse_snapshot(b"\xef\xbb\xbf" + encode(document)).tournament.name == "Sunday Warm-Up"


def test_huge_but_allowed_integers_stay_exact():
    document = regular([MAX_CHIPS, 1], buy_in=0, guarantee=MAX_AMOUNT, payouts=[MAX_AMOUNT])
    snapshot = parse_snapshot(encode(document))
    assert snapshot.players[0].chips == 10**18
    assert snapshot.tournament.payouts == [10**15]


# --- Structural problems: one path each -------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "path"),
    [
        (dict(regular([1, 1]), extra=1), "extra"),
        (regular([1, 1], buyin=5), "tournament.buyin"),
        (
            regular([{"id": "a", "chips": 1}, {"id": "b", "chips": 1, "stack": 2}]),
            "players[1].stack",
        ),
    ],
)
def test_unknown_keys_are_named(document, path):
    assert "not a known field" in problems(document)[path]


@pytest.mark.parametrize(
    ("document", "path", "owner"),
    [
        (regular([1, 1], seat_value=100), "tournament.seat_value", "satellite"),
        (regular([1, 1], prize_pool=100), "tournament.prize_pool", "freeroll"),
        (freeroll([1, 1], buy_in=100), "tournament.buy_in", "regular or satellite"),
        (freeroll([1, 1], guarantee=100), "tournament.guarantee", "regular or satellite"),
        (satellite([1, 1], payouts=[2000]), "tournament.payouts", "regular or freeroll"),
        (satellite([1, 1], fpp_buy_in=1), "tournament.fpp_buy_in", "freeroll"),
    ],
)
def test_a_field_of_another_type_is_named_with_its_owner(document, path, owner):
    assert problems(document)[path] == (
        f"belongs to a {owner} tournament, not to a {document['tournament']['type']} one"
    )


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ("99.5", "not a decimal number"),
        ("100.0", "not a decimal number"),
        ("1e2", "not a decimal number"),
        ("true", "not true/false"),
        ("false", "not true/false"),
        ('"100"', "not a string"),
        ("null", "not null"),
        ("[100]", "not a list"),
        ("NaN", "not NaN"),
        ("Infinity", "not Infinity"),
        ("-Infinity", "not -Infinity"),
        ("1e400", "too large"),
    ],
)
def test_amounts_must_be_json_integers(raw, words):
    found = problems(with_raw(regular([1, 1]), ("tournament", "fee"), raw))
    assert list(found) == ["tournament.fee"]
    assert words in found["tournament.fee"]


@pytest.mark.parametrize("raw", ["true", "1.5", "null", "NaN", '"7"'])
def test_chips_must_be_integers_at_their_index(raw):
    document = regular([5, 6, 7])
    assert list(problems(with_raw(document, ("players", 2, "chips"), raw))) == ["players[2].chips"]


@pytest.mark.parametrize(
    ("path", "raw"),
    [
        (("tournament", "name"), "null"),
        (("tournament", "started"), "null"),
        (("tournament", "started"), "1"),
        (("tournament", "guarantee"), "null"),
        (("crashed_at",), "null"),
        (("tournament", "id"), "7"),
        (("players", 0, "id"), "1"),
    ],
)
def test_null_and_wrong_types_for_other_fields(path, raw):
    document = regular([1, 1])
    node = document
    for key in path[:-1]:
        node = node[key]
    node.setdefault(path[-1], "placeholder")
    expected = ".".join(str(k) for k in path).replace(".0.", "[0].").replace(".0", "[0]")
    assert list(problems(with_raw(document, path, raw))) == [expected]


@pytest.mark.parametrize("field", ["id", "currency", "type"])
def test_required_tournament_fields(field):
    document = regular([1, 1])
    del document["tournament"][field]
    assert problems(document) == {f"tournament.{field}": "is required"}


@pytest.mark.parametrize(
    ("document", "field"),
    [(regular([1, 1]), "fee"), (freeroll([1, 1]), "prize_pool"), (satellite([1, 1]), "seat_value")],
)
def test_type_specific_required_fields(document, field):
    del document["tournament"][field]
    assert problems(document) == {f"tournament.{field}": "is required"}


def test_an_unknown_tournament_type():
    document = regular([1, 1])
    document["tournament"]["type"] = "sitngo"
    assert problems(document) == {"tournament.type": "must be regular, freeroll or satellite"}


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"", "is empty"),
        (b"   \n", "is empty"),
        (b'{"format": "crash-snapshot/1",', "ends too early"),
        (b'{"format": "crash-snapshot/1"} trailing', "line 1, column 33"),
        (b"[1, 2]", "must be an object"),
        (b'"text"', "must be an object"),
        (b'{"format": "\xff"}', "not UTF-8"),
        (b"\xff\xfe{\x00}\x00", "not UTF-8"),
        (b"{'format': 1}", "not valid JSON"),
    ],
)
def test_unreadable_documents_are_reported_at_the_root(data, words):
    found = problems(data)
    assert list(found) == ["$"]
    assert words in found["$"]


def test_broken_json_wins_over_a_field_error_msgspec_saw_first():
    assert list(problems(b'{"unknown": 1, ')) == ["$"]


def test_every_format_problem_of_a_file_is_reported_at_once():
    document = regular([5, 6, 7], stack=1)
    document["tournament"]["seat_value"] = 100
    document["tournament"]["name"] = 7
    del document["tournament"]["currency"]
    document["players"][1]["chips"] = True
    text = with_raw(document, ("tournament", "fee"), "1.5")
    found = problems(text)
    assert found == {
        "tournament.fee": "must be an integer, not a decimal number",
        "tournament.stack": "is not a known field (check the spelling)",
        "tournament.seat_value": "belongs to a satellite tournament, not to a regular one",
        "tournament.name": "must be a string, not a number",
        "tournament.currency": "is required",
        "players[1].chips": "must be an integer, not true/false",
    }


@pytest.mark.parametrize(
    "broken",
    [
        lambda d: d["tournament"].update(fee=True),
        lambda d: d["tournament"].pop("payouts"),
        lambda d: d["players"][2].update(chips="7"),
        lambda d: d["players"][0].update(stack=1),
        lambda d: d["tournament"].update(type="sitngo"),
        lambda d: d["tournament"].update(type=3),
        lambda d: d.update(players={}),
        lambda d: d.update(tournament=[]),
        lambda d: d.update(crashed_at=None),
    ],
)
def test_the_problem_msgspec_stops_at_keeps_its_path_among_all_of_them(broken):
    document = regular([5, 6, 7], format=False)
    broken(document)
    with pytest.raises(msgspec.ValidationError) as stopped:
        SNAPSHOT_DECODER.decode(encode(document))
    first = problem_from_validation(stopped.value)
    found = problems(document)
    assert len(found) == 2
    assert first.path in found


def test_format_problems_name_the_player_beside_the_row():
    document = regular([5, 6, 7])
    document["players"][2]["chips"] = 1.5
    document["players"][0]["stack"] = 1
    with pytest.raises(InvalidInput) as rejected:
        parse_snapshot(encode(document))
    named = {problem.path: problem.player for problem in rejected.value.problems}
    assert named == {"players[0].stack": "p01", "players[2].chips": "p03"}
    described = [problem.described for problem in rejected.value.problems]
    assert "players[2].chips (player p03): must be an integer, not a decimal number" in described


def test_rule_problems_name_the_player_too():
    with pytest.raises(InvalidInput) as rejected:
        parse_snapshot(encode(regular([5, -1, 7])))
    (problem,) = rejected.value.problems
    assert (problem.path, problem.player) == ("players[1].chips", "p02")


def test_many_format_problems_of_one_kind_are_summarised():
    document = regular([1] * 31)
    text = encode(document).replace(b'"chips": 1}', b'"chips": 1.5}')
    found = problems(text)
    assert "players[19].chips" in found and "players[20].chips" not in found
    assert found["players"] == (
        "11 more have the same problem: must be an integer, not a decimal number"
    )


# --- Duplicate keys ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after", "path"),
    [
        ('"fee": 100,', '"fee": 100, "fee": 90,', "tournament.fee"),
        ('"format": "crash-snapshot/1",', '"format": "crash-snapshot/1", "format": "x",', "format"),
        ('{"id": "p02", "chips": 2}', '{"id": "p02", "chips": 2, "chips": 3}', "players[1].chips"),
        ('"players": [', '"crashed_at": "2026-01-01T00:00:00Z", "players": [', "crashed_at"),
    ],
)
def test_duplicate_keys_are_errors_at_the_repeated_key(before, after, path):
    document = regular([1, 2], crashed_at="2026-11-30T20:14:05Z")
    text = json.dumps(document).replace(before, after, 1)
    assert text != json.dumps(document)
    assert problems(text) == {path: "appears twice in the same object"}


def test_colons_inside_strings_are_not_mistaken_for_keys():
    document = regular(
        [{"id": "a:b", "chips": 1}, {"id": "::", "chips": 0}],
        name="12:30 Turbo: Deep",
        crashed_at="2026-11-30T20:14:05+01:00",
    )
    document["tournament"]["id"] = "T:1"
    assert parse_snapshot(encode(document)).players[0].id == "a:b"


def test_a_duplicate_is_still_found_when_colons_are_escaped():
    document = regular([{"id": "a\\u003ab", "chips": 1}, {"id": "b", "chips": 1}])
    text = json.dumps(document).replace("\\\\u003a", "\\u003a")
    assert parse_snapshot(text).players[0].id == "a:b"
    repeated = text.replace('"chips": 1}]', '"chips": 1, "chips": 2}]')
    assert problems(repeated) == {"players[1].chips": "appears twice in the same object"}


# --- Semantic rules (RULES.md §1) -------------------------------------------------------------


def test_format_id_and_currency():
    document = regular([1, 1], format="crash-snapshot/3")
    document["tournament"].update(id="", currency="usd")
    found = problems(document)
    assert set(found) == {"format", "tournament.id", "tournament.currency"}


@pytest.mark.parametrize("currency", ["USD", "EUR", "XBT"])
def test_currency_accepts_three_capitals(currency):
    document = regular([1, 1])
    document["tournament"]["currency"] = currency
    assert parse_snapshot(encode(document)).tournament.currency == currency


@pytest.mark.parametrize("currency", ["usd", "US", "USDT", "U$D", "ÜSD", ""])
def test_currency_rejects_anything_else(currency):
    document = regular([1, 1])
    document["tournament"]["currency"] = currency
    assert list(problems(document)) == ["tournament.currency"]


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-30T20:14:05Z",
        "2026-11-30t20:14:05z",
        "2026-11-30T20:14:05.123456+05:30",
        "2024-02-29T00:00:00-00:00",
        "2016-12-31T23:59:60Z",
        "0000-02-29T00:00:00Z",
    ],
)
def test_rfc3339_times_accepted(text):
    assert is_rfc3339(text)


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-30",
        "2026-11-30 20:14:05Z",
        "2026-11-30T20:14:05",
        "2026-11-30T20:14Z",
        "2026-13-01T00:00:00Z",
        "2025-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-11-30T24:00:00Z",
        "2026-11-30T20:14:05+5:30",
        "2026-11-30T20:14:05+24:00",
        "２０２６-11-30T20:14:05Z",
        "yesterday",
    ],
)
def test_rfc3339_times_rejected(text):
    assert not is_rfc3339(text)
    assert list(problems(regular([1, 1], crashed_at=text))) == ["crashed_at"]


def test_player_rules_all_reported_together():
    document = regular(
        [
            {"id": "a", "chips": 5},
            {"id": "", "chips": 1},
            {"id": "a", "chips": -1},
            {"id": "c", "chips": MAX_CHIPS + 1},
            {"id": "a", "chips": 0},
        ]
    )
    found = problems(document)
    assert found["players[1].id"] == "must not be empty"
    assert "unique" in found["players[2].id"] and "unique" in found["players[4].id"]
    assert "players[0].id" not in found
    assert found["players[2].chips"].startswith("must be an integer >= 0")
    assert "players[3].chips" in found


def test_the_second_occurrence_of_a_player_id_is_the_one_reported():
    found = problems(
        regular([{"id": "x", "chips": 1}, {"id": "y", "chips": 1}, {"id": "x", "chips": 0}])
    )
    assert list(found) == ["players[2].id"]


def test_a_repeated_id_names_the_id_and_where_it_first_appears():
    found = problems(
        regular([{"id": "y", "chips": 1}, {"id": "x", "chips": 1}, {"id": "x", "chips": 0}])
    )
    assert found["players[2].id"] == "repeats the id “x” of players[1]; ids must be unique"


def test_many_bad_chip_counts_are_summarised():
    found = problems(regular([-1] * 30 + [5]))
    assert "players[19].chips" in found and "players[20].chips" not in found
    assert found["players"].startswith("10 more have the same problem")


@pytest.mark.parametrize(
    ("chips", "words"),
    [
        ([], "at least 2 entrants, not 0"),
        ([7], "at least 2 entrants, not 1"),
        ([0, 0, 0], "still have chips"),
    ],
)
def test_entrants_and_remaining_players(chips, words):
    document = regular([1, 1])
    document["players"] = players(*chips)
    document["tournament"]["payouts"] = [max(len(chips), 1) * 1000]
    assert words in problems(document)["players"]


@pytest.mark.parametrize("field", ["buy_in", "fee", "guarantee"])
def test_money_fields_must_not_be_negative(field):
    document = regular([1, 1], guarantee=0)
    document["tournament"][field] = -1
    assert problems(document)[f"tournament.{field}"].startswith("must be an integer >= 0")


def test_amounts_above_the_supported_maximum_are_rejected_with_their_path():
    document = regular([1, 1], payouts=[2000])
    document["tournament"]["fee"] = 10**40
    assert list(problems(document)) == ["tournament.fee"]
    pool_too_big = regular([1, 1], buy_in=MAX_AMOUNT, payouts=[MAX_AMOUNT, MAX_AMOUNT])
    assert "above" in problems(pool_too_big)["tournament.buy_in"]


def test_freeroll_pool_and_fpp():
    document = freeroll([1, 1], prize_pool=0, payouts=[1], fpp_buy_in=-5)
    found = problems(document)
    assert set(found) == {"tournament.prize_pool", "tournament.fpp_buy_in"}
    assert "> 0" in found["tournament.prize_pool"]


@pytest.mark.parametrize(
    ("payouts", "paths"),
    [
        ([], {"tournament.payouts"}),
        ([3000, 0], {"tournament.payouts[1]"}),
        ([2000, 0], {"tournament.payouts[1]", "tournament.payouts"}),
        ([1000, 2000], {"tournament.payouts[1]"}),
        ([2500, -500, 1000], {"tournament.payouts[1]", "tournament.payouts[2]"}),
        ([2000, 500], {"tournament.payouts"}),
    ],
)
def test_payouts_positive_non_increasing_summing_to_the_pool(payouts, paths):
    assert set(problems(regular([1, 1, 1], payouts=payouts))) == paths


def test_payout_sum_message_names_the_pool():
    assert problems(regular([1, 1], payouts=[1500])) == {
        "tournament.payouts": "must sum to the prize pool 2000, not 1500"
    }


def test_the_pool_includes_the_guarantee():
    parse_snapshot(encode(regular([1, 1], guarantee=50000, payouts=[30000, 20000])))
    found = problems(regular([1, 1], guarantee=50000, payouts=[2000]))
    assert found == {"tournament.payouts": "must sum to the prize pool 50000, not 2000"}


def test_freeroll_payouts_sum_to_its_fixed_pool():
    assert list(problems(freeroll([1, 1], prize_pool=10000, payouts=[5000, 3000]))) == [
        "tournament.payouts"
    ]


@pytest.mark.parametrize(
    ("fields", "words"), [({"seat_value": 0}, "> 0"), ({"seat_value": 5001}, "awards no seat")]
)
def test_satellite_seat_value(fields, words):
    assert words in problems(satellite([1] * 5, **fields))["tournament.seat_value"]


def test_a_satellite_whose_pool_buys_exactly_one_seat():
    assert parse_snapshot(encode(satellite([1] * 5, seat_value=5000))).tournament.seat_value == 5000


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "$"),
        (b'{"format": ' + b"[" * 100_000, "format"),
        (b'{"players": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}", "players[0]"),
        (b'{"format": "x", "tournament": ' + b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "$"),
        (b'{"players": [{"id": "a", "chips": ' + b"9" * 5000 + b"}]}", "players[0].chips"),
    ],
)
def test_deep_nesting_and_enormous_numbers_are_problems_not_crashes(data, path):
    assert list(problems(data)) == [path]
