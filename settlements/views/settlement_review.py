"""Reviewing a settlement, from preparation to the approved ledger.

GET      /settlements/<id>/                    summary, totals, chart, payouts (?q=&page=)
GET      /settlements/<id>/player/?player=…    how one player's amount came about
POST     /settlements/<id>/submit/             an operator sends it for approval
GET/POST /settlements/<id>/approve/            a Tournament Manager confirms and approves
GET/POST /settlements/<id>/reject/             … or sends it back with a reason
GET      /settlements/<id>/ledger.csv          the approved settlement's lines, streamed

Every figure on these pages is the engine's output as stored when the settlement was
prepared (payout rows, explanations, totals); nothing is computed again here.
"""

import hashlib
import sys
from functools import partial
from html import escape
from pathlib import Path
from urllib.parse import quote

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.template.loader import get_template, render_to_string
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST, require_safe

from settlements import charts, ledger, selectors, services, statements
from settlements.access import permissions, roles
from settlements.access.decorators import role_required
from settlements.csv_export import csv_download
from settlements.errors import DomainError, InvalidTransition, NotAllowed
from settlements.forms import ReasonForm
from settlements.models import Settlement
from settlements.rules import Basis
from settlements.selectors import payments as payment_reads
from settlements.templatetags.money import fpp, money, tickets
from settlements.templatetags.players import PLAYER_ID_TEMPLATE, player_id_html
from settlements.templatetags.review import thousands
from settlements.views import confirming, invitations
from settlements.views.paging import CountedPaginator, RangePaginator, page_number
from settlements.views.rendering import go_to, render_invalid, render_page
from settlements.workflow import SettlementStatus

TEMPLATE = "settlements/settlement_review.html"
PAYOUTS_PER_PAGE = 50
UNIT_ORDER = ("cash", "tdollars", "tickets", "fpp")

REVIEW_PARTIALS = {
    "payouts": "payouts",
    "settlement-actions": "actions",
    "player-detail": "player_panel",
    **invitations.PARTIALS,
}

# What the Tournament Manager's two answers do: service, permission, words for the page.
REVIEW_ACTIONS = {
    "approve": (services.settlement_approve, permissions.settlement_approve, "Approve", "approved"),
    "reject": (services.settlement_reject, permissions.settlement_reject, "Reject", "rejected"),
}


@require_safe
@role_required(*permissions.AMOUNT_READERS)
def settlement_review(request, settlement_id: int):
    settlement = _settlement(settlement_id)
    # ?player=ID opens the explain panel: "Explain" pushes that URL, so Back closes the panel
    # and a reload or a shared link shows the page with it open.
    player = request.GET.get("player", "")
    explained = None
    if player and not settlement.is_adjustment:
        explained = _explained(settlement, player)
        if explained is None and request.htmx and request.htmx.target == "player-detail":
            raise Http404("This player was not an entrant of the settlement's tournament.")
    context = _review_context(request, settlement, player=player if explained else "")
    context.update(explained or {})
    return render_page(request, TEMPLATE, context, partial=REVIEW_PARTIALS)


@require_safe
@role_required(*permissions.AMOUNT_READERS)
def settlement_player(request, settlement_id: int):
    settlement = _settlement(settlement_id, people=False)
    player = request.GET.get("player", "")
    explained = _explained(settlement, player) if player else None
    if explained is None:
        raise Http404("This player was not an entrant of the settlement's tournament.")
    context = {
        "settlement": settlement,
        "case": settlement.case,
        "currency": settlement.currency,
        **explained,
    }
    return render_page(
        request, "settlements/settlement_player.html", context, partial="player_detail"
    )


@require_POST
@role_required(roles.OPERATOR, roles.TOURNAMENT_MANAGER)
def settlement_submit(request, settlement_id: int):
    settlement = _settlement(settlement_id)
    try:
        services.settlement_submit(settlement=settlement, actor=request.user)
    except NotAllowed:
        raise PermissionDenied from None
    except DomainError as error:
        context = _review_context(request, settlement)
        context["actions_error"] = error.message
        return render_invalid(request, TEMPLATE, context, partial="actions")
    messages.success(request, f"{settlement} was sent to the Tournament Managers for approval.")
    return go_to(request, reverse("settlement_review", args=[settlement.pk]))


@role_required(roles.TOURNAMENT_MANAGER)
def settlement_approve(request, settlement_id: int):
    return _answer(request, settlement_id, "approve")


@role_required(roles.TOURNAMENT_MANAGER)
def settlement_reject(request, settlement_id: int):
    return _answer(request, settlement_id, "reject")


@require_safe
@role_required(*permissions.LEDGER_READERS)
def settlement_ledger(request, settlement_id: int):
    settlement = _settlement(settlement_id)
    try:
        rows = ledger.settlement_ledger_csv(settlement)
    except InvalidTransition:
        raise Http404("Only an approved settlement has a ledger to pay.") from None
    return csv_download(rows, ledger.ledger_filename(settlement))


def _answer(request, settlement_id: int, action: str):
    """The confirmation page of approve or reject, and the answer itself."""
    settlement = _settlement(settlement_id)
    service, permission, verb, done = REVIEW_ACTIONS[action]
    form = ReasonForm(request.POST or None)
    refusal = permission(settlement=settlement, user=request.user)
    context = {
        **_summary(settlement),
        "action": action,
        "verb": verb,
        "form": form,
        "refusal": refusal,
    }
    return confirming.answer_review(
        request,
        template="settlements/settlement_confirm.html",
        context=context,
        form=form,
        perform=lambda reason: service(settlement=settlement, actor=request.user, reason=reason),
        done_message=f"{settlement} {done}.",
        done_url=reverse("settlement_review", args=[settlement.pk]),
        own_work=refusal is not None and refusal.kind == permissions.OWN_WORK,
    )


def _explained(settlement: Settlement, player: str) -> dict | None:
    """What the explain panel shows of ``player``, or None when they were not an entrant."""
    statement = selectors.player_statement(settlement, player)
    if statement is None:
        return None
    return {"explained": True, "statement": statement, "player": player}


def _settlement(settlement_id: int, *, people: bool = True) -> Settlement:
    try:
        return selectors.settlement_detail(settlement_id, people=people)
    except Settlement.DoesNotExist:
        raise Http404("No such settlement.") from None


def _summary(settlement: Settlement) -> dict:
    totals = selectors.settlement_totals(settlement)
    units = [unit for unit in UNIT_ORDER if unit in totals.by_unit]
    pool, house = totals.by_source.get("pool", {}), totals.by_source.get("house", {})
    # The stored totals laid out as the payouts table's footer: one cell per unit column.
    footer = [
        (f"All {settlement.payout_count:,} players", [(u, totals.by_unit[u]) for u in units]),
        ("From the prize pool", [(u, pool.get(u)) for u in units]),
        ("From the house", [(u, house.get(u)) for u in units]),
    ]
    return {
        "settlement": settlement,
        "case": settlement.case,
        "tournament": settlement.case.tournament,
        "currency": settlement.currency,
        "totals": totals,
        "units": units,
        "footer": footer,
        # Who chose the option it settles by, and why: the approver weighs that reason too.
        "decision": selectors.settlement_decision(settlement),
    }


# Payout charts drawn in this process, by settlement and preparation time, with their SVG as
# rendered (by loaded chart template, so one reloaded in development is drawn again). A
# settlement's payouts are written once and never change, so an entry is never stale; this
# spares every view the shared cache's read of the points, the drawing and its render. Bounded.
CHART_TEMPLATE = "settlements/charts/payout.html"
_CHARTS: dict[tuple[int, str, int], tuple[charts.PayoutChart | None, str]] = {}
_CHARTS_KEPT = 64


def _payout_chart(settlement: Settlement) -> tuple[charts.PayoutChart | None, str]:
    """The settlement's payout chart and its drawing (None and "" when it pays nobody)."""
    template = get_template(CHART_TEMPLATE)
    key = (settlement.pk, settlement.prepared_at.isoformat(), id(template.template))
    if key not in _CHARTS:
        points = selectors.settlement_chart_points(settlement)
        chart, drawing = None, ""
        if points:
            chart = charts.payout_chart(
                points, count=settlement.payout_count, currency=settlement.currency
            )
            drawing = template.render({"chart": chart})
        if len(_CHARTS) >= _CHARTS_KEPT:
            _CHARTS.clear()
        _CHARTS[key] = (chart, drawing)
    return _CHARTS[key]


def _review_context(request, settlement: Settlement, *, player: str = "") -> dict:
    """The review page's context; ``player`` is the entrant whose explanation is open."""
    user = request.user
    can_download = settlement.status == SettlementStatus.APPROVED and roles.has_role(
        user, *permissions.PAYMENT_READERS
    )
    search = request.GET.get("q", "").strip()
    if settlement.is_adjustment:
        rows = selectors.settlement_lines(settlement)
        rows = rows.filter(player__icontains=search) if search else rows
        # Line numbers run 1, 2, … without gaps in every settlement and adjustment.
        known, field, first = settlement.line_count, "line_no", 1
    elif search:
        rows = selectors.settlement_payouts(settlement, search=search)
    else:
        rows = partial(selectors.settlement_payout_range, settlement)
        known, field, first = settlement.payout_count, "position", 0
    if search:
        paginator = CountedPaginator(rows, PAYOUTS_PER_PAGE, count=rows.count())
    else:
        paginator = RangePaginator(rows, PAYOUTS_PER_PAGE, count=known, field=field, first=first)
    chart, chart_drawing = _payout_chart(settlement)
    answer_refusal = permissions.settlement_approve(settlement=settlement, user=user)
    page = paginator.get_page(page_number(request))
    summary = _summary(settlement)
    parts_shown, payout_rows = (), ""
    if not settlement.is_adjustment:
        parts_shown, payout_rows = _payout_rows(
            settlement, page, search=search, player=player, units=summary["units"]
        )
    return {
        **summary,
        "invitations": invitations.invitations(request, settlement.case, summary["decision"]),
        "explained": False,
        "player": player,
        "search": search,
        "page": page,
        "parts_shown": parts_shown,
        "payout_rows": payout_rows,
        "chart": chart,
        "chart_drawing": chart_drawing,
        "can_submit": permissions.settlement_submit(settlement=settlement, user=user) is None,
        "can_answer": answer_refusal is None,
        "own_work": answer_refusal is not None and answer_refusal.kind == permissions.OWN_WORK,
        "can_download": can_download,
        "payments": payment_reads.reconciliation(
            payment_reads.releases_of(settlement=settlement.pk)
        )
        if can_download
        else None,
        "actions_error": "",
    }


def _payout_rows(
    settlement: Settlement, page, *, search: str, player: str, units: list[str]
) -> tuple[tuple[str, ...], str]:
    """The labels of the payout parts shown and the page's rows, as HTML.

    Rendering the 50 rows was half the page's time. The payouts never change, so a page of
    rows once rendered is kept in the shared cache (selectors.payout_rows_key says under what)
    and later views, by anyone, read neither the rows nor render them.
    """
    key = selectors.payout_rows_key(
        settlement, variant=(page.number, search, player, units, _rows_code())
    )
    kept = selectors.kept_payout_rows(key)
    if kept is not None:
        return kept
    parts_shown = _name_parts(settlement, page)
    if page.object_list:
        html = _draw_rows(
            page.object_list,
            explain="?" + urlencode({"q": search, "page": page.number, "player": ""}),
            units=units,
            currency=settlement.currency,
            parts=bool(parts_shown),
            player=player,
        )
        selectors.keep_payout_rows(key, parts_shown, html)
        return parts_shown, html
    # Who was paid nothing is read afresh: only the payouts are known never to change.
    unpaid = selectors.settlement_unpaid_entrants(settlement, search=search) if search else ()
    html = render_to_string(
        f"{TEMPLATE}#no_payout_rows",
        {"settlement": settlement, "units": units, "search": search, "unpaid": unpaid},
    )
    return parts_shown, html


# How the rows sit in the template's table body (settlement_review.html, where the partial for
# a page without payouts is): the same bytes as when the template drew them.
_ROW_START = "\n                    <tr>\n                      "
_CELL_BREAK = "\n                      "
_ROW_END = "\n                    </tr>\n                  "


def _draw_rows(
    payouts, *, explain: str, units: list[str], currency: str, parts: bool, player: str
) -> str:
    """A page of payout rows as HTML, drawn in one pass.

    Drawing the 50 rows through the template (a filter, a lookup and an escape per cell) was
    most of a first view's CPU; the cells here use the same formatting (the money filters,
    settlements/money.py underneath) and escaping, so the markup is what the template drew.
    Each row links to this page with its player's explanation open, keeping the search and
    the page (``explain``, built once) so Back returns to this very list.
    """
    # The figures are digits, separators, fixed words and the currency code: escaping them
    # changes nothing unless the code itself has a character to escape (checked once).
    text = escape if escape(currency) != currency else str
    formats = {"cash": money, "tdollars": money, "tickets": tickets, "fpp": fpp}
    columns = [
        (unit, partial(money, currency=currency) if formats[unit] is money else formats[unit])
        if unit in units
        else None
        for unit in UNIT_ORDER
    ]
    # quote() leaves no character to escape; the fixed part is escaped once.
    explain = escape(explain)
    player_template = get_template(PLAYER_ID_TEMPLATE)
    rows = []
    for payout in payouts:
        cells = [
            f"<td>{player_id_html(payout.player, player_template)}</td>",
            f'<td class="num">{thousands(payout.chips)}</td>',
        ]
        for column in columns:
            if column is None:  # the template left the unit's line empty
                cells.append("")
            else:
                unit, show = column
                cells.append(f'<td class="num">{text(show(getattr(payout, unit)))}</td>')
        if not parts:
            cells.append("")
        elif payout.parts:
            cells.append(
                "".join(
                    f'<td class="num" data-part="{part.code}">{text(part.shown)}</td>'
                    for part in payout.parts
                )
            )
        else:
            cells.append("<td></td><td></td>")
        url = explain + quote(payout.player, safe="/")
        current = ' aria-current="true"' if payout.player == player else ""
        cells.append(
            f'<td><a href="{url}" hx-get="{url}" hx-push-url="true"{current}>Explain'
            f'<span class="visually-hidden"> the amount of {escape(payout.player)}</span></a></td>'
        )
        rows.append(_ROW_START + _CELL_BREAK.join(cells) + _ROW_END)
    return mark_safe("".join(rows))  # noqa: S308 (every value escaped above)


# A digest of the code that draws the rows, so that rows kept by an older release (the cache
# is in the database and outlives a deployment) are not shown by a newer one.
_ROWS_CODE_MODULES = (
    "settlements.money",
    "settlements.player_ids",
    "settlements.statements",
    "settlements.templatetags.money",
    "settlements.templatetags.players",
    "settlements.templatetags.review",
    __name__,
)
_rows_code_digest: dict[tuple[int, ...], str] = {}


def _rows_code() -> str:
    templates = [get_template(name) for name in (TEMPLATE, PLAYER_ID_TEMPLATE)]
    # get_template wraps the loader's cached template anew on each call: key by the latter,
    # so a template reloaded in development is read again.
    loaded = tuple(id(getattr(template, "template", template)) for template in templates)
    if loaded not in _rows_code_digest:
        digest = hashlib.blake2b(digest_size=16)
        for template in templates:
            digest.update(template.template.source.encode())
        for name in _ROWS_CODE_MODULES:
            digest.update(Path(sys.modules[name].__file__).read_bytes())
        _rows_code_digest.clear()
        _rows_code_digest[loaded] = digest.hexdigest()
    return _rows_code_digest[loaded]


def _name_parts(settlement: Settlement, page) -> tuple[str, ...]:
    """Give each payout row on the page its parts (statements.payout_parts): the guaranteed
    part apart from the share of the rest. Returns the parts' labels for the table's head, or
    an empty tuple when this settlement's split guarantees nothing first."""
    basis = Basis.from_dict(settlement.basis) if settlement.basis else None
    page.object_list = list(page.object_list)
    labels: tuple[str, ...] = ()
    for row in page.object_list:
        row.parts = statements.payout_parts(
            basis,
            settlement.remedy or None,
            settlement.remaining,
            selectors.explained(row),
            settlement.currency,
        )
        if len(row.parts) > 1:
            labels = tuple(part.label for part in row.parts)
    return labels
