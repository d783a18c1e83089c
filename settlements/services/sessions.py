"""Where a person is signed in: each session they start is recorded (``SignedInSession``), so
that they can see and end any of them, an administrator can end all of a user's, signing out
ends every one, and a role taken away ends the sessions that held it.

Sign-in is Django's own (``django.contrib.auth`` with ``SESSION_ENGINE`` "db"): each request
reads its session row and the user, and the user's roles when a page first asks
(``roles.user_roles``), so a role taken away applies at the next click anyway. A password
change ends other sessions through the hash of the password each session carries. Sessions
end through the session engine's public ``SessionStore.delete``.
"""

import logging
from importlib import import_module

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.db import transaction
from django.dispatch import receiver

from settlements.errors import NotAllowed
from settlements.models import SignedInSession

log = logging.getLogger("crashdesk.access")
USER_AGENT_LENGTH = SignedInSession._meta.get_field("user_agent").max_length


@receiver(user_logged_in, dispatch_uid="crashdesk-record-session")
def _record_session(sender, request, user, **kwargs) -> None:
    session = getattr(request, "session", None)
    if session is None or session.session_key is None:
        return
    SignedInSession.objects.get_or_create(
        session_id=session.session_key,
        defaults={
            "user": user,
            "user_agent": request.headers.get("User-Agent", "")[:USER_AGENT_LENGTH],
            "ip_address": request.META.get("REMOTE_ADDR") or None,
        },
    )


@receiver(user_logged_out, dispatch_uid="crashdesk-end-every-session")
def _end_every_session(sender, request, user, **kwargs) -> None:
    if user is not None and user.is_authenticated:
        _end(SignedInSession.objects.filter(user=user))


def _end(sessions) -> int:
    store = import_module(settings.SESSION_ENGINE).SessionStore
    keys = list(sessions.values_list("session_id", flat=True))
    for key in keys:
        store(session_key=key).delete()
    SignedInSession.objects.filter(session_id__in=keys).delete()
    return len(keys)


@transaction.atomic
def session_end(*, user, session_key: str) -> None:
    """End one of ``user``'s own sessions (another's is refused, as if it did not exist)."""
    sessions = SignedInSession.objects.filter(user=user, session_id=session_key)
    if not _end(sessions):
        raise NotAllowed("That session is not one of yours, or it has ended already.")
    log.info("session ended by its user", extra={"user": user.get_username()})


@transaction.atomic
def user_sessions_end(*, user, actor) -> int:
    """End every session of ``user``: their own choice, or an administrator's."""
    if actor is None or not (actor.pk == user.pk or actor.is_superuser):
        raise NotAllowed("Only the user or an administrator ends all of a user's sessions.")
    ended = _end(SignedInSession.objects.filter(user=user))
    log.info(
        "every session of a user ended",
        extra={"user": user.get_username(), "by": actor.get_username(), "sessions": ended},
    )
    return ended


def sessions_of_user_end(*, user) -> int:
    """End every session of ``user`` after a role was taken from them (services.access_changes):
    the pages those sessions had open assumed it."""
    return _end(SignedInSession.objects.filter(user=user))
