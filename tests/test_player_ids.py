"""Player ids are what they look like (settlements.player_ids): no control or invisible
characters, composed (NFC), and no two in one list with the same UTS #39 skeleton."""

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from settlements import player_ids

# The five "alice"s of the report, each of which was a different entrant that looked the same.
CYRILLIC = "\u0430lice"  # а
ZERO_WIDTH = "alice\u200b"
SOFT_HYPHEN = "alice\u00ad"
RIGHT_TO_LEFT = "\u202eecila"


@pytest.mark.parametrize(
    ("player", "character"),
    [
        (ZERO_WIDTH, "U+200B"),
        (SOFT_HYPHEN, "U+00AD"),
        (RIGHT_TO_LEFT, "U+202E"),
        ("ali\tce", "U+0009"),
        ("alice\x00", "U+0000"),
        ("alice\u2066", "U+2066"),  # a bidirectional isolate
        ("\ufeffalice", "U+FEFF"),  # a byte-order mark inside the text
    ],
)
def test_control_and_invisible_characters_are_refused(player, character):
    problem = player_ids.id_problem(player)
    assert problem is not None and character in problem


def test_ids_must_be_composed():
    decomposed = unicodedata.normalize("NFD", "zoë")
    assert decomposed != "zoë"
    assert "NFC" in player_ids.id_problem(decomposed)
    assert player_ids.id_problem("zoë") is None


@pytest.mark.parametrize(
    "player", ["alice", CYRILLIC, "p000001", "Zoë_92", "игрок", "選手7", "a b"]
)
def test_visible_ids_in_any_script_pass_alone(player):
    assert player_ids.id_problem(player) is None


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("alice", CYRILLIC),
        ("player1", "playerl"),
        ("p0001", "pOOO1"),
        ("modern", "rnodern"),
        ("ℯve", "eve"),
        ("\u217fike", "mike"),  # the Roman numeral one thousand
    ],
)
def test_look_alikes_share_a_skeleton(one, other):
    assert player_ids.skeleton(one) == player_ids.skeleton(other)
    assert player_ids.look_alikes([one, "bystander", other]) == [(0, 2)]


@pytest.mark.parametrize(("one", "other"), [("alice", "Alice"), ("bob", "bop"), ("p1", "p2")])
def test_different_ids_do_not(one, other):
    assert player_ids.look_alikes([one, other]) == []


def test_each_later_look_alike_names_the_first():
    # "b0b" looks like "bOb" (zero and capital O), not like "bob".
    ids = ["alice", "bob", CYRILLIC, "b0b", "carol", "bOb", "аlice"]
    assert player_ids.look_alikes(ids) == [(0, 2), (3, 5), (0, 6)]


def ids(codec: str):
    return st.lists(
        st.text(st.characters(codec=codec, exclude_characters="\x00"), min_size=1, max_size=8),
        min_size=1,
        max_size=30,
        unique=True,
    )


# ASCII apart: the bulk check has a path of its own for it.
@given(st.one_of(ids("utf-8"), ids("ascii")))
def test_the_bulk_checks_agree_with_one_id_at_a_time(players):
    expected = [(i, p) for i, player in enumerate(players) if (p := player_ids.id_problem(player))]
    assert player_ids.id_problems(players) == expected
    assert player_ids.skeletons(players) == [player_ids.skeleton(p) for p in players]
