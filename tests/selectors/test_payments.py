"""selectors.payments: approved lines in feed order from any set of releases, any window of
places, and the keys that name them."""

import random

import pytest

from settlements.selectors.payments import lines as payment_lines
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.individual_cases import prize_withdrawal_approve, prize_withdrawal_decide
from tests.services.helpers import approved

pytestmark = pytest.mark.django_db


def lines(releases=None, **kwargs):
    return list(payment_lines.approved_lines(releases, **kwargs))


def compensation(case, operator, manager, *entries):
    proposal = compensation_propose(
        case=case,
        actor=operator,
        reason="lag at the final table",
        entries=[CompensationEntry(*entry) for entry in entries],
    )
    return compensation_approve(compensation=proposal, actor=manager)


@pytest.fixture
def desk(operator, tournament_manager, second_manager, snapshot_factory):
    """A settlement, a compensation and a prize withdrawal approved, in that order."""
    settlement = approved(operator, tournament_manager, snapshot_factory, stage="late")
    paid = compensation(
        settlement.case, operator, second_manager, ("p000001", 500), ("p000002", 40, "fpp")
    )
    taken = prize_withdrawal_approve(
        withdrawal=prize_withdrawal_decide(
            case=settlement.case,
            actor=tournament_manager,
            player="p000003",
            prize="Cash paid twice",
            outcome="withdraw",
            reason="paid by mistake",
            amount=700,
            unit="cash",
        ),
        actor=second_manager,
        reason="checked",
    )
    return settlement, paid, taken


@pytest.mark.parametrize("seed", range(3))
def test_any_window_of_places_gives_exactly_its_lines(desk, seed):
    everything = lines()
    last = payment_lines.last_position()
    assert last == len(everything)
    generator = random.Random(seed)
    for _ in range(30):
        after = generator.randrange(0, last + 1)
        until = generator.randrange(after, last + 2)
        got = [line.position for line in lines(after=after, until=until)]
        assert got == list(range(after + 1, min(until, last) + 1))


def test_small_records_read_together_keep_their_order(
    operator, tournament_manager, second_manager, snapshot_factory, monkeypatch
):
    settlement = approved(operator, tournament_manager, snapshot_factory, stage="late")
    made = [
        compensation(settlement.case, operator, second_manager, (f"p00000{n}", 10 * n))
        for n in range(1, 6)
    ]
    # Chunks of 3 lines: groups split inside the run of compensation records.
    monkeypatch.setattr(payment_lines, "CHUNK_SIZE", 3)
    got = lines()
    assert [line.position for line in got] == list(range(1, len(got) + 1))
    assert [line.key for line in got[-5:]] == [f"C{c.pk}-1" for c in made]


def test_keys_that_name_no_released_line(desk):
    settlement, paid, taken = desk
    known = {f"{settlement.pk}-1", f"C{paid.pk}-2", f"W{taken.pk}-1"}
    unknown = {
        f"{settlement.pk}-{settlement.line_count + 1}",
        f"C{paid.pk}-3",
        f"W{taken.pk}-2",
        "R1-1",
        f"{settlement.pk}",
        "-1",
        f"{settlement.pk}-0",
        f"X{settlement.pk}-1",
        f" {settlement.pk}-1",
        f"{settlement.pk}-1\n",
        f"{settlement.pk}-\N{ARABIC-INDIC DIGIT ONE}",
        f"{settlement.pk}-{'9' * 19}",
        "",
    }
    found = payment_lines.lines_of(known | unknown)
    assert found.keys() == known
    assert {key: line.key for key, line in found.items()} == {key: key for key in known}


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ([5, 6, 7, 9], {"line_no__gte": 5, "line_no__lte": 9}),
        ([1, 1000], {"line_no__in": [1, 1000]}),
        ([3], {"line_no__gte": 3, "line_no__lte": 3}),
    ],
)
def test_nearly_contiguous_line_numbers_are_read_as_a_range(numbers, expected):
    assert payment_lines.line_numbers("line_no", numbers) == expected
