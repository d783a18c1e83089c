"""Lists sorted on the server by a column a person clicks, kept in the URL (``?sort=key`` or
``?sort=-key`` for descending) so a reload, a shared link and Back show the same order."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Sorting:
    key: str
    descending: bool

    @property
    def value(self) -> str:
        return f"-{self.key}" if self.descending else self.key


def chosen_sort(request, keys, default: str, *, param: str = "sort") -> Sorting:
    """The sort asked for in the URL, among ``keys``; ``default`` (ascending) otherwise.
    ``param`` names it where the page holds more than one sorted list."""
    raw = request.GET.get(param, "")
    key = raw.removeprefix("-")
    if key not in keys:
        return Sorting(default, False)
    return Sorting(key, raw.startswith("-"))


def sort_columns(
    request,
    sorting: Sorting,
    labels: dict[str, str],
    *,
    param: str = "sort",
    page_param: str = "page",
    descending_first: frozenset[str] = frozenset(),
) -> list[dict]:
    """Each sortable column's header: its label, the query that sorts by it (ascending first,
    descending on a second click, the other filters kept, back to the first page) and its
    ``aria-sort`` when it is the column sorted by. A count, where the most is what one looks
    for, sorts descending first (``descending_first``)."""
    columns = []
    for key, label in labels.items():
        query = request.GET.copy()
        query.pop(page_param, None)
        descending = not sorting.descending if sorting.key == key else key in descending_first
        query[param] = f"-{key}" if descending else key
        aria = ""
        if sorting.key == key:
            aria = "descending" if sorting.descending else "ascending"
        columns.append({"key": key, "label": label, "query": query.urlencode(), "aria": aria})
    return columns
