"""The second factor: who owes one, when it was last proved, and the pages that ask for it.

The factors themselves (TOTP with recovery codes, WebAuthn passkeys) are django-allauth's MFA:
its pages set them up and check them. People still sign in with Django's own form; then
``SecondFactorMiddleware`` sends anyone who owes a second factor to allauth's pages before any
other page: to set one up (first sign-in of a Tournament Manager, an auditor or a superuser), or
to prove the one they have (anyone who has set one up, required or not).

A proof is stamped in the session (``PROVED_AT_KEY``) when allauth reports a factor used or
added (its public signals). The middleware hands its time to the request's user as
``second_factor_at``; the permission answers compare it with ``STEP_UP_MAX_AGE`` before what
moves money (``permissions.step_up``), and a refusal for that reason (``SecondFactorStale``,
raised by the service) is turned here into a visit to the page that asks for the factor again,
coming back to the page the person acted from.
"""

import base64
import hashlib
import hmac
import struct
import time
from urllib.parse import urlsplit

from allauth.account.adapter import DefaultAccountAdapter
from allauth.mfa.models import Authenticator
from allauth.mfa.signals import authenticator_added, authenticator_used
from allauth.mfa.utils import encrypt
from django.dispatch import receiver
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django_htmx.http import HttpResponseClientRedirect

from settlements import desk_roles
from settlements.access import permissions, roles
from settlements.errors import SecondFactorStale

PROVED_AT_KEY = "_crashdesk_second_factor_at"
# Set when the user was seen to have no factor, so that a user who needs none costs no query
# per page; dropped when they add one.
NO_FACTOR_KEY = "_crashdesk_no_second_factor"
# The factors that sign a person in; recovery codes stand in for them, never alone.
SIGN_IN_FACTORS = (Authenticator.Type.TOTP, Authenticator.Type.WEBAUTHN)

# Paths a user who owes a factor may still reach: the sign-in, sign-out and second-factor pages
# (allauth's, under /accounts/), static files, probes, and the API (bearer tokens, no session).
OPEN_PREFIXES = ("/accounts/", "/static/", "/healthz", "/metrics", "/api/")


def second_factor_required(user) -> bool:
    """Superusers and the roles of ``desk_roles.SECOND_FACTOR_HOLDERS`` must have one."""
    return bool(user.is_superuser or roles.has_role(user, *desk_roles.SECOND_FACTOR_HOLDERS))


def has_second_factor(user) -> bool:
    return Authenticator.objects.filter(user=user, type__in=SIGN_IN_FACTORS).exists()


def set_totp_secret(*, user, secret: str) -> Authenticator:
    """Give ``user`` a TOTP factor with a known ``secret`` (base32): the demo's users, whose
    secret is published so that a newcomer can sign in, and the tests'. Stored the way
    allauth's own set-up stores it (encrypted); a TOTP the user had is replaced."""
    Authenticator.objects.filter(user=user, type=Authenticator.Type.TOTP).delete()
    return Authenticator.objects.create(
        user=user, type=Authenticator.Type.TOTP, data={"secret": encrypt(secret)}
    )


def totp_code(secret: str, at: float | None = None) -> str:
    """The six-digit code an authenticator app shows for ``secret`` at ``at`` (RFC 6238, 30 s
    steps): for the demo's newcomer (``manage.py demo_totp_code``) and the tests. Checking a
    code is allauth's, never this."""
    counter = int((time.time() if at is None else at) // 30)
    key = base64.b32decode(secret, casefold=True)
    digest = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    value = struct.unpack(">I", digest[offset : offset + 4])[0] & 0x7FFFFFFF
    return f"{value % 1_000_000:06d}"


def stamp_proof(session) -> None:
    """Record in ``session`` that its user proved their second factor now."""
    session[PROVED_AT_KEY] = time.time()
    session.pop(NO_FACTOR_KEY, None)


def proved_at(session) -> float | None:
    """When the session's user last proved their second factor (a Unix time), or None."""
    value = session.get(PROVED_AT_KEY)
    return value if isinstance(value, int | float) else None


@receiver(authenticator_used, dispatch_uid="crashdesk-second-factor-used")
def _stamp_use(sender, request, user, authenticator, **kwargs) -> None:
    # Any factor, a recovery code included: it stands in for a lost device.
    if request is not None:
        stamp_proof(request.session)


@receiver(authenticator_added, dispatch_uid="crashdesk-second-factor-added")
def _stamp_added(sender, request, user, authenticator, **kwargs) -> None:
    # Adding a factor means entering a valid code from it (or touching the passkey).
    if request is not None:
        stamp_proof(request.session)


class SecondFactorMiddleware:
    """Sends a signed-in user who owes a second factor to set it up or to prove it.

    Must sit after the authentication middleware (it reads ``request.user``), after
    ``HtmxMiddleware`` (an htmx request is sent on by a client redirect) and after allauth's
    ``AccountMiddleware``.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = request.user
        if user.is_authenticated:
            # What the permission answers read before what moves money (permissions.step_up).
            setattr(user, permissions.PROVED_AT, proved_at(request.session))
            if not request.path.startswith(OPEN_PREFIXES):
                target = self._owed(request, user)
                if target is not None:
                    return _send_to(request, target)
        return self.get_response(request)

    def process_exception(self, request, exception):
        """A service refused for want of a fresh second factor (step-up): to the page that asks
        for it, then back to the page the person acted from."""
        if not isinstance(exception, SecondFactorStale):
            return None
        return _send_to(request, "mfa_reauthenticate", back_to=_acted_from(request))

    @staticmethod
    def _owed(request, user) -> str | None:
        """The page to send the user to, or None when they owe nothing."""
        if getattr(user, permissions.PROVED_AT) is not None:
            return None
        required = second_factor_required(user)
        if not required and request.session.get(NO_FACTOR_KEY):
            return None
        if has_second_factor(user):
            return "mfa_reauthenticate"
        if required:
            return "mfa_activate_totp"
        request.session[NO_FACTOR_KEY] = True
        return None


def _acted_from(request) -> str:
    """The page a POST was sent from (it shows the form again), else the posted address."""
    if request.method == "GET":
        return request.get_full_path()
    referer = request.headers.get("Referer", "")
    if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        parts = urlsplit(referer)
        return f"{parts.path}?{parts.query}" if parts.query else parts.path
    return request.path


def _send_to(request, url_name: str, back_to: str | None = None):
    if back_to is None:
        back_to = request.htmx.current_url_abs_path if request.htmx else request.get_full_path()
    url = f"{reverse(url_name)}?{urlencode({'next': back_to or '/'})}"
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def step_up_url(next_url: str) -> str:
    """The page that asks for the second factor again, coming back to ``next_url``."""
    return f"{reverse('mfa_reauthenticate')}?{urlencode({'next': next_url})}"


class ClosedAccountAdapter(DefaultAccountAdapter):
    """allauth's account adapter with sign-up closed: administrators create users."""

    def is_open_for_signup(self, request) -> bool:
        return False
