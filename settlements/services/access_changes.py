"""Who may act is itself audited: every change to a user's groups, staff or superuser flag, or
active state is a business event, in the hash chain with the rest.

The changes are caught where Django makes them (a user saved, its groups changed), so that no
route around a screen escapes: the admin, a shell, a management command. The actor is whoever
the change is made for: the user of the request in progress (the admin's), or the one a caller
names with ``acting_as``; a change made with neither is recorded with the actor unknown, said in
so many words. A change made in raw SQL on the user tables is not seen here.

A writer of events like every service, so it lives among them; ``apps`` connects it at start.
"""

from contextlib import contextmanager
from contextvars import ContextVar

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models.signals import m2m_changed, post_save, pre_save
from django.dispatch import receiver
from simple_history.models import HistoricalRecords

from settlements.access import roles
from settlements.models import Event
from settlements.services.common import record_event

User = get_user_model()
FLAGS = ("is_active", "is_staff", "is_superuser")
FLAG_LABELS = {"is_active": "active", "is_staff": "staff", "is_superuser": "superuser"}
_actor: ContextVar = ContextVar("crashdesk_access_actor", default=None)


@contextmanager
def acting_as(actor):
    """Changes to users' access made inside are recorded as ``actor``'s."""
    token = _actor.set(actor)
    try:
        yield
    finally:
        _actor.reset(token)


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
    if actor is None:
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


def _flags_untouched(update_fields) -> bool:
    # A sign-in saves last_login only: no query for it.
    return update_fields is not None and not set(update_fields) & set(FLAGS)


@receiver(pre_save, sender=User)
def _remember_flags(sender, instance, raw=False, update_fields=None, **kwargs):
    if raw or instance.pk is None or _flags_untouched(update_fields):
        instance._access_before = None
        return
    instance._access_before = (
        User.objects.filter(pk=instance.pk).values(*FLAGS).first()  # None if pk was preset
    )


@receiver(post_save, sender=User)
def _record_flags(sender, instance, created, raw=False, update_fields=None, **kwargs):
    if raw or _flags_untouched(update_fields):
        return
    before = getattr(instance, "_access_before", None)
    if before is None:
        # A new account: worth an event when it starts with more than a plain user's rights.
        before = {"is_active": instance.is_active, "is_staff": False, "is_superuser": False}
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
