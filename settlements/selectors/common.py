"""Query helpers the selectors share."""

from django.db.models import Prefetch, QuerySet

# A tournament's payout structure is stored with it: 45,000 places (hundreds of kB of JSON) for
# a 300,000-entrant field. No list or page shows it, so every read that joins a tournament
# leaves it out; reading and decoding it took a few ms of each page that showed a big case.
BIG_TOURNAMENT_FIELDS = ("payouts",)


def _lean(queryset: QuerySet, tournament_path: str) -> QuerySet:
    """``queryset`` without the bulky tournament fields reached through ``tournament_path``."""
    return queryset.defer(*(f"{tournament_path}__{name}" for name in BIG_TOURNAMENT_FIELDS))


def _pk(value) -> int:
    return getattr(value, "pk", value)


def _rank(order: tuple[str, ...], value: str) -> int:
    return order.index(value) if value in order else len(order)


def _prefetch(lookup: str, queryset) -> Prefetch:
    return Prefetch(lookup, queryset=queryset)
