"""crash-snapshot/2 (RULES.md §8): what it accepts, what it refuses and where, and what
version 1 keeps refusing."""

import msgspec
import pytest

from settlements.rules import InvalidInput, PlayerV2, parse_snapshot, settle

from .builders import encode, freeroll, regular, satellite


def v2(document: dict, **tournament) -> dict:
    document["format"] = "crash-snapshot/2"
    document["tournament"].update(tournament)
    return document


def problems(document: dict) -> dict[str, str]:
    with pytest.raises(InvalidInput) as rejected:
        parse_snapshot(encode(document))
    return {problem.path: problem.message for problem in rejected.value.problems}


def rebuy_players() -> list[dict]:
    return [
        {"id": "a", "chips": 300, "entries": 2, "add_ons": 1, "bounty": 750},
        {"id": "b", "chips": 200, "bounty": 500},
        {"id": "c", "chips": 0, "entries": 3},
    ]


def test_a_version_2_document_is_read_with_its_defaults():
    document = v2(regular(rebuy_players(), payouts=[7000]), entry_bounty=500, add_on=1000)
    parsed = parse_snapshot(encode(document))
    a, b, c = parsed.players
    assert (a.entries, a.add_ons, a.bounty) == (2, 1, 750)
    assert (b.entries, b.add_ons, b.bounty) == (1, 0, 500)
    assert (c.entries, c.add_ons, c.bounty) == (3, 0, 0)
    assert all(isinstance(p, PlayerV2) for p in parsed.players)
    t = parsed.tournament
    assert (t.entry_bounty, t.add_on, t.add_on_fee, t.add_ons_sold) == (500, 1000, 0, True)


def test_a_snapshot_built_without_its_entry_columns_settles_alike():
    # Parsing keeps §8's columns for settle; a snapshot built by hand has them read from its
    # players.
    document = v2(regular(rebuy_players(), payouts=[4000, 3000]), entry_bounty=500, add_on=1000)
    parsed = parse_snapshot(encode(document))
    assert parsed.entry_columns is not None
    by_hand = msgspec.structs.replace(parsed, entry_columns=None)
    settled = settle(parsed)
    assert {line.kind for line in settled.lines} >= {"bounty", "prize"}
    assert settle(by_hand).to_dict() == settled.to_dict()


def test_a_version_1_player_has_one_entry_and_no_bounty():
    parsed = parse_snapshot(encode(regular([5, 0])))
    assert [(p.entries, p.add_ons, p.bounty) for p in parsed.players] == [(1, 0, 0)] * 2
    assert parsed.tournament.add_ons_sold is False


def test_the_pool_counts_every_entry_and_add_on():
    # 6 entries × 1000 + 1 add-on × 1000; the payouts must sum to that.
    document = v2(regular(rebuy_players(), payouts=[6000]), entry_bounty=500, add_on=1000)
    assert problems(document) == {"tournament.payouts": "must sum to the prize pool 7000, not 6000"}


def test_the_middle_stage_guarantees_own_buy_ins_that_all_differ_from_the_buy_in():
    # Every player still in bought a second entry: each is guaranteed 2,000 (L_i = paid_i,
    # RULES.md §8), not the buy-in, and chip equity shares the 14,000 − 8,000 left.
    rows = [{"id": "a", "chips": 3000, "entries": 2}] + [
        {"id": name, "chips": 1000, "entries": 2} for name in "bcd"
    ]
    rows += [{"id": f"x{i}", "chips": 0} for i in range(6)]
    result = settle(parse_snapshot(encode(v2(regular(rows, payouts=[8000, 6000])))))
    assert (result.stage, result.basis.split_floor) == ("middle", "own_buy_ins")
    assert [(line.player, line.amount) for line in result.lines] == [
        ("a", 4250),
        ("b", 3250),
        ("c", 3250),
        ("d", 3250),
    ]


@pytest.mark.parametrize(
    ("where", "key"),
    [
        ("player", "entries"),
        ("player", "add_ons"),
        ("player", "bounty"),
        ("tournament", "entry_bounty"),
        ("tournament", "add_on"),
        ("tournament", "add_on_fee"),
    ],
)
def test_version_1_refuses_every_version_2_field_at_its_path(where, key):
    document = regular([5, 0])
    if where == "player":
        document["players"][0][key] = 1
        path = f"players[0].{key}"
    else:
        document["tournament"][key] = 1
        path = f"tournament.{key}"
    found = problems(document)
    assert list(found) == [path]
    assert "crash-snapshot/2" in found[path]


def test_version_1_lists_version_2_fields_beside_its_other_problems():
    document = regular([5, 0])
    document["players"][1]["entries"] = 2
    document["tournament"]["fee"] = "100"
    assert set(problems(document)) == {"players[1].entries", "tournament.fee"}


@pytest.mark.parametrize("key", ["entries", "add_ons", "bounty"])
def test_a_freeroll_takes_no_player_field(key):
    document = v2(freeroll([5, 0]))
    document["players"][0][key] = 1
    assert list(problems(document)) == [f"players[0].{key}"]


def test_a_freeroll_takes_no_tournament_field():
    document = v2(freeroll([5, 0]), entry_bounty=100)
    found = problems(document)
    assert "regular or satellite" in found["tournament.entry_bounty"]


def test_entries_below_one_and_negative_counts():
    document = v2(regular([5, 0], payouts=[2000]), entry_bounty=100, add_on=100)
    document["players"][0].update(entries=0, add_ons=-1, bounty=-5)
    assert set(problems(document)) == {
        "players[0].entries",
        "players[0].add_ons",
        "players[0].bounty",
    }


@pytest.mark.parametrize("field", ["entry_bounty", "add_on", "add_on_fee"])
def test_negative_tournament_amounts(field):
    document = v2(regular([5, 0]), **{field: -1})
    assert "tournament." + field in problems(document)


def test_add_ons_only_where_they_are_sold():
    document = v2(regular([5, 0], payouts=[2000]))
    document["players"][0]["add_ons"] = 1
    assert "sells no add-ons" in problems(document)["players[0].add_ons"]
    # An add-on fee alone says the tournament sells add-ons (free ones, into no pool).
    document["tournament"]["add_on_fee"] = 50
    assert parse_snapshot(encode(document)).players[0].add_ons == 1


def test_bounty_rules():
    without_k = v2(regular([5, 0]))
    without_k["players"][0]["bounty"] = 10
    assert "no bounty" in problems(without_k)["players[0].bounty"]

    on_eliminated = v2(regular([5, 0]), entry_bounty=100)
    on_eliminated["players"][0]["bounty"] = 100
    on_eliminated["players"][1]["bounty"] = 100
    assert list(problems(on_eliminated)) == ["players[1].bounty"]

    below_k = v2(regular([5, 3, 0]), entry_bounty=100)
    below_k["players"][0]["bounty"] = 100
    below_k["players"][1]["bounty"] = 99
    assert list(problems(below_k)) == ["players[1].bounty"]


def test_heads_cannot_hold_more_than_the_entries_paid_for_bounties():
    document = v2(regular([5, 3, 0]), entry_bounty=100)
    document["players"][0]["bounty"] = 250
    document["players"][1]["bounty"] = 100
    refused = problems(document)  # 3 entries paid 300; the players carry 350
    assert list(refused) == ["players"]
    assert refused["players"].startswith("the bounties the players carry add up to 350,")
    document["players"][2]["entries"] = 2  # 4 entries paid 400
    document["tournament"]["payouts"] = [4000]
    assert parse_snapshot(encode(document)).players[0].bounty == 250


def test_a_satellite_takes_rebuys_add_ons_and_bounties():
    document = v2(satellite(rebuy_players(), seat_value=3000), entry_bounty=500, add_on=1000)
    parsed = parse_snapshot(encode(document))
    assert parsed.players[0].entries == 2


def test_a_repeated_player_field_is_a_duplicate_key():
    document = v2(regular([5, 0], payouts=[3000]))
    document["players"][0]["entries"] = 2
    text = encode(document).replace(b'"entries": 2', b'"entries": 2, "entries": 3')
    with pytest.raises(InvalidInput) as rejected:
        parse_snapshot(text)
    assert [p.path for p in rejected.value.problems] == ["players[0].entries"]
    assert "twice" in rejected.value.problems[0].message


@pytest.mark.parametrize(("key", "default"), [("entries", 1), ("add_ons", 0), ("bounty", 0)])
def test_a_field_repeated_with_its_default_is_a_duplicate_key(key, default):
    # A repeated key whose values are the default decodes as if the field were absent.
    document = v2(regular([5, 0], payouts=[3000]))
    document["players"][1][key] = default
    pair = f'"{key}": {default}'.encode()
    text = encode(document).replace(pair, pair + b", " + pair)
    with pytest.raises(InvalidInput) as rejected:
        parse_snapshot(text)
    assert [(p.path, p.message) for p in rejected.value.problems] == [
        (f"players[1].{key}", "appears twice in the same object")
    ]


def test_defaults_written_out_read_as_defaults_left_out():
    players = rebuy_players()
    written = [{"entries": 1, "add_ons": 0, "bounty": 0} | player for player in players]
    settled = []
    for rows in (players, written):
        document = v2(regular(rows, payouts=[4000, 3000]), entry_bounty=500, add_on=1000)
        parsed = parse_snapshot(encode(document))
        settled.append((parsed.players, parsed.entry_columns, settle(parsed).to_dict()))
    assert settled[0] == settled[1]


def test_version_2_reports_its_type_problems_with_its_own_fields():
    document = v2(regular([5, 0], payouts=[3000]))
    document["players"][0]["entries"] = "2"
    document["players"][1]["surprise"] = 1
    found = problems(document)
    assert set(found) == {"players[0].entries", "players[1].surprise"}
    assert found["players[0].entries"].startswith("must be an integer")
