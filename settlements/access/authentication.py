"""Who is signed in, read with one query per request: the user, their roles, their epoch.

Sessions are signed cookies (``SESSION_ENGINE``), so no session row is read per request. The
user's row is read on every request as before, and with it, joined in the same query, the
user's roles and their sign-in epoch:

- Roles are read afresh each request, so a role taken away applies at the next click; they are
  merely not a query of their own any more.
- A signed cookie cannot be taken back, so signing out moves the user's epoch: every session
  issued before it, in this browser or a copy of its cookie anywhere, is refused from then on
  (signing out signs the user out everywhere). A password change ends other sessions as before:
  the session carries a hash of the password, which Django checks against the row.
"""

from asgiref.sync import sync_to_async
from django.contrib import auth
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.core.exceptions import ValidationError
from django.db.models import F, Q, StringAgg, Value
from django.db.models.functions import Coalesce
from django.dispatch import receiver
from django.utils.functional import SimpleLazyObject

from settlements.access import roles
from settlements.models import SignInEpoch

EPOCH_KEY = "_crashdesk_epoch"


def _epoch_of(user_id) -> int:
    row = SignInEpoch.objects.filter(user_id=user_id).values_list("epoch", flat=True).first()
    return row or 0


class RoleModelBackend(ModelBackend):
    """Django's model backend whose ``get_user`` brings the roles and the epoch along."""

    def get_user(self, user_id):
        try:
            user_id = auth.get_user_model()._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        user = _user_with_roles(user_id)
        if user is None or not self.user_can_authenticate(user):
            return None
        return user


def _user_with_roles(user_id):
    """The user with, joined in the same query, their role names and sign-in epoch."""
    user = (
        auth.get_user_model()
        ._default_manager.filter(pk=user_id)
        .annotate(
            role_names=StringAgg(
                "groups__name", Value(" "), filter=Q(groups__name__in=roles.KNOWN_ROLES)
            ),
            sign_in_epoch=Coalesce(F("signin_epoch__epoch"), 0),
        )
        .first()
    )
    if user is not None:
        roles.remember_roles(user, (user.role_names or "").split())
    return user


def signed_in_user(request):
    """The request's user, or an anonymous one when the session's epoch is not the user's."""
    if not hasattr(request, "_cached_user"):
        user = auth.get_user(request)
        if user.is_authenticated and request.session.get(EPOCH_KEY) != getattr(
            user, "sign_in_epoch", None
        ):
            request.session.flush()
            user = AnonymousUser()
        request._cached_user = user
    return request._cached_user


class EpochAuthenticationMiddleware(AuthenticationMiddleware):
    """Django's authentication middleware, refusing sessions of an earlier sign-in epoch."""

    def process_request(self, request):
        super().process_request(request)
        request.user = SimpleLazyObject(lambda: signed_in_user(request))

        async def auser():
            return await sync_to_async(signed_in_user)(request)

        request.auser = auser


@receiver(user_logged_in, dispatch_uid="crashdesk-epoch-on-sign-in")
def _stamp_session(sender, request, user, **kwargs) -> None:
    if request is not None and hasattr(request, "session"):
        request.session[EPOCH_KEY] = _epoch_of(user.pk)


@receiver(user_logged_out, dispatch_uid="crashdesk-epoch-on-sign-out")
def _end_every_session(sender, request, user, **kwargs) -> None:
    if user is None or not user.is_authenticated:
        return
    moved = SignInEpoch.objects.filter(user=user).update(epoch=F("epoch") + 1)
    if not moved:
        SignInEpoch.objects.get_or_create(user=user, defaults={"epoch": 1})
