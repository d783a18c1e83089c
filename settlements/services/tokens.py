"""API tokens: issued, revoked, and checked on each API request."""

from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from settlements.access import permissions
from settlements.models import ApiToken, Event
from settlements.services.common import record_event, required_text, save_with_history

# How precisely an API token's last use is kept (each finer update would be a row write).
TOKEN_USE_RESOLUTION = timedelta(minutes=1)


@transaction.atomic
def api_token_create(*, user, name: str, actor=None) -> tuple[ApiToken, str]:
    """Issue a token for ``user``; returns the record and the raw token (shown once only).

    ``actor`` is None when an administrator runs the management command on the server.
    """
    permissions.enforce(permissions.api_token_manage(owner=user, user=actor))
    permissions.enforce(permissions.step_up(user=actor, action="issue API tokens"))
    name = required_text(name, "name", max_length=100)
    raw, prefix = ApiToken.new_raw()
    token = ApiToken(user=user, name=name, prefix=prefix, token_hash=ApiToken.hash(raw))
    save_with_history(token, actor=actor, reason="Token issued")
    record_event(
        Event.Type.API_TOKEN_CREATED,
        actor=actor,
        subject=token,
        data={"user": user.get_username(), "name": name, "prefix": prefix},
    )
    return token, raw


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
        prefix=prefix, revoked_at__isnull=True, user__is_active=True
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
