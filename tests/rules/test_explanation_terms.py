"""Settlement.payout_terms(): the Fraction-free form the services store with every payout row
must say exactly what the Explanation objects say, row by row, and payout_chips() the chips of
each row's player; and the parts an explanation names (guaranteed, even, by weight) add up to
the exact amount."""

import json
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from settlements.rules import Basis, Policy
from tests.rules.builders import regular, satellite, settle_doc
from tests.rules.test_properties import PROPERTY_SETTINGS, policies, settle_any, snapshots
from tests.rules.test_properties_v2 import v2_snapshots


def terms_of_rows(result) -> dict:
    """Player id -> the terms stored with their payout row, for every row that has some."""
    rows = zip(result.payouts, result.payout_terms(), strict=True)
    return {row.player: terms for row, terms in rows if terms is not None}


def assert_terms_match(result) -> None:
    terms = terms_of_rows(result)
    assert set(terms) == {row.player for row in result.payouts} & set(result.explanations)
    for player, t in terms.items():
        explained = result.explanations[player]
        assert Fraction(t.share, t.denominator) == explained.share
        assert Fraction(t.exact, t.denominator) == explained.exact
        # Reduced already, so the stored text is the one str(Fraction) would write.
        assert Fraction(t.exact, t.denominator).denominator == t.denominator
        assert (t.chips, t.guaranteed, t.capped, t.rounded, t.rounding_cent, t.places) == (
            explained.chips,
            explained.guaranteed,
            explained.capped,
            explained.rounded,
            explained.rounding_cent,
            explained.places,
        )
        if t.weight is not None:
            assert Fraction(*t.weight) == explained.weight


def assert_chips_of_rows(result, document: dict) -> None:
    chips = {player["id"]: player["chips"] for player in document["players"]}
    assert result.payout_chips() == [chips[row.player] for row in result.payouts]


def assert_parts_add_up(result) -> None:
    split = result.basis.split
    for explained in result.explanations.values():
        if explained.capped:
            assert explained.exact == split.cap
        elif split is not None:
            assert explained.even_part == split.even_part
            assert explained.chip_part == split.chip_part(explained.weight)
        assert explained.guaranteed + explained.even_part + explained.chip_part == (
            explained.exact if not explained.capped else explained.guaranteed
        )
    if split is not None:
        rest = split.players - split.capped
        assert split.rest_players == rest
        assert split.rest_pool == split.pool - split.capped * (split.cap or 0) - rest * split.floor
        assert split.even_half + split.chip_half == split.rest_pool


def test_the_worked_example_in_parts():
    # RULES.md §7: a = 2000 + 4000/2/3 + 4000/2 × 60000/100000 = 2000 + 666⅔ + 1200.
    document = regular([60000, 30000, 10000] + [0] * 7, payouts=[5000, 3000, 2000])
    result = settle_doc(document)
    split = result.basis.split
    assert (split.pool, split.floor, split.cap, split.players) == (10000, 2000, 5000, 3)
    assert (split.rest_pool, split.total_weight, split.chip_share) == (4000, 100000, Fraction(1, 2))
    a = result.explanations["p01"]
    assert (a.even_part, a.chip_part, a.exact) == (Fraction(2000, 3), 1200, Fraction(11600, 3))
    assert result.basis.next_payout == 2000 and result.basis.already_paid == 0
    assert_parts_add_up(result)


def test_a_capped_player_leaves_the_rest_to_the_others():
    document = regular([9000, 10, 10, 0, 0, 0], payouts=[2200, 2000, 1300, 500])
    result = settle_doc(document)
    split = result.basis.split
    # P_late = 6000 less place 4, which the tournament paid itself.
    assert (result.basis.already_paid, split.pool) == (500, 5500)
    assert split.capped == 1 and split.rest_players == 2
    assert split.rest_pool == 5500 - 2200 - 2 * 1300
    assert_parts_add_up(result)


def test_chip_position_weighs_by_the_prize_of_the_places():
    document = regular([50, 50, 10, 0, 0], payouts=[2500, 1500, 1000])
    result = settle_doc(document, policy=Policy(late_formula="chip_position"))
    assert result.remedy == "chip_position"
    tied = result.explanations["p01"]
    assert tied.places == (1, 2) and tied.weight == 2000  # (2500 + 1500) / 2
    assert result.explanations["p03"].weight == 1000
    assert result.basis.split.total_weight == 5000
    assert_parts_add_up(result)
    assert_terms_match(result)


def test_the_basis_survives_its_json_form():
    result = settle_doc(regular([9000, 10, 10, 0, 0, 0], payouts=[2200, 2000, 1300, 500]))
    stored = json.loads(json.dumps(result.basis.to_dict()))
    assert Basis.from_dict(stored) == result.basis


def test_terms_of_a_capped_split_with_a_guaranteed_amount():
    # Late stage: every remaining player first gets prize(R); the chip leader is capped.
    document = regular([9000, 10, 10, 0, 0, 0], payouts=[2200, 2000, 1300, 500])
    result = settle_doc(document)
    assert result.stage == "late"
    assert any(e.capped for e in result.explanations.values())
    assert all(e.guaranteed == 1300 for e in result.explanations.values())
    assert_terms_match(result)


def test_terms_of_satellite_players_sharing_tied_ranks():
    result = settle_doc(satellite([500, 300, 300, 0, 0, 0, 0, 0, 0, 0], seat_value=4000))
    assert result.explanations
    assert_terms_match(result)


def test_a_settlement_without_a_split_has_no_terms():
    result = settle_doc(regular([0] * 4 + [100] * 96, started=False))
    assert result.remedy == "refund"
    assert result.payout_terms() == [None] * len(result.payouts) != []
    assert result.explanations.get(result.payouts[0].player) is None


@PROPERTY_SETTINGS
@given(
    document=st.one_of(snapshots(), v2_snapshots()),
    policy=policies(),
    seed=st.integers(0, 2**32),
)
def test_terms_agree_with_the_explanations(document, policy, seed):
    # Version 2 gives equal stacks terms of their own where their own guarantees differ (§8).
    result = settle_any(document, policy, lambda options: options[seed % len(options)])
    if result is not None:
        assert_terms_match(result)
        assert_chips_of_rows(result, document)
        assert Basis.from_dict(json.loads(json.dumps(result.basis.to_dict()))) == result.basis
        if document["format"] == "crash-snapshot/1":  # one guarantee L for everyone
            assert_parts_add_up(result)


def test_tied_players_share_terms_only_where_their_cents_agree():
    # Three players tied on chips share 10,000 three ways, 3,333⅓ each, and the leftover cent
    # goes to the first of them by id, so p01's terms differ from p02's and p03's.
    document = regular([500, 500, 500, 0, 0, 0, 0, 0, 0, 0], payouts=[10000])
    result = settle_doc(document)
    terms = terms_of_rows(result)
    assert [terms[p].rounded for p in ("p01", "p02", "p03")] == [3334, 3333, 3333]
    assert terms["p02"] is terms["p03"] and terms["p01"] != terms["p02"]
    assert_terms_match(result)
