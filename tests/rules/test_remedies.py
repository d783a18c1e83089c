"""RULES.md §3 and §6: every type x stage cell, every decision, the settlement document."""

import json
from fractions import Fraction

import pytest

from settlements.rules import InvalidInput, Policy, remedies

from .builders import amounts, freeroll, regular, satellite, settle_doc


def rejected(document, **options) -> list[str]:
    with pytest.raises(InvalidInput) as error:
        settle_doc(document, **options)
    return [problem.path for problem in error.value.problems]


def kinds(result, player) -> list[tuple[str, str, int, str]]:
    return [(x.kind, x.unit, x.amount, x.source) for x in result.lines if x.player == player]


# --- Regular ----------------------------------------------------------------------------------


def test_regular_pre_refunds_every_entrant_but_not_the_overlay():
    result = settle_doc(regular([0, 5, 5, 5], started=False, guarantee=10000, payouts=[10000]))
    assert (result.stage, result.remedy, result.pool) == ("pre", "refund", 10000)
    assert amounts(result) == {"p01": 1100, "p02": 1100, "p03": 1100, "p04": 1100}
    assert kinds(result, "p01") == [
        ("refund_buy_in", "cash", 1000, "pool"),
        ("refund_fee", "cash", 100, "house"),
    ]
    assert result.pool_distributed == 4000  # the 6000 overlay is not paid


def test_regular_pre_with_a_free_entry_pays_nothing():
    result = settle_doc(
        regular([5, 5], buy_in=0, fee=0, guarantee=100, payouts=[100], started=False)
    )
    assert (result.payouts, result.lines, result.pool_distributed) == ([], [], 0)


def test_regular_early_refunds_the_remaining_and_splits_the_rest_evenly():
    # N = 20, E = 2 (10 %), guarantee 30000: P − R·B = 30000 − 18000 = 12000, 666⅔ each.
    chips = [100 + n for n in range(18)] + [0, 0]
    result = settle_doc(regular(chips, guarantee=30000, payouts=[15000, 9000, 6000]))
    assert (result.stage, result.remedy) == ("early", "refund_even_split")
    paid = amounts(result)
    assert "p19" not in paid and "p20" not in paid
    prizes = {x.player: x.amount for x in result.lines if x.kind == "prize"}
    # 12 cents left over go to the 12 biggest stacks (p07..p18).
    assert [prizes[f"p{n:02d}"] for n in (1, 6, 7, 18)] == [666, 666, 667, 667]
    assert sum(prizes.values()) == 12000
    assert result.pool_distributed == 30000
    assert result.explanations["p07"].exact == Fraction(2000, 3)


def test_regular_middle_pays_the_buy_in_first_and_keeps_fees():
    result = settle_doc(
        regular([90000, 4000, 3000, 2000, 1000] + [0] * 5, payouts=[3000, 3000, 2000, 2000])
    )
    assert (result.stage, result.remedy) == ("middle", "chip_equity")
    assert amounts(result) == {"p01": 3000, "p02": 1975, "p03": 1825, "p04": 1675, "p05": 1525}
    assert {line.kind for line in result.lines} == {"prize"}
    assert result.pool_distributed == 10000
    first = result.explanations["p01"]
    assert (first.capped, first.guaranteed, first.exact, first.share) == (True, 1000, 3000, 2000)
    assert min(amounts(result).values()) >= 1000


def test_regular_late_is_the_worked_example():
    result = settle_doc(regular([60000, 30000, 10000] + [0] * 7, payouts=[5000, 3000, 2000]))
    assert (result.stage, result.remedy, result.pool_distributed) == ("late", "chip_equity", 10000)
    assert amounts(result) == {"p01": 3867, "p02": 3267, "p03": 2866}
    a = result.explanations["p01"]
    assert (a.guaranteed, a.share, a.exact, a.rounded, a.rounding_cent) == (
        2000,
        Fraction(5600, 3),
        Fraction(11600, 3),
        3867,
        1,
    )
    assert result.explanations["p03"].rounding_cent == 0


def test_regular_late_does_not_pay_places_already_paid():
    payouts = [8000, 5000, 3000, 2000, 1000, 1000]
    result = settle_doc(regular([70000, 20000, 10000] + [0] * 17, payouts=payouts))
    assert result.pool_distributed == 16000  # P − prize(4..6)
    assert min(amounts(result).values()) >= 3000  # prize(R) each first
    assert sum(amounts(result).values()) == 16000


def test_regular_late_with_the_chip_position_policy():
    document = regular([60000, 30000, 10000] + [0] * 7, payouts=[5000, 3000, 2000])
    result = settle_doc(document, policy=Policy(late_formula="chip_position"))
    assert result.remedy == "chip_position"
    assert amounts(result) == {"p01": 3667, "p02": 3267, "p03": 3066}
    assert result.policy.late_formula == "chip_position"


# --- Freeroll ---------------------------------------------------------------------------------


def test_freeroll_pre_refunds_fpp_to_everyone():
    result = settle_doc(freeroll([5, 5, 0], started=False))
    assert (result.stage, result.remedy, result.pool_distributed) == ("pre", "fpp_refund", 0)
    assert amounts(result, "fpp") == {"p01": 250, "p02": 250, "p03": 250}
    assert kinds(result, "p03") == [("refund_fpp", "fpp", 250, "house")]


def test_freeroll_pre_without_an_fpp_buy_in_pays_nothing():
    assert settle_doc(freeroll([5, 5], started=False, fpp_buy_in=0)).payouts == []


EARLY_FREEROLL = [5] * 18 + [0, 0]
MIDDLE_FREEROLL = [9000, 7000, 5000, 4000] + [0] * 4


def test_freeroll_early_waits_for_the_reschedule_decision():
    pending = settle_doc(freeroll(EARLY_FREEROLL))
    assert (pending.stage, pending.remedy, pending.decision) == ("early", None, None)
    assert pending.decision_options == ["reschedule", "no_reschedule"]
    assert (pending.payouts, pending.lines) == ([], [])


@pytest.mark.parametrize("decision", ["reschedule", "no_reschedule"])
def test_freeroll_early_refunds_fpp_whatever_is_decided(decision):
    result = settle_doc(freeroll(EARLY_FREEROLL), decision=decision)
    assert (result.remedy, result.decision, result.decision_options) == ("fpp_refund", decision, [])
    assert set(amounts(result, "fpp").values()) == {250} and len(result.payouts) == 20
    assert result.pool_distributed == 0


def test_freeroll_middle_options():
    pending = settle_doc(freeroll(MIDDLE_FREEROLL, payouts=[5000, 3000, 2000]))
    assert (pending.stage, pending.decision_options) == ("middle", ["reschedule", "chip_equity"])
    rescheduled = settle_doc(
        freeroll(MIDDLE_FREEROLL, payouts=[5000, 3000, 2000]), decision="reschedule"
    )
    assert (rescheduled.remedy, rescheduled.payouts, rescheduled.pool_distributed) == (
        "reschedule",
        [],
        0,
    )
    split = settle_doc(
        freeroll(MIDDLE_FREEROLL, payouts=[5000, 3000, 2000]), decision="chip_equity"
    )
    assert split.remedy == "chip_equity" and split.pool_distributed == 10000
    assert sum(amounts(split).values()) == 10000
    assert {line.kind for line in split.lines} == {"prize"}  # no FPP back once prizes are paid
    assert split.explanations["p01"].guaranteed == 0


def test_freeroll_late_has_the_floor_and_the_cap():
    result = settle_doc(freeroll([90000, 5000, 5000] + [0] * 17, payouts=[4000, 4000, 2000]))
    assert (result.stage, result.remedy) == ("late", "chip_equity")
    assert amounts(result) == {"p01": 4000, "p02": 3000, "p03": 3000}


# --- Satellite --------------------------------------------------------------------------------

MIDDLE_SATELLITE = [20000, 15000, 9000, 7000, 5000, 3000, 1000] + [0] * 13


def test_satellite_pre_refunds_everyone_in_cash():
    result = settle_doc(satellite([5] * 4 + [0], started=False))
    assert (result.remedy, result.pool_distributed) == ("refund", 5000)
    assert set(amounts(result).values()) == {1100} and len(result.payouts) == 5


def test_satellite_middle_options_and_both_splits():
    pending = settle_doc(satellite(MIDDLE_SATELLITE))
    assert pending.decision_options == ["chip_proportional", "chip_equity"]
    proportional = settle_doc(satellite(MIDDLE_SATELLITE), decision="chip_proportional")
    assert amounts(proportional, "tdollars") == {
        "p01": 0,
        "p02": 0,
        "p03": 3600,
        "p04": 2800,
        "p05": 2000,
        "p06": 1200,
        "p07": 400,
    }
    equity = settle_doc(satellite(MIDDLE_SATELLITE), decision="chip_equity")
    assert amounts(equity, "tdollars")["p01"] == 4762 and amounts(equity, "tickets")["p01"] == 0
    for result in (proportional, equity):
        assert result.pool_distributed == 20000
        assert not [line for line in result.lines if line.unit == "cash"]  # fees kept, no refunds


# --- Decisions --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "decision"),
    [
        (regular([60000, 30000, 10000] + [0] * 7, payouts=[5000, 3000, 2000]), "reschedule"),
        (regular([5, 5], started=False), "chip_equity"),
        (freeroll(EARLY_FREEROLL), "chip_equity"),
        (freeroll(MIDDLE_FREEROLL), "no_reschedule"),
        (satellite(MIDDLE_SATELLITE), "reschedule"),
        (satellite(MIDDLE_SATELLITE), "CHIP_EQUITY"),
        (satellite(MIDDLE_SATELLITE), ""),
    ],
)
def test_a_decision_the_case_does_not_take_or_offer(document, decision):
    assert rejected(document, decision=decision) == ["--decision"]


def test_the_decision_messages_name_the_choices():
    with pytest.raises(InvalidInput) as error:
        settle_doc(freeroll(EARLY_FREEROLL), decision="split")
    assert "reschedule or no_reschedule" in str(error.value)


def test_bounds_that_cannot_hold_are_reported_at_the_field_behind_them(monkeypatch):
    # A valid snapshot always satisfies the bounds (§1's rules guarantee it), so force them.
    monkeypatch.setattr(
        remedies,
        "_bounds",
        lambda terms, bounds, refunded, paid_only: (100, 0, 10, "$", "tournament.payouts"),
    )
    document = regular([9, 5, 4, 3, 2] + [0] * 5, payouts=[5000, 3000, 2000])
    assert rejected(document) == ["tournament.payouts"]


# --- The document -----------------------------------------------------------------------------


def test_to_dict_and_to_json_give_the_crash_settlement_document():
    result = settle_doc(regular([60000, 30000, 10000] + [0] * 7, payouts=[5000, 3000, 2000]))
    document = result.to_dict()
    assert json.loads(result.to_json()) == document
    assert document["format"] == "crash-settlement/1"
    assert document["policy"] == {"pre_pct": 5, "early_pct": 25, "late_formula": "chip_equity"}
    assert document["payouts"][0] == {
        "player": "p01",
        "cash": 3867,
        "tdollars": 0,
        "tickets": 0,
        "fpp": 0,
    }
    assert document["lines"][0] == {
        "player": "p01",
        "kind": "prize",
        "unit": "cash",
        "amount": 3867,
        "source": "pool",
    }
    assert set(document) == {
        "format",
        "tournament_id",
        "policy",
        "stage",
        "remedy",
        "decision",
        "decision_options",
        "entrants",
        "eliminated",
        "remaining",
        "pool",
        "pool_distributed",
        "payouts",
        "lines",
    }


def test_rows_and_lines_are_sorted_by_code_point_id_then_kind():
    players = [{"id": i, "chips": 5} for i in ("b", "a", "B", "p10", "p9")]
    result = settle_doc(
        regular(players + [{"id": "z", "chips": 0}], guarantee=9000, payouts=[9000])
    )
    assert result.stage == "early"
    assert [row.player for row in result.payouts] == ["B", "a", "b", "p10", "p9"]
    assert [(line.player, line.kind) for line in result.lines[:3]] == [
        ("B", "refund_buy_in"),
        ("B", "refund_fee"),
        ("B", "prize"),
    ]
    assert all(line.amount > 0 for line in result.lines)
