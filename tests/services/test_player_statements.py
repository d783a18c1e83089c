"""Statements read from stored settlements (selectors.players): for random settlements of every
cell, stored through the services, each entrant's statement adds up to their ledger lines, its
printed arithmetic evaluates to its steps, and it says what the engine's own statement says."""

import json
from datetime import timedelta
from itertools import count

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from settlements.models import SettlementLine
from settlements.rules import assess, parse_snapshot, settle
from settlements.selectors.players import player_statement, settlement_statements
from settlements.selectors.settlements import settlement_detail
from settlements.services.decisions import decision_record
from settlements.services.settlements import settlement_prepare
from settlements.services.snapshots import case_load_snapshot
from tests.statement_helpers import from_engine
from tests.test_statements import CELLS, arithmetic_holds, cell_snapshots

pytestmark = pytest.mark.django_db

_numbers = count(1)


def store(document: dict, option: str | None, operator, marketing_manager):
    """The snapshot loaded, decided and prepared through the services."""
    document = {**document, "tournament": {**document["tournament"], "id": f"T-{next(_numbers)}"}}
    case = case_load_snapshot(actor=operator, snapshot=json.dumps(document))
    if option is not None:
        decision_record(
            case=case,
            actor=marketing_manager,
            option=option,
            reason="as the policy says",
            **(
                {"reschedule_at": timezone.now() + timedelta(days=7)}
                if option == "reschedule"
                else {}
            ),
        )
    return document, settlement_prepare(case=case, actor=operator)


@pytest.mark.parametrize(("kind", "stage"), CELLS)
@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, *HealthCheck],
)
@given(data=st.data())
def test_stored_statements_add_up_and_match_the_engines(
    kind, stage, data, operator, marketing_manager
):
    document = data.draw(cell_snapshots(kind, stage))
    snapshot = parse_snapshot(json.dumps(document))
    options = assess(snapshot).decision_options
    option = data.draw(st.sampled_from(options)) if options else None
    with transaction.atomic():
        document, settlement = store(document, option, operator, marketing_manager)
        settlement = settlement_detail(settlement.pk)
        stored = {s.player: s for s in settlement_statements(settlement)}
        lines: dict[str, dict[str, int]] = {}
        for line in SettlementLine.objects.filter(settlement=settlement):
            totals = lines.setdefault(line.player, {})
            totals[line.unit] = totals.get(line.unit, 0) + line.amount
        engine = settle(parse_snapshot(json.dumps(document)), decision=option)
        expected = {s.player: s for s in from_engine(engine, snapshot)}
        assert stored.keys() == {p["id"] for p in document["players"]}
        for player, statement in stored.items():
            assert statement.totals == lines.get(player, {})
            arithmetic_holds(statement)
            twin = expected[player]
            assert (statement.kind, statement.headline, statement.steps, statement.parts) == (
                twin.kind,
                twin.headline,
                twin.steps,
                twin.parts,
            )
            assert statement.exact == twin.exact and statement.rounding == twin.rounding
        # One statement read alone says the same as in the export.
        player = sorted(stored)[0]
        alone = player_statement(settlement, player)
        assert alone.steps == stored[player].steps and alone.totals == stored[player].totals
        transaction.set_rollback(True)


# A remaining player whose share of a tiny pool rounds to nothing has no payout row; the
# statement read back must say what the engine's says, with no breakdown of a zero amount.
SHARE_ROUNDED_TO_NOTHING = {
    "format": "crash-snapshot/1",
    "tournament": {
        "id": "T-cell",
        "type": "satellite",
        "currency": "EUR",
        "started": True,
        "buy_in": 1,
        "fee": 0,
        "seat_value": 5,
    },
    "players": [
        *({"id": f"#{i}", "chips": 1} for i in range(4)),
        {"id": "#4", "chips": 6},
        *({"id": f"#{i}", "chips": 0} for i in range(5, 8)),
    ],
}


@pytest.mark.django_db
def test_a_share_rounded_to_nothing_is_stated_alike_stored_or_not(operator, marketing_manager):
    document, settlement = store(
        SHARE_ROUNDED_TO_NOTHING, "chip_proportional", operator, marketing_manager
    )
    stored = player_statement(settlement_detail(settlement.pk), "#3")
    snapshot = parse_snapshot(json.dumps(document))
    engine = {
        s.player: s for s in from_engine(settle(snapshot, decision="chip_proportional"), snapshot)
    }
    assert stored.totals == {} and stored.parts == () == engine["#3"].parts
    assert (stored.headline, stored.steps) == (engine["#3"].headline, engine["#3"].steps)
