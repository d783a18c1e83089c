"""settlements.wording: every cell and option described exactly, from the engine's table."""

import pytest

from settlements import wording
from settlements.rules import Policy, decision_options, remedy_for, split_terms

TYPES = ("regular", "freeroll", "satellite")
STAGES = ("pre", "early", "middle", "late")


def outcomes():
    """(type, stage, decision, remedy) for every cell, every option and both late formulas."""
    for kind in TYPES:
        for stage in STAGES:
            options = decision_options(kind, stage)
            for option in options:
                yield kind, stage, option, remedy_for(kind, stage, decision=option)
            if not options:
                remedies = {
                    remedy_for(kind, stage, policy=Policy(late_formula=formula))
                    for formula in ("chip_equity", "chip_position")
                }
                for remedy in sorted(remedies):
                    yield kind, stage, None, remedy


OUTCOMES = list(outcomes())


def text_of(kind, stage, decision, remedy) -> str:
    return wording.describe(kind, stage, remedy, decision=decision)


def test_the_outcomes_cover_all_twelve_cells_and_every_option():
    assert {(kind, stage) for kind, stage, _, _ in OUTCOMES} == {
        (kind, stage) for kind in TYPES for stage in STAGES
    }
    # 12 cells, 3 of them with two options, 2 of them with two late formulas.
    assert len(OUTCOMES) == 12 + 3 + 2


@pytest.mark.parametrize(("kind", "stage", "decision", "remedy"), OUTCOMES)
def test_every_description_follows_the_split_terms(kind, stage, decision, remedy):
    text = text_of(kind, stage, decision, remedy)
    assert text.endswith(".") and "None" not in text and "  " not in text
    terms = split_terms(kind, stage, remedy)
    if terms is None or terms.floor is None:
        assert "first gets" not in text
    elif terms.floor == "buy_in":
        assert "first gets back every buy-in they paid" in text
    else:
        assert "first gets the prize of the lowest place still in play" in text
    if terms is not None and terms.cap == "first_prize":
        assert "Nobody gets more than the first prize" in text
    elif terms is not None and terms.cap == "one_seat":
        assert "Nobody gets more than the value of one seat" in text
    else:
        assert "Nobody gets more than" not in text
    if terms is not None and terms.pool == "late_pool":
        assert "already paid to players knocked out in the money" in text
    if kind == "satellite" and remedy != "refund":
        assert "one seat ticket plus the excess in T$" in text
    else:
        assert "ticket" not in text


def test_a_regular_middle_split_pays_the_buy_in_first_and_caps_at_the_first_prize():
    text = wording.describe("regular", "middle", "chip_equity")
    assert text.startswith(
        "Each player still holding chips first gets back every buy-in they paid."
    )
    assert "half in proportion to chips and half equally" in text
    assert "Nobody gets more than the first prize" in text
    assert "No fee is given back." in text


def test_a_freeroll_middle_chip_equity_split_has_no_buy_in_floor():
    text = wording.option_description("freeroll", "middle", "chip_equity")
    assert "first gets" not in text
    assert "Nothing is guaranteed before the split: a freeroll has no buy-in" in text
    assert "All of the prize pool is shared" in text
    assert "Nobody gets more than the first prize" in text
    assert "No FPP is given back." in text


@pytest.mark.parametrize("option", ["chip_proportional", "chip_equity"])
def test_a_satellite_middle_split_is_capped_at_one_seat_without_a_floor(option):
    text = wording.option_description("satellite", "middle", option)
    assert "Nobody gets more than the value of one seat" in text
    assert "first prize" not in text
    assert "first gets" not in text and "no buy-in is given back" in text
    assert "No fee is given back." in text


def test_the_two_satellite_middle_options_differ_only_in_the_formula():
    proportional = wording.option_description("satellite", "middle", "chip_proportional")
    equity = wording.option_description("satellite", "middle", "chip_equity")
    assert "shared among the players still holding chips, in proportion to chips." in proportional
    assert "half in proportion to chips and half equally." in equity
    assert proportional.replace("in proportion to chips.", "") == equity.replace(
        "half in proportion to chips and half equally.", ""
    )


@pytest.mark.parametrize("kind", ["regular", "freeroll"])
def test_the_late_floor_holds_for_regulars_and_freerolls_alike(kind):
    text = wording.describe(kind, "late", "chip_equity")
    assert "first gets the prize of the lowest place still in play" in text
    assert "Nobody gets more than the first prize" in text
    assert ("No FPP is given back." in text) == (kind == "freeroll")


def test_chip_position_is_described_by_chip_rank():
    text = wording.describe("regular", "late", "chip_position")
    assert "half by the prize each player's chip rank would win and half equally" in text


@pytest.mark.parametrize("kind", ["regular", "satellite"])
def test_the_early_split_refunds_buy_in_and_fee_and_shares_the_rest_evenly_uncapped(kind):
    text = wording.describe(kind, "early", "refund_even_split")
    assert "gets back in cash every buy-in and fee they paid" in text
    assert "beyond those buy-ins" in text and "shared equally" in text and "no cap" in text
    assert "Players already knocked out get nothing." in text


def test_a_pre_stage_refund_reaches_every_entrant():
    for kind in ("regular", "satellite"):
        text = wording.describe(kind, "pre", "refund")
        assert "every entrant, including the players already knocked out" in text
        assert "every buy-in and fee they paid" in text and "no overlay" in text
    assert "gets back the FPP paid to enter" in wording.describe("freeroll", "pre", "fpp_refund")


def test_the_freeroll_early_options_refund_alike_and_differ_on_announcing_again():
    again = wording.option_description("freeroll", "early", "reschedule")
    not_again = wording.option_description("freeroll", "early", "no_reschedule")
    for text in (again, not_again):
        assert text.startswith("Every entrant, including the players already knocked out, gets ")
        assert "back the FPP paid to enter" in text
    assert "announced again for a new date; every entrant is invited" in again
    assert "not announced again" in not_again


def test_a_freeroll_middle_reschedule_pays_nothing_and_invites_the_players_left():
    text = wording.option_description("freeroll", "middle", "reschedule")
    assert text.startswith("Nothing is paid now, and the FPP buy-in is not given back")
    assert "players who still had chips are invited" in text


def test_satellite_late_ranks_by_chips_and_shares_ties():
    text = wording.describe("satellite", "late", "satellite_rank")
    assert "ranked by chips" in text and "worth one seat each" in text
    assert "Players tied in chips share equally" in text


def test_every_outcome_reads_differently_where_it_pays_differently():
    texts = {}
    for kind, stage, decision, remedy in OUTCOMES:
        texts.setdefault(text_of(kind, stage, decision, remedy), []).append((kind, stage))
    # Only a pre-stage refund reads the same for a regular and a satellite.
    shared = [cells for cells in texts.values() if len(cells) > 1]
    assert shared == [[("regular", "pre"), ("satellite", "pre")]]


def test_no_remedy_yet_has_no_words_and_a_remedy_the_cell_never_pays_is_refused():
    assert wording.describe("freeroll", "middle", None) == ""
    with pytest.raises(ValueError, match="never pays"):
        wording.describe("regular", "middle", "chip_position")


def test_cap_names_and_anchors():
    assert wording.cap_name("regular", "middle", "chip_equity") == "the first prize"
    assert wording.cap_name("satellite", "middle", "chip_equity") == "the value of one seat"
    assert wording.cap_name("satellite", "late", "satellite_rank") == ""
    assert wording.cap_name("regular", "early", "refund_even_split") == ""
    assert wording.policy_anchor("freeroll", "late") == "cell-freeroll-late"


def test_labels():
    assert wording.remedy_label("chip_equity") == "Chip equity split"
    assert wording.option_label("no_reschedule") == "Do not reschedule"
    assert wording.remedy_label("") == ""


def test_a_rulebook_policy_is_summarised_key_by_key():
    default = {"pre_pct": 5, "early_pct": 25, "late_formula": "chip_equity"}
    assert wording.policy_summary(default) == (
        "stage marks at 5 % and 25 %, late stage by chip equity split"
    )
    summary = wording.policy_summary(default | {"final_table_icm": 9, "middle_fee_refund": True})
    assert summary.endswith(", ICM from 9 players left in the money, fees back in the middle stage")


def test_icm_and_the_middle_stage_by_chips_have_words():
    assert "Independent Chip Model" in wording.describe("regular", "late", "icm")
    assert "Independent Chip Model" in wording.describe("freeroll", "late", "icm")
    assert wording.describe("regular", "middle", "chip_proportional")
