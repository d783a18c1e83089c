"""Signing out everywhere, on Django's database-backed sessions.

Sign-in is Django's own (``django.contrib.auth`` with ``SESSION_ENGINE`` "db"): each request
reads its session row and the user, and the user's roles when a page first asks
(``roles.user_roles``), so a role taken away applies at the next click. A password change ends
other sessions through the hash of the password each session carries.

Signing out ends every session of the user, in every browser: each session a sign-in starts is
recorded against the user (``SignedInSession``), and signing out deletes them all through the
session engine's public ``SessionStore.delete``.
"""

from importlib import import_module

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.dispatch import receiver

from settlements.models import SignedInSession


@receiver(user_logged_in, dispatch_uid="crashdesk-record-session")
def _record_session(sender, request, user, **kwargs) -> None:
    session = getattr(request, "session", None)
    if session is None or session.session_key is None:
        return
    SignedInSession.objects.get_or_create(session_id=session.session_key, defaults={"user": user})


@receiver(user_logged_out, dispatch_uid="crashdesk-end-every-session")
def _end_every_session(sender, request, user, **kwargs) -> None:
    if user is None or not user.is_authenticated:
        return
    store = import_module(settings.SESSION_ENGINE).SessionStore
    keys = list(SignedInSession.objects.filter(user=user).values_list("session_id", flat=True))
    for key in keys:
        store(session_key=key).delete()
    SignedInSession.objects.filter(user=user).delete()
