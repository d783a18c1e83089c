"""Explanations.terms(): the Fraction-free form the services store for every paid player
must say exactly what the Explanation objects say, player by player."""

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from tests.rules.builders import regular, satellite, settle_doc
from tests.rules.test_properties import PROPERTY_SETTINGS, policies, settle_any, snapshots


def assert_terms_match(result) -> None:
    terms = {t.player: t for t in result.explanations.terms()}
    assert set(terms) == set(result.explanations)
    for player, explained in result.explanations.items():
        t = terms[player]
        assert Fraction(t.share, t.denominator) == explained.share
        assert Fraction(t.exact, t.denominator) == explained.exact
        # Reduced already, so the stored text is the one str(Fraction) would write.
        assert Fraction(t.exact, t.denominator).denominator == t.denominator
        assert (t.chips, t.guaranteed, t.capped, t.rounded, t.rounding_cent) == (
            explained.chips,
            explained.guaranteed,
            explained.capped,
            explained.rounded,
            explained.rounding_cent,
        )


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
    assert list(result.explanations.terms()) == []


@PROPERTY_SETTINGS
@given(document=snapshots(), policy=policies(), seed=st.integers(0, 2**32))
def test_terms_agree_with_the_explanations(document, policy, seed):
    result = settle_any(document, policy, lambda options: options[seed % len(options)])
    if result is not None:
        assert_terms_match(result)
