"""The database's guard over who may act: Django's own user and membership tables carry the
triggers of settlements.triggers.AccountedByEvent through proxies declared here (a proxy adds
no table; pgtrigger installs a proxy's triggers on its concrete table, in this app's
migrations). No code uses these models: they exist for their triggers.

API tokens carry theirs in ``ApiToken.Meta``.
"""

import pgtrigger
from django.contrib.auth import get_user_model

from settlements.models.events import Event
from settlements.triggers import AccountedByEvent

User = get_user_model()


def _user_event(name: str, *, subject: str, **kwargs) -> AccountedByEvent:
    return AccountedByEvent(
        name=name,
        subject=subject,
        subject_type=User._meta.model_name,
        event_types=(Event.Type.USER_ACCESS_CHANGED,),
        event_table=Event._meta.db_table,
        **kwargs,
    )


class GuardedMembership(User.groups.through):
    """A user added to or removed from a role's group."""

    class Meta:
        proxy = True
        triggers = [
            _user_event(
                "membership_with_event",
                subject="user",
                operation=pgtrigger.Insert | pgtrigger.Delete | pgtrigger.Update,
            )
        ]


class GuardedUserFlags(User):
    """A user's superuser, staff and active flags: set on a new account or changed later."""

    class Meta:
        proxy = True
        triggers = [
            _user_event(
                "flags_set_with_event",
                subject="id",
                operation=pgtrigger.Insert,
                condition=pgtrigger.Q(new__is_superuser=True) | pgtrigger.Q(new__is_staff=True),
            ),
            _user_event(
                "flags_changed_with_event",
                subject="id",
                operation=pgtrigger.Update,
                condition=pgtrigger.AnyChange("is_superuser", "is_staff", "is_active"),
            ),
        ]
