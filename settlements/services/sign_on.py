"""What a single sign-on does at the desk: the person's roles follow the identity provider.

At every sign-in through the provider (``views.sign_on``), the desk roles its groups grant
(``access.sso.roles_granted``) become the person's roles here: a role added there is added, a
role taken away there is taken away. Each change is the usual record of a change of access
(``access_changes``), naming the provider as its source; a role taken away also ends the
person's other sessions, as any removal does.
"""

from django.contrib.auth.models import Group
from django.db import transaction

from settlements.access import roles
from settlements.services.access_changes import made_by


def user_roles_follow_provider(*, user, granted: set[str], source: str) -> tuple[set, set]:
    """Give ``user`` exactly the known roles in ``granted``; (added, removed)."""
    with transaction.atomic(), made_by(source):
        held = set(user.groups.filter(name__in=roles.KNOWN_ROLES).values_list("name", flat=True))
        added, removed = granted - held, held - granted
        if removed:
            user.groups.remove(*Group.objects.filter(name__in=removed))
        if added:
            # get_or_create: the role groups come from data migrations, but a database
            # flushed since (a test's) would otherwise grant nothing without saying so.
            user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in sorted(added)))
    roles.forget_roles(user)
    return added, removed
