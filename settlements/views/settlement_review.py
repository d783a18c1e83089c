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

from functools import partial

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.http import urlencode
from django.views.decorators.http import require_POST, require_safe

from settlements import charts, statements
from settlements.access import permissions, roles
from settlements.access.decorators import role_required
from settlements.errors import DomainError, InvalidTransition, NotAllowed
from settlements.exports import ledger
from settlements.exports.spreadsheets import csv_download
from settlements.forms import ReasonForm
from settlements.models import Settlement
from settlements.money import UNIT_ORDER
from settlements.rules import Basis
from settlements.selectors import players
from settlements.selectors import settlements as settlement_selectors
from settlements.selectors.cases import settlement_decision
from settlements.selectors.payments.lines import releases_of
from settlements.selectors.payments.reconciliation import reconciliation
from settlements.selectors.previews import settlement_chart_points
from settlements.services import settlements as settlement_services
from settlements.views import confirming, invitations
from settlements.views.kept import shared
from settlements.views.paging import CountedPaginator, RangePaginator, page_number
from settlements.views.rendering import go_to, render_invalid, render_page
from settlements.views.second_opinion import second_opinion
from settlements.views.sorting import chosen_sort, sort_columns
from settlements.workflow import SettlementStatus

TEMPLATE = "settlements/settlement_review.html"
PAYOUTS_PER_PAGE = 50
# A chart's figures never change once prepared; a day bounds what an old one keeps in the cache.
CHART_SECONDS = 86400
# The payouts' orders: by player id as the engine lists them, or who gets the most first.
PAYOUT_COLUMNS = {"player": "Player", "amount": "Largest first"}

REVIEW_PARTIALS = {
    "payouts": "payouts",
    "settlement-actions": "actions",
    "player-detail": "player_panel",
    "second-opinion": "second_opinion",
    **invitations.PARTIALS,
}

# What the Tournament Manager's two answers do: service, permission, words for the page.
REVIEW_ACTIONS = {
    "approve": (
        settlement_services.settlement_approve,
        permissions.settlement_approve,
        "Approve",
        "approved",
    ),
    "reject": (
        settlement_services.settlement_reject,
        permissions.settlement_reject,
        "Reject",
        "rejected",
    ),
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
@role_required(*permissions.ADJUSTERS)
def settlement_submit(request, settlement_id: int):
    settlement = _settlement(settlement_id)
    try:
        settlement_services.settlement_submit(settlement=settlement, actor=request.user)
    except NotAllowed:
        raise PermissionDenied from None
    except DomainError as error:
        context = _review_context(request, settlement)
        context["actions_error"] = error.message
        return render_invalid(request, TEMPLATE, context, partial="actions")
    messages.success(request, f"{settlement} was sent to the Tournament Managers for approval.")
    return go_to(request, reverse("settlement_review", args=[settlement.pk]))


@role_required(*permissions.APPROVERS)
def settlement_approve(request, settlement_id: int):
    return _answer(request, settlement_id, "approve")


@role_required(*permissions.APPROVERS)
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
    statement = players.player_statement(settlement, player)
    if statement is None:
        return None
    return {"explained": True, "statement": statement, "player": player}


def _settlement(settlement_id: int, *, people: bool = True) -> Settlement:
    try:
        return settlement_selectors.settlement_detail(settlement_id, people=people)
    except Settlement.DoesNotExist:
        raise Http404("No such settlement.") from None


def _summary(settlement: Settlement) -> dict:
    totals = settlement_selectors.settlement_totals(settlement)
    units = [unit for unit in UNIT_ORDER if unit in totals.by_unit]
    pool, house = totals.by_source.get("pool", {}), totals.by_source.get("house", {})
    # The stored totals laid out as the payouts table's footer: one cell per unit column.
    footer = [
        (f"All {settlement.payout_count:,} players", [(u, totals.by_unit[u]) for u in units]),
        ("From the prize pool", [(u, pool.get(u)) for u in units]),
        ("From the house", [(u, house.get(u)) for u in units]),
    ]
    if bounties := totals.by_source.get("bounty"):
        footer.append(("Bounties", [(u, bounties.get(u)) for u in units]))
    return {
        "settlement": settlement,
        "case": settlement.case,
        "tournament": settlement.case.tournament,
        "currency": settlement.currency,
        "totals": totals,
        "units": units,
        "footer": footer,
        # Who chose the option it settles by, and why: the approver weighs that reason too.
        "decision": settlement_decision(settlement),
    }


def _payout_chart(settlement: Settlement) -> charts.PayoutChart | None:
    """The settlement's payout chart, None when it pays nobody in money: a ranking of up to
    300,000 payouts, which the page reads only when its cached chart fragment is missing, and
    then from the shared cache unless no process has drawn it yet."""
    parts = (settlement.pk, settlement.prepared_at, settlement.case.tournament.seat_value)
    return shared(
        "payout-chart", parts, partial(_drawn_payout_chart, settlement), seconds=CHART_SECONDS
    )


def _drawn_payout_chart(settlement: Settlement) -> charts.PayoutChart | None:
    points = settlement_chart_points(settlement)
    if not points:
        return None
    return charts.payout_chart(points, count=settlement.payout_count, currency=settlement.currency)


def _review_context(request, settlement: Settlement, *, player: str = "") -> dict:
    """The review page's context; ``player`` is the entrant whose explanation is open."""
    user = request.user
    approved = settlement.status == SettlementStatus.APPROVED
    follows_payments = approved and roles.has_role(user, *permissions.PAYMENT_READERS)
    search = request.GET.get("q", "").strip()
    sorting = chosen_sort(request, PAYOUT_COLUMNS, "player")
    by_amount = sorting.key == "amount" and not settlement.is_adjustment
    if settlement.is_adjustment:
        rows = settlement_selectors.settlement_lines(settlement, search=search)
        # Line numbers run 1, 2, … without gaps in every settlement and adjustment.
        known, field, first = settlement.line_count, "line_no", 1
    elif search or by_amount:
        rows = settlement_selectors.settlement_payouts(
            settlement, search=search, by_amount=by_amount
        )
    else:
        rows = partial(settlement_selectors.settlement_payout_range, settlement)
        known, field, first = settlement.payout_count, "position", 0
    if by_amount:
        count = rows.count() if search else settlement.payout_count
        paginator = CountedPaginator(rows, PAYOUTS_PER_PAGE, count=count)
    elif search:
        paginator = CountedPaginator(rows, PAYOUTS_PER_PAGE, count=rows.count())
    else:
        paginator = RangePaginator(rows, PAYOUTS_PER_PAGE, count=known, field=field, first=first)
    answer_refusal = permissions.settlement_approve(settlement=settlement, user=user)
    page = paginator.get_page(page_number(request))
    summary = _summary(settlement)
    # Read only where the page or its htmx partial shows it (never for a page of payouts).
    opinion = SimpleLazyObject(partial(second_opinion, request, settlement))
    return {
        **summary,
        "invitations": invitations.invitations(request, settlement.case, summary["decision"]),
        "explained": False,
        "player": player,
        "search": search,
        "sort": sorting.value,
        "payout_columns": sort_columns(request, sorting, PAYOUT_COLUMNS),
        "page": page,
        # Read by the template only when its cached fragments are missing: the payouts and
        # the chart never change once prepared.
        "payout_table": partial(_payout_table, settlement, page, search=search, sort=sorting.value),
        "payout_chart": partial(_payout_chart, settlement),
        "second_opinion": opinion,
        "can_submit": permissions.settlement_submit(settlement=settlement, user=user) is None,
        "can_answer": answer_refusal is None,
        "own_work": answer_refusal is not None and answer_refusal.kind == permissions.OWN_WORK,
        "can_download": approved and permissions.ledger_read(user=user) is None,
        "payments": reconciliation(releases_of(settlement=settlement.pk))
        if follows_payments
        else None,
        "actions_error": "",
    }


def _payout_table(settlement: Settlement, page, *, search: str, sort: str) -> dict:
    """What the payouts table shows of ``page``: its rows, each with its parts, the labels of
    the parts shown, and, when no payout matches the search, the entrants it pays nothing.
    Each row links to this page with its player's explanation open (``explain`` and the id),
    keeping the search and the page so Back returns to this very list."""
    rows = list(page.object_list)
    unpaid = ()
    if search and not rows:
        unpaid = players.settlement_unpaid_entrants(settlement, search=search)
    return {
        "rows": rows,
        "parts_shown": _name_parts(settlement, rows),
        "unpaid": unpaid,
        # The order is kept only when it is not the usual one, so the usual links stay short.
        "explain": "?"
        + urlencode(
            {"q": search, **({"sort": sort} if sort != "player" else {}), "page": page.number}
            | {"player": ""}
        ),
    }


def _name_parts(settlement: Settlement, rows: list) -> tuple[str, ...]:
    """Give each payout row its parts (statements.payout_parts): the guaranteed part apart
    from the share of the rest. Returns the parts' labels for the table's head, or an empty
    tuple when this settlement's split guarantees nothing first."""
    basis = Basis.from_dict(settlement.basis) if settlement.basis else None
    labels: tuple[str, ...] = ()
    # A rebuy knock-out's parts differ from player to player (RULES.md §8): read from the
    # page's own lines, one query.
    amounts = {}
    if basis is not None and (basis.per_player or basis.entry_bounty) and rows:
        amounts = settlement_selectors.line_amounts_by_kind(
            settlement, [row.player for row in rows]
        )
    for row in rows:
        row.parts = statements.payout_parts(
            basis,
            settlement.remedy or None,
            settlement.remaining,
            players.explained(row),
            settlement.currency,
            lines=amounts.get(row.player),
        )
        if len(row.parts) > 1:
            labels = tuple(part.label for part in row.parts)
    return labels
