"""API tokens: issued with a life and a scope, rotated, revoked, and checked on each API
request. Every issue, rotation and revocation is an event (and PostgreSQL refuses a token
written without one, models.accounts)."""

from collections.abc import Iterable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from settlements.access import permissions
from settlements.errors import DomainError
from settlements.models import ApiToken, Event, TokenScope
from settlements.services.common import record_event, required_text, save_with_history

# How precisely an API token's last use is kept (each finer update would be a row write).
TOKEN_USE_RESOLUTION = timedelta(minutes=1)


# The longest life a token may be given.
MAX_TOKEN_DAYS = 366


def _scopes(scopes: Iterable[str] | None) -> list[str]:
    if scopes is None:
        return list(TokenScope.values)
    chosen = sorted(set(scopes))
    unknown = [scope for scope in chosen if scope not in TokenScope.values]
    if unknown:
        raise DomainError(
            f"Unknown scope {', '.join(unknown)}; the scopes are {', '.join(TokenScope.values)}.",
            field="scopes",
        )
    if not chosen:
        raise DomainError("A token needs at least one scope.", field="scopes")
    return chosen


def _expiry(days: int | None):
    days = settings.API_TOKEN_DAYS if days is None else days
    if not 1 <= days <= MAX_TOKEN_DAYS:
        raise DomainError(
            f"A token lives from 1 to {MAX_TOKEN_DAYS} days, not {days}.", field="days"
        )
    return timezone.now() + timedelta(days=days)


@transaction.atomic
def api_token_create(
    *, user, name: str, actor=None, scopes: Iterable[str] | None = None, days: int | None = None
) -> tuple[ApiToken, str]:
    """Issue a token for ``user``, working for ``days`` (API_TOKEN_DAYS unless said) and only
    for ``scopes`` (every scope unless said); returns the record and the raw token (shown once
    only).

    ``actor`` is None when an administrator runs the management command on the server.
    """
    permissions.enforce(permissions.api_token_manage(owner=user, user=actor))
    permissions.enforce(permissions.step_up(user=actor, action="issue API tokens"))
    return _issue(user, required_text(name, "name", max_length=100), scopes, days, actor)


def _issue(user, name: str, scopes, days, actor) -> tuple[ApiToken, str]:
    raw, prefix = ApiToken.new_raw()
    token = ApiToken(
        user=user,
        name=name,
        prefix=prefix,
        token_hash=ApiToken.hash(raw),
        scopes=_scopes(scopes),
        expires_at=_expiry(days),
    )
    save_with_history(token, actor=actor, reason="Token issued")
    record_event(
        Event.Type.API_TOKEN_CREATED,
        actor=actor,
        subject=token,
        data={
            "user": user.get_username(),
            "name": name,
            "prefix": prefix,
            "scopes": token.scopes,
            "expires_at": token.expires_at.isoformat(),
        },
    )
    return token, raw


@transaction.atomic
def api_token_rotate(
    *, token: ApiToken, actor=None, days: int | None = None
) -> tuple[ApiToken, str]:
    """Issue a token like ``token`` (its user, name and scopes) and let the old one work for
    API_TOKEN_OVERLAP_DAYS more at most, so that its client can switch without a gap."""
    token = ApiToken.objects.select_for_update(of=("self",)).select_related("user").get(pk=token.pk)
    permissions.enforce(permissions.api_token_manage(owner=token.user, user=actor))
    permissions.enforce(permissions.step_up(user=actor, action="issue API tokens"))
    if not token.is_active:
        raise DomainError(f"{token} no longer works; issue a new token instead.")
    successor, raw = _issue(token.user, token.name, token.scopes, days, actor)
    token.expires_at = min(
        token.expires_at, timezone.now() + timedelta(days=settings.API_TOKEN_OVERLAP_DAYS)
    )
    save_with_history(token, actor=actor, reason="Token replaced by a new one")
    record_event(
        Event.Type.API_TOKEN_ROTATED,
        actor=actor,
        subject=token,
        data={
            "user": token.user.get_username(),
            "name": token.name,
            "prefix": token.prefix,
            "successor": successor.prefix,
            "expires_at": token.expires_at.isoformat(),
        },
    )
    return successor, raw


@transaction.atomic
def api_token_revoke(*, token: ApiToken, actor=None) -> ApiToken:
    token = ApiToken.objects.select_for_update(of=("self",)).select_related("user").get(pk=token.pk)
    permissions.enforce(permissions.api_token_revoke(token=token, user=actor))
    token.revoked_at = timezone.now()
    save_with_history(token, actor=actor, reason="Token revoked")
    record_event(
        Event.Type.API_TOKEN_REVOKED,
        actor=actor,
        subject=token,
        data={"user": token.user.get_username(), "name": token.name, "prefix": token.prefix},
    )
    return token


def api_token_authenticate(*, raw: str) -> ApiToken | None:
    """The active token ``raw`` is, with its (active) user loaded; None for anything else.

    Not a business event: a use is recorded only as ``last_used_at``, at most once a minute,
    without a history version, so that a busy game server does not flood the audit trail.
    """
    prefix = ApiToken.prefix_of(raw)
    if prefix is None:
        return None
    candidates = ApiToken.objects.select_related("user").filter(
        prefix=prefix, revoked_at__isnull=True, expires_at__gt=timezone.now(), user__is_active=True
    )
    token = next((candidate for candidate in candidates if candidate.matches(raw)), None)
    now = timezone.now()
    # Most requests come within the minute of the last recorded use: no write for those.
    stale = token is not None and (
        token.last_used_at is None or token.last_used_at < now - TOKEN_USE_RESOLUTION
    )
    if stale:
        ApiToken.objects.filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - TOKEN_USE_RESOLUTION),
            pk=token.pk,
        ).update(last_used_at=now)
    return token
