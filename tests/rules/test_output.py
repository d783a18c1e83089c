"""A settlement's rows and lines from its columns of amounts (players in any order)."""

from settlements.rules.output import output
from settlements.rules.settlement import Line, PayoutRow


def test_lines_interleave_by_player_in_id_order_without_zero_amounts():
    ids = ["p3", "p1", "p2", "p0"]
    columns = {
        "prize_cash": [300, 100, 0, 0],
        "bounty": [50, 0, 20, 0],
        "refund_fee": [0, 0, 0, 0],  # nothing at all: no line of this kind
    }
    payouts, lines, distributed, positions = output(columns, ids, seat_value=0)
    assert payouts == [PayoutRow("p1", cash=100), PayoutRow("p2", cash=20), PayoutRow("p3", 350)]
    assert positions == [1, 2, 0]  # p0 is paid nothing
    assert lines == [
        Line("p1", "prize", "cash", 100, "pool"),
        Line("p2", "bounty", "cash", 20, "bounty"),
        Line("p3", "prize", "cash", 300, "pool"),
        Line("p3", "bounty", "cash", 50, "bounty"),
    ]
    assert distributed == 400  # bounties are not paid from the pool


def test_a_ticket_counts_its_seat_value_in_the_pool_paid_out():
    payouts, lines, distributed, positions = output(
        {"ticket": [1, 0], "prize_tdollars": [5, 7]}, ["b", "a"], seat_value=100
    )
    assert positions == [1, 0]
    assert payouts == [PayoutRow("a", tdollars=7), PayoutRow("b", tdollars=5, tickets=1)]
    assert [line.kind for line in lines] == ["prize", "prize", "ticket"]
    assert distributed == 112


def test_nothing_to_pay():
    assert output({"prize_cash": [0, 0]}, ["a", "b"], seat_value=0) == ([], [], 0, [])
