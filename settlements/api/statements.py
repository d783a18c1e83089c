"""GET /api/v1/settlements/ID/statements: the players' statements of a settlement, for a CRM or
a mailer; what the statement pages and exports show, to the roles that may see amounts."""

from itertools import islice
from typing import Annotated

import msgspec
from django.http import HttpRequest, JsonResponse

from settlements import problems, statements
from settlements.access import permissions
from settlements.api.answers import Refusal, StatementsPage
from settlements.api.base import answer, api_endpoint, next_page
from settlements.api.reading import read_query
from settlements.models import Settlement, TokenScope
from settlements.rules import InvalidInput
from settlements.selectors import players
from settlements.selectors.settlements import settlement_detail

STATEMENTS_PAGE_SIZE = 100
STATEMENTS_MAX_PAGE_SIZE = 1000


class StatementsQuery(msgspec.Struct, kw_only=True, frozen=True):
    """A page of statements (``limit`` of them, of the players after the id ``after``), or
    one ``player``'s statement."""

    player: Annotated[
        str | None, msgspec.Meta(description="One player's statement; takes no after or limit.")
    ] = None
    after: Annotated[
        str | None,
        msgspec.Meta(description="A player id: the page starts after it (see `next`)."),
    ] = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=STATEMENTS_MAX_PAGE_SIZE)] | None = None

    def __post_init__(self):
        if self.player is not None and (self.after is not None or self.limit is not None):
            raise InvalidInput.at("?player", "asks for one statement: leave out ?after and ?limit")

    @property
    def page_size(self) -> int:
        return self.limit or STATEMENTS_PAGE_SIZE


@api_endpoint(
    "GET",
    "HEAD",
    scope=TokenScope.STATEMENTS_READ,
    allowed=permissions.LEDGER_READERS,
    query=StatementsQuery,
    answers={200: StatementsPage, 404: Refusal},
)
def settlement_statements(request: HttpRequest, user, settlement_id: int) -> JsonResponse:
    """The players' statements of a settlement.

    ``limit`` at a time in code-point order of their ids after ``after`` (``next`` is the
    following page's URL); or, with ``player``, that one player's, with what else is on record
    for them."""
    query = read_query(request.GET, StatementsQuery)
    try:
        settlement = settlement_detail(settlement_id, people=False)
    except Settlement.DoesNotExist:
        return problems.refusal(404, "$", f"There is no settlement #{settlement_id}.")
    if settlement.is_adjustment:
        return problems.refusal(
            404,
            "$",
            f"{settlement} is an adjustment; its players' statements are those of the "
            f"settlement it corrects, #{settlement.corrects_id}.",
        )
    more = False
    if query.player is not None:
        found = [players.player_statement(settlement, query.player)]
        if found[0] is None:
            return problems.refusal(
                404, "?player", f"{query.player!r} was not an entrant of {settlement}'s tournament."
            )
    else:
        limit = query.page_size
        page = players.settlement_statements(settlement, after=query.after, chunk_size=limit + 1)
        found = list(islice(page, limit + 1))
        more, found = len(found) > limit, found[:limit]
    return answer(
        {
            "settlement": settlement.pk,
            "case": settlement.case_id,
            "settlement_status": settlement.status,
            "statements": [statements.document(statement) for statement in found],
            "next": next_page(request, after=found[-1].player) if more else None,
        },
        StatementsPage,
    )
