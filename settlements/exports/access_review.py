"""The access review as CSV (views.access_review): one row per user, and one per grant or
revocation in the period. Times in UTC, as in every export."""

from collections.abc import Iterable, Iterator

from settlements.bounds import in_utc

USER_HEADER = (
    "username",
    "name",
    "active",
    "roles",
    "staff",
    "superuser",
    "signs in with",
    "second factor",
    "factors",
    "last sign-in (UTC)",
    "tokens",
)
CHANGE_HEADER = ("at (UTC)", "event", "by", "what", "source")


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _time(value) -> str:
    return in_utc(value).isoformat() if value else ""


def users_rows(users: Iterable) -> Iterator[tuple]:
    yield USER_HEADER
    for user in users:
        tokens = "; ".join(
            f"{token.name} ({token.prefix}): {' '.join(token.scopes)}; {token.age_days} days old, "
            f"ends {_time(token.expires_at)}"
            for token in user.tokens
        )
        yield (
            user.username,
            user.full_name,
            _yes(user.active),
            ", ".join(user.roles),
            _yes(user.staff),
            _yes(user.superuser),
            user.sign_in,
            _yes(user.second_factor),
            ", ".join(user.factors),
            _time(user.last_login),
            tokens,
        )


def changes_rows(events: Iterable) -> Iterator[tuple]:
    yield CHANGE_HEADER
    for event in events:
        yield (
            _time(event.at),
            event.get_type_display(),
            event.actor.get_username() if event.actor else "",
            event.reason,
            event.data.get("source", ""),
        )
