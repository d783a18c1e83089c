"""A player's cases are read a page at a time, and their totals through an index of the
ledger lines by player, however many cases and lines the desk holds. The captured queries
carry their values written in, so their plans are asked for as they ran."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from settlements.selectors.payments.states import player_totals
from settlements.selectors.players import player_entries, player_statement
from tests.services.helpers import approved, load

pytestmark = pytest.mark.django_db


def _plan(sql: str) -> str:
    """PostgreSQL's plan of a query, with sequential scans ruled out where anything else can
    answer it: a test desk is too small for the planner to prefer an index on its own."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}")
        return "\n".join(row[0] for row in cursor.fetchall())


def test_the_pages_of_a_players_cases_run_newest_first_without_gaps(users, snapshot_factory):
    cases = [load(users["operator"], snapshot_factory, tournament_id=f"PAGE-{n}") for n in range(5)]
    newest_first = [case.pk for case in reversed(cases)]
    pages = [player_entries("p000001", offset, 2) for offset in (0, 2, 4, 6)]
    assert [[entry.case_id for entry in page] for page in pages] == [
        newest_first[0:2],
        newest_first[2:4],
        newest_first[4:],
        [],
    ]
    entry = pages[0][0]
    assert entry.player == "p000001" and entry.case.tournament.operator_id == "PAGE-4"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plans")
def test_a_page_of_cases_is_picked_on_the_entrants_index_alone(users, snapshot_factory):
    load(users["operator"], snapshot_factory, tournament_id="PLAN-1")
    with CaptureQueriesContext(connection) as queries:
        player_entries("p000001", 50, 26)
    (query,) = queries.captured_queries
    plan = _plan(query["sql"]).splitlines()
    # The LIMIT applies to the player's entrants alone, before any join: an OFFSET over the
    # joined rows made PostgreSQL sort every case of the desk first.
    start = next(n for n, line in enumerate(plan) if line.lstrip().startswith("->  Limit"))
    depth = len(plan[start]) - len(plan[start].lstrip())
    below = []
    for line in plan[start + 1 :]:
        if len(line) - len(line.lstrip()) <= depth:
            break
        below.append(line)
    assert any("Scan" in line and "case_player_by_id" in line for line in below)
    assert not any("Join" in line or "Nested Loop" in line for line in below)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plans")
def test_a_players_totals_read_their_lines_through_the_index_by_player(users, snapshot_factory):
    approved(
        users["operator"], users["tournament_manager"], snapshot_factory, tournament_id="SUM-1"
    )
    with CaptureQueriesContext(connection) as queries:
        totals = player_totals("p000001")
    assert totals
    lines = next(q["sql"] for q in queries.captured_queries if "settlementline" in q["sql"])
    assert "line_by_player_idx" in _plan(lines)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plans")
def test_a_statements_lines_are_read_through_the_same_index(users, snapshot_factory):
    """The lines have one index by player (migration 0035 replaced the one that led with the
    settlement): some players' lines within one settlement are found through it too."""
    settlement = approved(
        users["operator"], users["tournament_manager"], snapshot_factory, tournament_id="ONE-1"
    )
    with CaptureQueriesContext(connection) as queries:
        assert player_statement(settlement, "p000001") is not None
    lines = next(q["sql"] for q in queries.captured_queries if "settlementline" in q["sql"])
    with connection.cursor() as cursor:
        # Without statistics a few-line table's indexes all cost the same to the planner.
        cursor.execute("ANALYZE settlements_settlementline")
    plan = _plan(lines)
    assert "line_by_player_idx" in plan and "Seq Scan" not in plan
