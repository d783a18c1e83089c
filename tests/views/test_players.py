"""The players page, statements (page, partial, printable) and their exports."""

import csv
import io
import json
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from settlements.models import CasePlayer, SettlementLine
from settlements.services import settlements as settlement_services
from settlements.services.bases import settlement_basis_restore
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.incidents import incident_report, tournament_create
from settlements.services.individual_cases import individual_case_open, prize_withdrawal_decide
from settlements.services.settlements import AdjustmentEntry
from settlements.services.snapshots import case_load_snapshot
from tests.conftest import snapshot_bytes
from tests.services.helpers import as_before_the_figures_were_kept
from tests.views.conftest import HISTORY_RESTORE, HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


def squash(html: str) -> str:
    return re.sub(r">\s+<", "><", html)


def players_url(query: str = "", **params) -> str:
    from django.utils.http import urlencode

    return f"{reverse('players')}?{urlencode({'q': query, **params})}"


def statement_url(settlement, player: str, name: str = "settlement_statement") -> str:
    from django.utils.http import urlencode

    return f"{reverse(name, args=[settlement.pk])}?{urlencode({'player': player})}"


@pytest.fixture
def desk(operator, tournament_manager, second_manager, incident):
    """Two incidents; p000001 plays in both, a look-alike id in one; one settlement approved
    with an adjustment, a compensation and a prize given in error to p000001."""
    later = incident_report(
        actor=operator, title="Second outage", started_at=timezone.now() - timedelta(minutes=5)
    )
    players = [
        {"id": f"p{n:06d}", "chips": 1000 * (21 - n) if n <= 10 else 0} for n in range(1, 21)
    ]
    players[5]["id"] = "p00000\u0665"  # an Arabic-Indic digit five where p000006 would be
    first = case_load_snapshot(
        actor=operator,
        incident=incident,
        snapshot=snapshot_bytes(
            type="regular", stage="middle", tournament_id="T-ONE", players=players
        ),
    )
    second = case_load_snapshot(
        actor=operator,
        incident=later,
        snapshot=snapshot_bytes(type="regular", stage="late", entrants=20, tournament_id="T-TWO"),
    )
    approved = settlement_services.settlement_prepare(case=first, actor=operator)
    approved = settlement_services.settlement_submit(settlement=approved, actor=operator)
    approved = settlement_services.settlement_approve(settlement=approved, actor=tournament_manager)
    settlement_services.settlement_adjust(
        settlement=approved,
        actor=operator,
        reason="late registration refund",
        entries=[AdjustmentEntry("p000001", "prize", "cash", 150, "pool")],
    )
    compensation = compensation_propose(
        case=first,
        actor=operator,
        reason="disconnected at the crash",
        entries=[CompensationEntry("p000001", 500)],
    )
    compensation_approve(compensation=compensation, actor=second_manager)
    prize_withdrawal_decide(
        case=first,
        actor=tournament_manager,
        player="p000001",
        prize="a seat to the wrong event",
        outcome="leave",
        reason="the player could not have known",
    )
    prepared = settlement_services.settlement_prepare(case=second, actor=operator)
    return {"first": first, "second": second, "approved": approved, "prepared": prepared}


# --- The players page ----------------------------------------------------------------------------


def test_a_player_is_found_across_incidents_with_what_each_case_owed(as_auditor, desk):
    html = squash(assert_full_page(as_auditor.get(players_url("p000001"))))
    assert 'Player <span class="player-id"><span class="mono">p000001</span></span>' in html
    approved, prepared = desk["approved"], desk["prepared"]
    # Newest case first: the second incident's case, then the first's.
    assert html.index(f"Case #{desk['second'].pk}") < html.index(f"Case #{desk['first'].pk}")
    cash = sum(
        SettlementLine.objects.filter(settlement=approved, player="p000001").values_list(
            "amount", flat=True
        )
    )
    assert f"{cash // 100:,}.{cash % 100:02d} USD" in html
    assert f'href="{statement_url(approved, "p000001")}"' in html
    assert f'href="{statement_url(prepared, "p000001")}"' in html
    # What followed: the adjustment, the compensation, the prize given in error.
    assert f"Adjustment #{approved.adjustments.get().pk}</a>: 1.50 USD" in html
    assert "Compensation #" in html and "5.00 USD" in html
    assert "a seat to the wrong event" in html and "Leave the prize" in html
    # No other id starts with p000001 (the ids run to p000020).
    assert "Other ids that start with" not in html


def test_exact_first_then_prefix_and_more_ids_by_keyset(as_operator, desk):
    html = squash(as_operator.get(players_url("p00001")).content.decode())
    assert "No player has exactly this id; ids that start with it" in html
    listed = re.findall(r'<span class="mono">(p00001\d)</span>', html)
    assert listed == sorted(listed) and listed[0] == "p000010" and len(listed) == 10
    # A prefix matching more ids than a page pages on after the last one shown.
    page = squash(as_operator.get(players_url("p0000")).content.decode())
    assert "More ids" in page
    shown = re.findall(r'<li><a href="\?q=([^"]+)"', page)
    assert len(shown) == 20
    after = as_operator.get(players_url("p0000", after=shown[-1])).content.decode()
    rest = re.findall(r'<li><a href="\?q=([^"]+)"', squash(after))
    assert rest and rest[0] > shown[-1] and not set(rest) & set(shown)


def test_a_look_alike_id_is_written_out(as_operator, desk):
    html = squash(as_operator.get(players_url("p00000")).content.decode())
    assert "written out: <code>p00000\\u0665</code>" in html
    exact = squash(as_operator.get(players_url("p00000\u0665")).content.decode())
    assert f"Case #{desk['first'].pk}" in exact
    assert f"Case #{desk['second'].pk}" not in exact  # only the first snapshot has that id


def test_no_match_says_so_and_the_page_swaps_as_a_partial(as_operator, desk):
    html = assert_partial(as_operator.get(players_url("zz\u200b"), **HTMX), "player-results")
    assert "No player id is" in html and "written out: <code>zz\\u200b</code>" in html
    assert_full_page(as_operator.get(players_url("p000001"), **HISTORY_RESTORE))
    empty = assert_full_page(as_operator.get(reverse("players")))
    assert "Enter a player id" in empty


def test_players_named_by_an_individual_case_are_found(as_operator, tournament_manager, desk):
    # A tournament without a snapshot: the individual case names whom it concerns.
    quiet = tournament_create(
        actor=tournament_manager, operator_id="T-QUIET", type="regular", currency="USD"
    )
    case = individual_case_open(
        actor=tournament_manager,
        tournament=quiet,
        players=["walk-in-7", "walk-in-77"],
        description="lost connection for an hour",
    )
    html = squash(as_operator.get(players_url("walk-in")).content.decode())
    assert '<span class="mono">walk-in-7</span>' in html
    # The exact id first, with its cases; then the ids that start with it.
    exact = squash(as_operator.get(players_url("walk-in-7")).content.decode())
    assert f"Case #{case.pk}" in exact and "Individual case" in exact
    assert exact.index("Player <span") < exact.index("Other ids that start with")
    assert '<span class="mono">walk-in-77</span>' in exact


# --- Statements --------------------------------------------------------------------------------


def test_an_older_settlement_shows_no_working_until_its_figures_are_restored(as_operator, desk):
    approved = desk["approved"]
    as_before_the_figures_were_kept(approved)
    explain = reverse("settlement_player", args=[approved.pk]) + "?player=p000001"
    for url in (statement_url(approved, "p000001"), explain):
        html = squash(as_operator.get(url).content.decode())
        assert "How it was worked out" not in html and "The arithmetic" not in html
        assert "prepared before CrashDesk kept the figures" in html
    settlement_basis_restore(settlement=approved)
    html = squash(as_operator.get(statement_url(approved, "p000001")).content.decode())
    assert "How it was worked out" in html
    assert "prepared before CrashDesk kept the figures" not in html


def test_the_statement_page_full_partial_and_printable(as_operator, desk):
    approved = desk["approved"]
    url = statement_url(approved, "p000001")
    html = squash(assert_full_page(as_operator.get(url)))
    assert "Statement of" in html and "The parts of what you receive" in html
    assert "How it was worked out" in html and "The prize pool being shared" in html
    assert "Adjustment #" in html and "Compensation #" in html  # also on record
    assert f'href="{statement_url(approved, "p000001", "settlement_statement_print")}"' in html
    partial = assert_partial(as_operator.get(url, **HTMX), "statement")
    assert "Plain text to paste" in partial
    printable = as_operator.get(statement_url(approved, "p000001", "settlement_statement_print"))
    page = printable.content.decode()
    assert page.lower().startswith("<!doctype html>")
    assert 'class="topbar"' not in page and "How it was worked out" in page


def test_a_knocked_out_player_and_an_outsider(as_operator, desk):
    approved = desk["approved"]
    html = as_operator.get(statement_url(approved, "p000020")).content.decode()
    assert "knocked out before the crash, so this settlement pays you nothing" in html
    assert as_operator.get(statement_url(approved, "nobody")).status_code == 404
    assert as_operator.get(reverse("settlement_statement", args=[approved.pk])).status_code == 404


def test_an_adjustment_has_no_statements_of_its_own(as_operator, desk):
    adjustment = desk["approved"].adjustments.get()
    assert as_operator.get(statement_url(adjustment, "p000001")).status_code == 404


# --- Exports -----------------------------------------------------------------------------------


def body(response) -> str:
    return b"".join(response.streaming_content).decode()


def test_every_statement_of_a_settlement_as_json_lines_and_csv(as_operator, desk):
    approved = desk["approved"]
    response = as_operator.get(reverse("settlement_statements_jsonl", args=[approved.pk]))
    assert response.streaming and response["Content-Type"].startswith("application/jsonl")
    assert 'filename="crashdesk-statements-settlement-' in response["Content-Disposition"]
    documents = [json.loads(line) for line in body(response).splitlines()]
    entrants = set(CasePlayer.objects.filter(case=desk["first"]).values_list("player", flat=True))
    assert {d["player"] for d in documents} == entrants
    for document in documents:
        lines = SettlementLine.objects.filter(settlement=approved, player=document["player"])
        assert sum(document["amounts"].values()) == sum(line.amount for line in lines)
        assert document["text"].startswith(f"Statement for player {document['player']}")
    lookalike = next(d for d in documents if d["player"] == "p00000\u0665")
    assert lookalike["player_written_out"] == "p00000\\u0665"
    out = next(d for d in documents if d["player"] == "p000020")
    assert out["situation"] == "knocked_out" and out["amounts"] == {}

    response = as_operator.get(reverse("settlement_statements_csv", args=[approved.pk]))
    rows = list(csv.DictReader(io.StringIO(body(response))))
    assert len(rows) == len(entrants)
    first = next(row for row in rows if row["player"] == "p000001")
    assert int(first["cash"]) == sum(
        SettlementLine.objects.filter(settlement=approved, player="p000001").values_list(
            "amount", flat=True
        )
    )
    assert "How it was worked out" in first["statement"]


def test_an_incident_exports_the_statements_of_its_approved_settlements(as_operator, desk):
    incident = desk["first"].incident
    response = as_operator.get(reverse("incident_statements_jsonl", args=[incident.pk]))
    documents = [json.loads(line) for line in body(response).splitlines()]
    assert {d["settlement"] for d in documents} == {desk["approved"].pk}
    # The second incident's settlement is only prepared: nothing goes to its players yet.
    later = desk["second"].incident
    response = as_operator.get(reverse("incident_statements_csv", args=[later.pk]))
    assert body(response).splitlines()[1:] == []


# --- Hostile and clumsy searches -----------------------------------------------------------


@pytest.mark.parametrize("query", ["p%", "p_00001", "p%1", "_", "%", "p\\", "\\", "p00000[1]"])
def test_like_wildcards_and_backslashes_are_plain_characters(as_operator, desk, query):
    html = squash(as_operator.get(players_url(query)).content.decode())
    assert "No player id is" in html
    assert not re.findall(r'<li><a href="\?q=([^"]+)"', html)


@pytest.mark.parametrize(
    "raw",
    [
        "%ED%A0%80",  # a lone surrogate, as UTF-8 would spell it
        "p0000%ED%B0%80",
        "%FF%FE",
        "p%E2%80%AE0001",  # a right-to-left override
        "%01%1B%7F",
        "%F4%8F%BF%BF",  # U+10FFFF, whose next code point does not exist
        "p" * 10_240,
        "%20p000001",
    ],
)
def test_any_search_text_answers_the_page_twice(as_operator, desk, raw):
    for _ in range(2):
        response = as_operator.get(f"{reverse('players')}?q={raw}&after={raw}")
        assert response.status_code == 200
    assert as_operator.get(f"{reverse('players')}?q={raw}", **HTMX).status_code == 200


def test_a_nul_in_the_search_is_refused_by_name(as_operator, desk):
    response = as_operator.get(f"{reverse('players')}?q=p%00")
    assert response.status_code == 400 and response.content.decode().startswith("?q ")


@pytest.mark.parametrize(
    ("player", "status"),
    [
        ("p0000%ED%A0%80", 404),
        ("x" * 10_240, 404),
        ("p00000%D9%A5", 200),  # the look-alike entrant p00000\u0665
        ("p000005", 200),
        ("p00000%D9%A1", 404),  # looks like p000001, is not
        ("%EF%BC%9D1", 404),
        ("p%00", 400),
    ],
)
def test_a_statement_for_any_player_text_is_a_statement_or_not_found(
    as_operator, desk, player, status
):
    settlement = desk["approved"]
    for name in ("settlement_statement", "settlement_statement_print"):
        for _ in range(2):
            response = as_operator.get(f"{reverse(name, args=[settlement.pk])}?player={player}")
            assert response.status_code == status
    arabic = as_operator.get(statement_url(settlement, "p00000\u0665")).content.decode()
    latin = as_operator.get(statement_url(settlement, "p000005")).content.decode()
    assert "p00000\\u0665" in arabic and "p00000\\u0665" not in latin
