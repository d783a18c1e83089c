"""One tournament, one settlement: tournament ids are compared by their normalised key, so a
look-alike id cannot register (and pay) the same tournament again; and tournament ids and
names hold no control or bidirectional characters, on every path."""

import json

import pytest

from settlements import player_ids
from settlements.errors import DomainError, Duplicate
from settlements.models import Tournament
from settlements.rules import InvalidInput
from settlements.services.incidents import tournament_create
from settlements.services.individual_cases import NewTournament, individual_case_open
from settlements.services.snapshots import case_load_snapshot
from tests.services.helpers import row_counts

pytestmark = pytest.mark.django_db

LOOK_ALIKES = [
    "DEMO-REG-LATE\u00a0",  # a trailing no-break space
    " DEMO-REG-LATE",  # a leading space
    "DEMO-R\u0415G-LATE",  # a Cyrillic Е
    "demo-reg-late",  # another case
    "\uff24EMO-REG-LATE",  # a full-width D
]


@pytest.mark.parametrize(
    ("first", "second"),
    [("DEMO-REG-LATE", alike) for alike in LOOK_ALIKES]
    + [("T-1", "T-l"), ("T-l", "T-1"), ("P-1", "\u0420-1")],
)
def test_look_alike_ids_share_a_key(first, second):
    assert player_ids.tournament_key(first) == player_ids.tournament_key(second)


def test_different_ids_have_different_keys():
    assert player_ids.tournament_key("DEMO-REG-LATE") != player_ids.tournament_key("DEMO-REG-EARLY")


@pytest.mark.parametrize("alike", LOOK_ALIKES)
def test_a_snapshot_for_a_look_alike_id_is_refused_naming_the_case(
    operator, snapshot_factory, alike
):
    case = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(tournament_id="DEMO-REG-LATE")
    )
    before = row_counts()
    document = json.loads(snapshot_factory(tournament_id="DEMO-REG-LATE"))
    document["tournament"]["id"] = alike
    with pytest.raises(Duplicate, match=f"case #{case.pk}") as refusal:
        case_load_snapshot(actor=operator, snapshot=json.dumps(document))
    assert refusal.value.existing == case
    assert row_counts() == before


@pytest.mark.parametrize("alike", LOOK_ALIKES)
def test_registering_a_look_alike_id_is_refused(operator, alike):
    tournament_create(actor=operator, operator_id="DEMO-REG-LATE", type="regular", currency="USD")
    with pytest.raises(Duplicate, match="DEMO-REG-LATE"):
        tournament_create(actor=operator, operator_id=alike, type="regular", currency="USD")
    assert Tournament.objects.count() == 1


def test_an_individual_case_for_a_look_alike_tournament_is_refused(
    operator, tournament_manager, snapshot_factory
):
    case = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(tournament_id="DEMO-REG-LATE")
    )
    with pytest.raises(Duplicate, match=f"case #{case.pk}"):
        individual_case_open(
            tournament=NewTournament(
                operator_id="DEMO-REG-LATE\u00a0", type="regular", currency="USD", buy_in=100
            ),
            actor=tournament_manager,
            players=["alice"],
            description="lost connection",
        )
    assert Tournament.objects.count() == 1


def test_the_key_is_stored_with_the_tournament(operator, snapshot_factory):
    case_load_snapshot(actor=operator, snapshot=snapshot_factory(tournament_id="R-9"))
    created = tournament_create(actor=operator, operator_id="Ab-2", type="regular", currency="USD")
    assert Tournament.objects.get(operator_id="R-9").key == player_ids.tournament_key("R-9")
    assert created.key == player_ids.tournament_key("Ab-2")


@pytest.mark.parametrize("character", ["\u202e", "\u200b", "\x07", "\u2066"])
@pytest.mark.parametrize("field", ["operator_id", "name"])
def test_registering_refuses_control_and_bidi_characters(operator, character, field):
    values = {"operator_id": "T-9", "name": "Sunday"}
    values[field] += character
    with pytest.raises(DomainError, match=f"U\\+{ord(character):04X}") as refusal:
        tournament_create(actor=operator, type="regular", currency="USD", **values)
    assert refusal.value.field == field
    assert not Tournament.objects.exists()


@pytest.mark.parametrize("character", ["\u202e", "\u200b", "\x07"])
def test_a_snapshot_names_no_tournament_with_bidi_characters(operator, snapshot_factory, character):
    document = json.loads(snapshot_factory())
    document["tournament"]["name"] = f"Sunday{character}Million"
    with pytest.raises(InvalidInput) as refusal:
        case_load_snapshot(actor=operator, snapshot=json.dumps(document))
    assert [p.path for p in refusal.value.problems] == ["tournament.name"]
    assert not Tournament.objects.exists()
