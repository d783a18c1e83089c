"""Who may act is itself audited: every change to a user's groups, staff or superuser flag,
active state or password is a business event, in the hash chain with the rest, and so is every
change an administrator makes in ``/admin/``.

The changes are caught where Django makes them (a user saved, its groups changed), so that no
route around a screen escapes: the admin, a shell, a management command. The actor is whoever
the change is made for: the user of the request in progress (the admin's), or the one a caller
names with ``acting_as``; a change made with neither is recorded with the actor unknown, said in
so many words. A change made in raw SQL on the user tables is not seen here, and PostgreSQL
refuses it (models.access_guards): the row and its event must be written in one transaction,
which Django's admin and ``groups.add`` are; a shell that changes a user's flags wraps the save
in ``transaction.atomic()``.

A writer of events like every service, so it lives among them; ``apps`` connects it at start.
"""

from contextlib import contextmanager
from contextvars import ContextVar

from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models.signals import m2m_changed, post_save, pre_save
from django.dispatch import receiver
from simple_history.models import HistoricalRecords

from settlements.access import roles
from settlements.models import Event
from settlements.services.common import record_event
from settlements.services.sessions import sessions_of_user_end

User = get_user_model()
FLAGS = ("is_active", "is_staff", "is_superuser")
# What pre_save reads of the user as stored, to tell what the save changes.
WATCHED = (*FLAGS, "password")
FLAG_LABELS = {"is_active": "active", "is_staff": "staff", "is_superuser": "superuser"}
_actor: ContextVar = ContextVar("crashdesk_access_actor", default=None)
# Who outside the desk made the change (the identity provider at a sign-in), when no one did.
_source: ContextVar = ContextVar("crashdesk_access_source", default=None)


@contextmanager
def acting_as(actor):
    """Changes to users' access made inside are recorded as ``actor``'s."""
    token = _actor.set(actor)
    try:
        yield
    finally:
        _actor.reset(token)


@contextmanager
def made_by(source: str):
    """Changes made inside are recorded as ``source``'s (no actor): the identity provider's."""
    token = _source.set(source)
    try:
        yield
    finally:
        _source.reset(token)


def _current_actor():
    actor = _actor.get()
    if actor is not None:
        return actor
    request = getattr(HistoricalRecords.context, "request", None)
    user = getattr(request, "user", None)
    return user if user is not None and user.is_authenticated else None


def _record(user, data: dict, words: list[str]) -> None:
    actor = _current_actor()
    reason = f"{user.get_username()}: {'; '.join(words)}"
    source = _source.get()
    if source is not None:
        actor = None
        data = {**data, "source": source}
        reason = f"{reason}, as the {source} said at sign-in"
    elif actor is None:
        data = {**data, "actor_unknown": True}
        reason = f"Actor unknown (changed outside the app and the admin). {reason}"
    with transaction.atomic():
        record_event(
            Event.Type.USER_ACCESS_CHANGED,
            actor=actor,
            subject=user,
            reason=reason,
            data={"user": user.get_username(), **data},
        )


def _untouched(update_fields) -> bool:
    # A sign-in saves last_login only: no query for it.
    return update_fields is not None and not set(update_fields) & set(WATCHED)


@receiver(pre_save, sender=User)
def _remember_flags(sender, instance, raw=False, update_fields=None, **kwargs):
    if raw or instance.pk is None or _untouched(update_fields):
        instance._access_before = None
        return
    instance._access_before = (
        User.objects.filter(pk=instance.pk).values(*WATCHED).first()  # None if pk was preset
    )


@receiver(post_save, sender=User)
def _record_flags(sender, instance, created, raw=False, update_fields=None, **kwargs):
    if raw or _untouched(update_fields):
        return
    before = getattr(instance, "_access_before", None)
    if before is None:
        # A new account: worth an event when it starts other than a plain, active user.
        before = {
            "is_active": True,
            "is_staff": False,
            "is_superuser": False,
            "password": instance.password,
        }
    elif before["password"] != instance.password:
        # Who can sign in as this user changed; the hash itself stays out of the record. A
        # hash renewed at sign-in (a stronger hasher) looks the same from here, and is rare.
        _record(instance, {"password_changed": True}, ["password changed"])
    changed = {
        flag: [before[flag], getattr(instance, flag)]
        for flag in FLAGS
        if before[flag] != getattr(instance, flag)
    }
    if changed:
        words = [
            f"{FLAG_LABELS[flag]} {'yes' if new else 'no'} (was {'yes' if old else 'no'})"
            for flag, (old, new) in changed.items()
        ]
        _record(instance, {"flags": changed, "created": created}, words)


@receiver(m2m_changed, sender=User.groups.through)
def _record_groups(sender, instance, action, reverse, pk_set, **kwargs):
    if action == "pre_clear":
        # The members or groups about to go, which post_clear no longer knows.
        instance._access_cleared = set(
            instance.user_set.values_list("pk", flat=True)
            if reverse
            else instance.groups.values_list("pk", flat=True)
        )
        return
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    if action == "post_clear":
        pk_set = getattr(instance, "_access_cleared", set())
    if not pk_set:
        return
    added = action == "post_add"
    if reverse:  # group.user_set.add(...): one event per user
        for user in User.objects.filter(pk__in=pk_set).order_by("pk"):
            _record_membership(user, [instance.name], added)
    else:
        names = sorted(Group.objects.filter(pk__in=pk_set).values_list("name", flat=True))
        _record_membership(instance, names, added)


def _record_membership(user, groups: list[str], added: bool) -> None:
    labels = ", ".join(roles.LABELS.get(name, name) for name in groups)
    words = [f"{'added to' if added else 'removed from'} {labels}"]
    _record(user, {"groups_added" if added else "groups_removed": groups}, words)
    if not added:
        # Pages open in those sessions assumed the role: the person signs in again.
        sessions_of_user_end(user=user)


@receiver(post_save, sender=LogEntry)
def _record_admin_action(sender, instance: LogEntry, created, raw=False, **kwargs):
    """Every addition, change and deletion in the admin, in the administrator's name, naming
    the record (and the user, when a user was changed). The admin deletes one record at a time
    (its bulk delete action is off, settlements.admin), so each one is logged here."""
    if raw or not created:
        return
    model = instance.content_type.model_class() if instance.content_type_id else None
    record = f"{model._meta.verbose_name if model else 'record'} #{instance.object_id}"
    action = str(instance.get_action_flag_display())
    affected = {}
    if model is User:
        affected = {"user": instance.object_repr}
    with transaction.atomic():
        record_event(
            Event.Type.ADMIN_ACTION,
            actor=instance.user,
            reason=f"{action}: {record} ({instance.object_repr})",
            data={
                "action": action,
                "record": record,
                "object": instance.object_repr,
                "changes": instance.get_change_message(),
                **affected,
            },
        )
