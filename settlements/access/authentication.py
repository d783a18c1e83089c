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
from django.db import connections, router
from django.db.models import F, OuterRef, StringAgg, Subquery, Value
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


# The SQL of the user-with-roles query, compiled once per process: building it through the
# ORM on every request (two subqueries to resolve) cost more CPU than the query itself.
_compiled: dict[str, tuple] = {}
_SENTINEL = -7_310_002  # stands for the user id while compiling; no user has it


def _user_with_roles(user_id):
    model = auth.get_user_model()
    db = router.db_for_read(model)
    if db not in _compiled:
        _compiled[db] = _compile(model, db)
    sql, params, at, fields = _compiled[db]
    params = [*params]
    params[at] = user_id
    connection = connections[db]
    # On PostgreSQL, prepared once per connection: planning it took longer than running it.
    cursor = getattr(connection, "prepared_cursor", connection.cursor)()
    with cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    *values, names, epoch = row
    user = model.from_db(db, fields, values)
    user._crashdesk_epoch = epoch
    roles.remember_roles(user, (names or "").split())
    return user


def _compile(model, db: str) -> tuple:
    through = model.groups.through
    owner = model.groups.field.m2m_field_name()
    names = (
        through._default_manager.filter(
            **{owner: OuterRef("pk")}, group__name__in=roles.KNOWN_ROLES
        )
        .order_by()
        .values(owner)
        .annotate(names=StringAgg("group__name", Value(" ")))
        .values("names")
    )
    epoch = SignInEpoch.objects.filter(user=OuterRef("pk")).values("epoch")
    fields = [field.attname for field in model._meta.concrete_fields]
    queryset = (
        model._default_manager.using(db)
        .annotate(_role_names=Subquery(names), _epoch=Coalesce(Subquery(epoch), 0))
        .filter(pk=_SENTINEL)
        .values_list(*fields, "_role_names", "_epoch")
    )
    sql, params = queryset.query.sql_with_params()
    params = list(params)
    return sql, tuple(params), params.index(_SENTINEL), fields


def signed_in_user(request):
    """The request's user, or an anonymous one when the session's epoch is not the user's."""
    if not hasattr(request, "_cached_user"):
        user = auth.get_user(request)
        if user.is_authenticated and request.session.get(EPOCH_KEY) != getattr(
            user, "_crashdesk_epoch", None
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
