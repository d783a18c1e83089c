"""Answering players: find them by id across incidents, and their statements.

GET /players/?q=ID[&after=ID][&page=N]              the cases of a player id, then ids that
                                                    start with it
GET /settlements/<id>/statement/?player=ID          one player's statement in a settlement
GET /settlements/<id>/statement/print/?player=ID    the same as a printable page
GET /settlements/<id>/statements.jsonl, .csv        every entrant's statement, streamed
GET /incidents/<id>/statements.jsonl, .csv          … of every approved settlement of an incident

Every role that may see amounts may use them (permissions.AMOUNT_READERS, as for the review page).
Every figure comes from the statements (settlements.statements), which take it from the
engine's stored explanation; nothing here computes an amount.
"""

import json
import re
from functools import partial

from django.http import Http404, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from settlements import player_ids
from settlements.access import permissions
from settlements.access.decorators import role_required
from settlements.exports.spreadsheets import csv_chunks, csv_download
from settlements.models import Settlement
from settlements.money import UNIT_ORDER
from settlements.selectors import players as player_selectors
from settlements.selectors.payments.states import player_totals
from settlements.selectors.settlements import settlement_detail
from settlements.statements import Statement, document
from settlements.views.lookups import incident_or_404
from settlements.views.paging import peek_page
from settlements.views.rendering import render_page

CASES_PER_PAGE = 25
OTHER_IDS_SHOWN = 20
# A statement is a few kB of CSV: smaller pieces than a ledger's keep each one near 1 MB.
STATEMENTS_PER_CHUNK = 250

CSV_HEADER = (
    "settlement",
    "case",
    "incident",
    "tournament",
    "rulebook",
    "rulebook_version",
    "settlement_status",
    "player",
    "player_written_out",
    "chips",
    "situation",
    "cash",
    "tdollars",
    "tickets",
    "fpp",
    "amounts",
    "exact_before_rounding",
    "headline",
    "statement",
    "payment",
)


@require_safe
@role_required(*permissions.AMOUNT_READERS)
def players(request):
    """The template reads what a search finds (``_found``) where it shows it."""
    query = request.GET.get("q", "")
    context = {
        "query": query,
        "query_escaped": player_ids.escaped(query),
        "after": request.GET.get("after", ""),
        "found": partial(_found, query, request.GET),
    }
    return render_page(request, "settlements/players.html", context, partial="player_results")


def _found(query: str, params) -> dict:
    """The ids matching ``query``; for an exact id, a page of their cases and their totals."""
    named = player_selectors.named_players()
    search = player_selectors.player_search(
        query, after=params.get("after", ""), limit=OTHER_IDS_SHOWN, named=named
    )
    found = {
        "search": search,
        "others": [(player, player_ids.escaped(player)) for player in search.others],
        "page": None,
        "rows": None,
        "totals": [],
    }
    if search.exact:
        entries = partial(player_selectors.player_entries, query)
        page = peek_page(entries, params.get("page"), CASES_PER_PAGE)
        others = player_selectors.player_other_cases(query, named=named) if page.number == 1 else []
        found |= {
            "page": page,
            "rows": player_selectors.player_cases(query, page.items, others),
            # Read only when its own fragment is missing too: the same on every page of cases.
            "totals": partial(player_totals, query),
        }
    return found


@require_safe
@role_required(*permissions.AMOUNT_READERS)
def settlement_statement(request, settlement_id: int):
    statement, settlement = _statement(request, settlement_id, request.GET.get("player", ""))
    context = {"statement": statement, "settlement": settlement, "case": settlement.case}
    return render_page(request, "settlements/statement.html", context, partial="statement")


@require_safe
@role_required(*permissions.AMOUNT_READERS)
def settlement_statement_print(request, settlement_id: int):
    statement, settlement = _statement(request, settlement_id, request.GET.get("player", ""))
    return render(
        request,
        "settlements/statement_print.html",
        {"statement": statement, "settlement": settlement},
    )


@require_safe
@role_required(*permissions.AMOUNT_READERS)
def settlement_statements_jsonl(request, settlement_id: int):
    settlement = _settlement(settlement_id)
    rows = player_selectors.settlement_statements(settlement)
    return _jsonl_download(_jsonl(rows), _filename(f"settlement-{settlement.pk}", settlement))


@require_safe
@role_required(*permissions.AMOUNT_READERS)
def settlement_statements_csv(request, settlement_id: int):
    settlement = _settlement(settlement_id)
    rows = player_selectors.settlement_statements(settlement)
    stem = _filename(f"settlement-{settlement.pk}", settlement)
    return csv_download(csv_chunks(_csv(rows), rows_per_chunk=STATEMENTS_PER_CHUNK), f"{stem}.csv")


@require_safe
@role_required(*permissions.AMOUNT_READERS)
def incident_statements_jsonl(request, incident_id: int):
    incident = incident_or_404(incident_id)
    rows = player_selectors.incident_statements(incident)
    return _jsonl_download(_jsonl(rows), f"crashdesk-statements-incident-{incident.pk}")


@require_safe
@role_required(*permissions.AMOUNT_READERS)
def incident_statements_csv(request, incident_id: int):
    incident = incident_or_404(incident_id)
    rows = player_selectors.incident_statements(incident)
    stem = f"crashdesk-statements-incident-{incident.pk}"
    return csv_download(csv_chunks(_csv(rows), rows_per_chunk=STATEMENTS_PER_CHUNK), f"{stem}.csv")


# --- Helpers -----------------------------------------------------------------------------------


def _settlement(settlement_id: int) -> Settlement:
    try:
        settlement = settlement_detail(settlement_id, people=False)
    except Settlement.DoesNotExist:
        raise Http404("No such settlement.") from None
    if settlement.is_adjustment:
        raise Http404("An adjustment has no statements of its own; see the settlement's.")
    return settlement


def _statement(request, settlement_id: int, player: str) -> tuple[Statement, Settlement]:
    settlement = _settlement(settlement_id)
    statement = player_selectors.player_statement(settlement, player) if player else None
    if statement is None:
        raise Http404("This player was not an entrant of the settlement's tournament.")
    return statement, settlement


def _filename(stem: str, settlement: Settlement) -> str:
    tournament = re.sub(r"[^A-Za-z0-9._-]+", "_", settlement.case.tournament.operator_id)[:60]
    return f"crashdesk-statements-{stem}-{tournament}"


def _jsonl_download(lines, stem: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(lines, content_type="application/jsonl; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{stem}.jsonl"'
    return response


def _jsonl(statements):
    """One JSON document per line, sent STATEMENTS_PER_CHUNK lines at a time."""
    lines = []
    for statement in statements:
        lines.append(json.dumps(document(statement), ensure_ascii=False) + "\n")
        if len(lines) == STATEMENTS_PER_CHUNK:
            yield "".join(lines)
            lines = []
    yield "".join(lines)


def _csv(statements):
    yield CSV_HEADER
    for statement in statements:
        facts, totals = statement.settlement, statement.totals
        yield (
            facts.settlement_id,
            facts.case_id,
            facts.incident_id or "",
            facts.tournament_id,
            *(facts.rulebook or ("", "")),
            facts.status,
            statement.player,
            statement.player_escaped,
            statement.chips,
            statement.kind,
            *(totals.get(unit, 0) for unit in UNIT_ORDER),
            statement.amounts_text,
            str(statement.exact) if statement.exact is not None else "",
            statement.headline,
            statement.text(),
            statement.payments_text,
        )
