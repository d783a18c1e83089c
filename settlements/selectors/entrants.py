"""A crash-snapshot/2 case's entrants as its page lists them: each with the entries, add-ons
and bounty the snapshot gives them (RULES.md §8), a page at a time, since a tournament may
have 300,000 entrants.

Every read here is one query of the case's entrant rows, whatever the page's size: the
snapshot order reads a range of positions through the (case, position) order; a search is
an exact id or a prefix in code-point order, the order the rules and the players page use.
"""

from dataclasses import dataclass

from django.db.models import F, QuerySet

from settlements.models import Case, CasePlayer
from settlements.models.base import ID_MAX_LENGTH
from settlements.selectors.players import by_code_point, prefix_end

# Sort keys and the columns each orders by; the snapshot's order breaks ties, first to last
# whichever way the column runs, so that a page boundary never moves between two requests.
ENTRANT_SORTS = {
    "position": ("position",),
    "player": ("player_code",),
    "chips": ("chips",),
    "entries": ("entries",),
    "add_ons": ("add_ons",),
    "bounty": ("bounty",),
}
# What a row shows; the row is never read whole (its case, its constraints' columns).
_ROW_FIELDS = ("position", "player", "chips", "entries", "add_ons", "bounty")


@dataclass(frozen=True)
class EntrantSearch:
    """What a search of the entrants asks for: ``term`` as typed (stripped), and ``problem``
    when it can match nobody whatever the case holds (longer than any player id)."""

    term: str
    problem: str = ""


def entrant_search(raw: str | None) -> EntrantSearch:
    term = (raw or "").strip()
    if len(term) > ID_MAX_LENGTH:
        return EntrantSearch(term, f"A player id has at most {ID_MAX_LENGTH} characters.")
    return EntrantSearch(term)


def case_has_entry_columns(case: Case) -> bool:
    """Whether the case came from a crash-snapshot/2, whose entrants carry entries, add-ons
    and bounties (a version 1 case's rows hold only the defaults)."""
    return case.is_crash and bool(case.entrants_digest)


def case_entrant_rows(
    case: Case, *, search: str = "", sort: str = "position", descending: bool = False
) -> QuerySet[CasePlayer]:
    """The case's entrants matching ``search`` (the id itself or ids starting with it), in the
    order of ``sort`` (an ``ENTRANT_SORTS`` key); unevaluated, for a paginator to slice."""
    rows = CasePlayer.objects.filter(case=case).only(*_ROW_FIELDS)
    if search or sort == "player":
        rows = rows.annotate(player_code=by_code_point())
    if search:
        rows = rows.filter(player_code__gte=search)
        if end := prefix_end(search):
            rows = rows.filter(player_code__lt=end)
    order = [F(name).desc() if descending else F(name).asc() for name in ENTRANT_SORTS[sort]]
    return rows.order_by(*order, "position")


def case_entrant_range(case: Case, bottom: int, top: int) -> list[CasePlayer]:
    """The entrants at snapshot positions ``bottom`` to ``top - 1``: a page in the snapshot's
    order, read through the position range rather than an OFFSET past every row before it."""
    return list(
        CasePlayer.objects.filter(case=case, position__gte=bottom, position__lt=top)
        .only(*_ROW_FIELDS)
        .order_by("position")
    )
