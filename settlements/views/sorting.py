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


def chosen_sort(request, keys, default: str) -> Sorting:
    """The sort asked for in the URL, among ``keys``; ``default`` (ascending) otherwise."""
    raw = request.GET.get("sort", "")
    key = raw.removeprefix("-")
    if key not in keys:
        return Sorting(default, False)
    return Sorting(key, raw.startswith("-"))


def sort_columns(request, sorting: Sorting, labels: dict[str, str]) -> list[dict]:
    """Each sortable column's header: its label, the query that sorts by it (ascending first,
    descending on a second click, the other filters kept, back to the first page) and its
    ``aria-sort`` when it is the column sorted by."""
    columns = []
    for key, label in labels.items():
        query = request.GET.copy()
        query.pop("page", None)
        query["sort"] = f"-{key}" if sorting.key == key and not sorting.descending else key
        aria = ""
        if sorting.key == key:
            aria = "descending" if sorting.descending else "ascending"
        columns.append({"key": key, "label": label, "query": query.urlencode(), "aria": aria})
    return columns
