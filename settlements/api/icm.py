"""GET /api/v1/settlements/ID/icm: the settlement's ICM second opinion, each remaining player's
ICM value beside what the policy pays them, to the roles the review page shows it to."""

from typing import Annotated

import msgspec
from django.http import HttpRequest, JsonResponse

from settlements import problems, site_policy
from settlements.access import permissions
from settlements.api.answers import IcmPage, Refusal
from settlements.api.base import answer, api_endpoint, next_page
from settlements.api.reading import read_query
from settlements.models import IcmValuation, Settlement, TokenScope
from settlements.selectors.icm import icm_rows_by_player, icm_valuation
from settlements.selectors.settlements import settlement_detail

ICM_PAGE_SIZE = 500
ICM_MAX_PAGE_SIZE = 5000


class IcmQuery(msgspec.Struct, kw_only=True, frozen=True):
    """A page of ``limit`` players, those after the id ``after`` in code-point order."""

    after: str | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=ICM_MAX_PAGE_SIZE)] = ICM_PAGE_SIZE


@api_endpoint(
    "GET",
    "HEAD",
    scope=TokenScope.ICM_READ,
    # The roles the review page shows the second opinion to (permissions.icm_read).
    allowed=permissions.ICM_READERS,
    query=IcmQuery,
    answers={200: IcmPage, 404: Refusal},
)
def settlement_icm(request: HttpRequest, user, settlement_id: int) -> JsonResponse:
    """The valuation (how it was made, the prizes in play, the site's flag threshold) and a
    page of its players' figures; while it is still being sampled, its status and no figures."""
    query = read_query(request.GET, IcmQuery)
    try:
        settlement = settlement_detail(settlement_id, people=False)
    except Settlement.DoesNotExist:
        return problems.refusal(404, "$", f"There is no settlement #{settlement_id}.")
    valuation = None if settlement.is_adjustment else icm_valuation(settlement)
    if valuation is None:
        return problems.refusal(
            404,
            "$",
            f"{settlement} has no ICM figures: they are made for settlements of the middle and "
            "late stages, where chips decide what is paid.",
        )
    flag = site_policy.icm_flag()
    rows, more = [], False
    if valuation.status == IcmValuation.Status.DONE:
        page = icm_rows_by_player(valuation, flag, after=query.after)
        rows = list(page[: query.limit + 1])
        more, rows = len(rows) > query.limit, rows[: query.limit]
    return answer(
        {
            "settlement": settlement.pk,
            "case": settlement.case_id,
            "currency": settlement.currency,
            "status": valuation.status,
            "method": valuation.method,
            "players": valuation.players,
            "prizes_in_play": valuation.prizes_in_play,
            "seed": valuation.seed,
            "samples": valuation.samples,
            "flag": {"percent": flag.percent, "min_amount": flag.min_amount},
            "values": [
                {
                    "player": row.player,
                    "chips": row.chips,
                    "chip_rank": row.chip_rank,
                    "icm": row.amount,
                    "icm_exact": row.value,
                    "standard_error": row.standard_error,
                    "policy": row.policy_amount,
                    "difference": row.difference,
                    "flagged": row.flagged,
                    "bounty": row.bounty,
                }
                for row in rows
            ],
            "next": next_page(request, after=rows[-1].player) if more else None,
        },
        IcmPage,
    )
