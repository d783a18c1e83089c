"""Each entrant of a rebuy or knock-out tournament on its case page: the entries, add-ons and
bounty the snapshot gives them and whether they are still in, paged, sorted and searched in
place (templates/settlements/includes/case_entries.html).

The list's own parameters (``entrants_q``, ``entrants_sort``, ``entrants_page``) keep it apart
from the page's other lists; a version 1 case has no such list and reads nothing for it.
"""

from functools import partial

from django.core.exceptions import PermissionDenied
from django.http import Http404

from settlements.access import permissions, roles
from settlements.models import Case
from settlements.selectors import entrants
from settlements.views.paging import CountedPaginator, RangePaginator, page_number
from settlements.views.rendering import render_page, wants_partial
from settlements.views.sorting import chosen_sort, sort_columns

ENTRANTS_PER_PAGE = 50
SEARCH, SORT, PAGE = "entrants_q", "entrants_sort", "entrants_page"
# The element the list's swaps replace, and the partial of case_detail.html that draws it.
TARGET, PARTIAL = "case-entrants", "entrants"
# Counts and money: who has the most is what one looks for first.
MOST_FIRST = frozenset({"chips", "entries", "add_ons", "bounty"})


def is_list_swap(request) -> bool:
    return wants_partial(request) and request.htmx.target == TARGET


def list_swap(request, case: Case):
    """The list alone, for htmx: a page, a sort or a search of it needs none of the case
    page's other reads (the totals above it sum every entrant again)."""
    context = case_entrants(request, case)
    if context is None:
        if not entrants.case_has_entry_columns(case):
            raise Http404("This case's tournament has no rebuys, add-ons or bounties to list.")
        raise PermissionDenied
    page = {"case": case, "tournament": case.tournament, "entrants_list": context}
    return render_page(request, "settlements/case_detail.html", page, partial=PARTIAL)


def entrant_columns(case: Case) -> dict[str, str]:
    """The sortable columns, by ``selectors.ENTRANT_SORTS`` key: add-ons and bounties only
    where the tournament sells or pays them."""
    tournament = case.tournament
    columns = {"position": "Order", "player": "Player", "chips": "Chips", "entries": "Entries"}
    if tournament.add_on is not None:
        columns["add_ons"] = "Add-ons"
    if tournament.entry_bounty:
        columns["bounty"] = "Their own bounty, returned"
    return columns


def case_entrants(request, case: Case) -> dict | None:
    """The context of the entrants list, or None where the case has none to show (a version 1
    snapshot, an individual case) or the user may not see what entrants paid."""
    if not entrants.case_has_entry_columns(case):
        return None
    if not roles.has_role(request.user, *permissions.AMOUNT_READERS):
        return None
    columns = entrant_columns(case)
    sorting = chosen_sort(request, columns, "position", param=SORT)
    search = entrants.entrant_search(request.GET.get(SEARCH))
    count = case.entrants or 0
    if search.problem:
        paginator = CountedPaginator([], ENTRANTS_PER_PAGE, count=0)
    elif not search.term and sorting.key == "position" and not sorting.descending:
        read = partial(entrants.case_entrant_range, case)
        paginator = RangePaginator(read, ENTRANTS_PER_PAGE, count=count, field="position")
    else:
        rows = entrants.case_entrant_rows(
            case, search=search.term, sort=sorting.key, descending=sorting.descending
        )
        # Unsearched, every entrant is listed: the case's own count spares a COUNT.
        known = rows.count() if search.term else count
        paginator = CountedPaginator(rows, ENTRANTS_PER_PAGE, count=known)
    return {
        "search": search,
        "sorting": sorting,
        "sort_label": columns[sorting.key].lower(),
        "sort_value": "" if sorting.key == "position" and not sorting.descending else sorting.value,
        "columns": sort_columns(
            request,
            sorting,
            columns,
            param=SORT,
            page_param=PAGE,
            descending_first=MOST_FIRST,
        ),
        "page": paginator.get_page(page_number(request, PAGE)),
        "has_add_ons": "add_ons" in columns,
        "has_bounties": "bounty" in columns,
    }
