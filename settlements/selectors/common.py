"""Query helpers the selectors share."""

from django.db.models import QuerySet

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
