"""The review page's second opinion: what the policy pays each remaining player beside their
stack's ICM value, who loses most first, for the Tournament Manager and the auditor.

The figures are the ones stored when the settlement was prepared (services.icm); this page
only reads them, a page of rows at a time, so it costs the same for 10 or 10,000 players.
"""

from functools import partial

from settlements import charts, money, site_policy
from settlements.access import permissions
from settlements.models import IcmValuation, Settlement
from settlements.selectors import icm as icm_selectors
from settlements.views.kept import shared
from settlements.views.paging import CountedPaginator, page_number

ROWS_PER_PAGE = 25
# A done valuation never changes; a day bounds what an old chart keeps in the cache.
CHART_SECONDS = 86400
PAGE_PARAM = "icm_page"


def second_opinion(request, settlement: Settlement) -> dict | None:
    """The panel's context, or None when the user may not see it or there is nothing to show."""
    if settlement.is_adjustment or permissions.icm_read(user=request.user) is not None:
        return None
    valuation, job = _valuation_and_job(settlement)
    if valuation is None:
        return None
    flag = site_policy.icm_flag()
    context = {"valuation": valuation, "flag": flag, "page_param": PAGE_PARAM}
    if valuation.status != IcmValuation.Status.DONE:
        context["job"] = job
        return context
    rows = icm_selectors.icm_rows_by_loss(valuation, flag)
    page = CountedPaginator(rows, ROWS_PER_PAGE, count=valuation.players).get_page(
        page_number(request, PAGE_PARAM)
    )
    for row in page.object_list:
        row.percent = icm_selectors.difference_percent(row)
    context.update(
        page=page,
        # A knock-out's bounties are paid beside the pool that ICM values: shown apart.
        bounties=icm_selectors.has_bounties(settlement),
        flagged=icm_selectors.icm_flagged(valuation, flag).count(),
        can_propose=permissions.compensation_propose(
            case=settlement.case, user=request.user, has_settlement=True
        )
        is None,
        # Drawn only when its cached fragment is missing: the figures never change.
        chart=partial(icm_chart, valuation, settlement.currency),
    )
    return context


def _valuation_and_job(settlement: Settlement) -> tuple[IcmValuation | None, object]:
    """The settlement's valuation and, while it is being sampled, the job sampling it."""
    valuation = icm_selectors.icm_valuation(settlement)
    if valuation is None or valuation.status == IcmValuation.Status.DONE:
        return valuation, None
    return valuation, icm_selectors.icm_job(valuation)


def icm_chart(valuation: IcmValuation, currency: str) -> charts.IcmChart:
    """The chart of every remaining player's ICM value beside the policy's amount, drawn by
    the first process that shows it and read from the shared cache by the others."""
    parts = (valuation.pk, currency)
    return shared(
        "icm-chart", parts, partial(_drawn_icm_chart, valuation, currency), seconds=CHART_SECONDS
    )


def _drawn_icm_chart(valuation: IcmValuation, currency: str) -> charts.IcmChart:
    policy, icm = icm_selectors.icm_chart_points(valuation)
    return charts.icm_chart(policy, icm, count=valuation.players, currency=currency)


def compensation_initial(case, currency: str) -> dict | None:
    """The compensation form filled from the ICM second opinion: one line per flagged player
    with the difference, and a reason to edit; None when there is no comparison to use."""
    valuation = icm_selectors.case_icm_valuation(case)
    if valuation is None:
        return None
    flag = site_policy.icm_flag()
    # A satellite's prizes are seats and T$, so its shortfall is proposed in T$ too.
    unit = " T$" if case.tournament.seat_value else ""
    lines = [
        f"{row.player} {money.decimal_amount(-row.difference, 'cash', currency)}{unit}"
        for row in icm_selectors.icm_flagged(valuation, flag)
    ]
    if not lines:
        return None
    return {
        "entries": "\n".join(lines),
        "reason": flag.shortfall_reason(currency),
        "from_icm": True,
    }
