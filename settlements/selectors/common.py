"""Query helpers the selectors share."""

import json
from collections.abc import Collection

from django.db.models import BooleanField, F, Func, QuerySet

# A tournament's payout structure is stored with it: 45,000 places (hundreds of kB of JSON) for
# a 300,000-entrant field. No list or page shows it, so every read that joins a tournament
# leaves it out; reading and decoding it took a few ms of each page that showed a big case.
BIG_TOURNAMENT_FIELDS = ("payouts",)


def lean(queryset: QuerySet, tournament_path: str) -> QuerySet:
    """``queryset`` without the bulky tournament fields reached through ``tournament_path``."""
    return queryset.defer(*(f"{tournament_path}__{name}" for name in BIG_TOURNAMENT_FIELDS))


def pk_of(value) -> int:
    return getattr(value, "pk", value)


def choice_in(value: str, allowed) -> str:
    """A filter's value from a query string if it is one of ``allowed``, else "" (no filter)."""
    return value if value in allowed else ""


def with_ids(queryset: QuerySet, ids: Collection[int]) -> QuerySet:
    """Those of ``queryset`` whose id is one of ``ids`` (a selection posted by a page)."""
    return queryset.filter(_AmongIds(F("pk"), ids=ids))


class _AmongIds(Func):
    """The column is one of ``ids``, sent as one parameter: an outage's bulk pages post 2,000
    ids, and as 2,000 placeholders (``pk__in``) the driver spends 9 ms a query splitting the
    statement around them."""

    output_field = BooleanField()

    def __init__(self, column, *, ids: Collection[int]):
        super().__init__(column)
        self.ids = sorted(ids)

    def as_sql(self, compiler, connection, **extra):
        column, params = compiler.compile(self.get_source_expressions()[0])
        return f"{column} = ANY(%s::bigint[])", (*params, self.ids)

    def as_sqlite(self, compiler, connection, **extra):
        column, params = compiler.compile(self.get_source_expressions()[0])
        return f"{column} IN (SELECT value FROM json_each(%s))", (*params, json.dumps(self.ids))
