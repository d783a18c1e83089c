"""Who is signed in, read with one query per request: the user, their roles, their epoch.

Sessions are signed cookies (``SESSION_ENGINE``), so no session row is read per request. The
user's row is read on every request as before, and with it, in subqueries of the same query,
the user's roles and their sign-in epoch:

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
from django.db import connection
from django.db.models import F
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


# Every request reads the signed-in user, so this query is written out for Manager.raw()
# rather than built by the ORM: the roles joined and aggregated, it cost 2 ms of Python a
# request to build and compile, more than a cached page's own work (page_ab's floor, a
# signed-in view answering "ok": 4.4 ms of CPU through the ORM). Plain joins, which PostgreSQL
# plans in half a millisecond (an EXISTS per role took it 3.5 ms). The one query on the desk
# written out for its speed; tests/test_sessions.py checks it reads what the ORM reads.
def _user_with_roles(user_id):
    """The user with their roles and their sign-in epoch (0 before their first sign-out), in
    one query: a row per group they are in, the group's name where it is a known role."""
    model = auth.get_user_model()
    rows = list(model._default_manager.raw(_user_with_roles_sql(), [*roles.KNOWN_ROLES, user_id]))
    if not rows:
        return None
    user = rows[0]
    user.sign_in_epoch = user.sign_in_epoch or 0
    roles.remember_roles(user, [row.role_name for row in rows if row.role_name])
    return user


def _user_with_roles_sql() -> str:
    quote = connection.ops.quote_name
    model = auth.get_user_model()
    user, through = model._meta, model.groups.through._meta
    group_field = through.get_field("group")
    group = group_field.related_model._meta
    member = through.get_field(model.groups.field.m2m_field_name()).column
    epochs = SignInEpoch._meta
    key = f"u.{quote(user.pk.column)}"
    known = ", ".join(["%s"] * len(roles.KNOWN_ROLES))
    return (
        f"SELECT u.*, g.{quote('name')} AS role_name, e.{quote('epoch')} AS sign_in_epoch"
        f" FROM {quote(user.db_table)} u"
        f" LEFT JOIN {quote(through.db_table)} m ON m.{quote(member)} = {key}"
        f" LEFT JOIN {quote(group.db_table)} g"
        f" ON g.{quote(group.pk.column)} = m.{quote(group_field.column)}"
        f" AND g.{quote('name')} IN ({known})"
        f" LEFT JOIN {quote(epochs.db_table)} e"
        f" ON e.{quote(epochs.get_field('user').column)} = {key}"
        f" WHERE {key} = %s"
    )


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
