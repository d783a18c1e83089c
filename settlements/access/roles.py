"""Roles are Django groups (created by data migrations); business permissions follow them.

The four desk roles (``desk_roles.DESK_ROLES``) work through the pages. The cashier is the wallet
system's own user: it reads the ledger feed and confirms payments through the API, and no
page or other endpoint lets it in.

Superusers get no business powers from being superusers: they administer the site through the
admin, and act in the workflow only through the groups they belong to.
"""

from collections.abc import Iterable

from settlements.desk_roles import (  # noqa: F401  (the names callers use as roles.X)
    AUDITOR,
    CASHIER,
    DESK_ROLES,
    KNOWN_ROLES,
    LABELS,
    MARKETING_MANAGER,
    OPERATOR,
    TOURNAMENT_MANAGER,
)
from settlements.errors import NotAllowed

_CACHE_ATTR = "_crashdesk_roles"


def user_roles(user) -> frozenset[str]:
    """The user's roles; cached on the user object for the request it lives in."""
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return frozenset()
    cached = getattr(user, _CACHE_ATTR, None)
    if cached is None:
        names = user.groups.filter(name__in=KNOWN_ROLES).values_list("name", flat=True)
        cached = frozenset(names)
        setattr(user, _CACHE_ATTR, cached)
    return cached


def forget_roles(user) -> None:
    """Drop the cached roles (after group membership changed on this user object)."""
    if hasattr(user, _CACHE_ATTR):
        delattr(user, _CACHE_ATTR)


def has_role(user, *roles: str) -> bool:
    """True when the user holds at least one of ``roles``."""
    return not user_roles(user).isdisjoint(roles)


def has_desk_role(user) -> bool:
    """True for the people at the desk; the cashier's account is a system's, not a person's."""
    return has_role(user, *DESK_ROLES)


def role_refusal(user, *roles: str, action: str = "do this") -> str | None:
    """Why the user may not ``action`` (they hold none of ``roles``), or None."""
    if has_role(user, *roles):
        return None
    return f"Only {_people(roles)} may {action}."


def require_role(user, *roles: str, action: str = "do this") -> None:
    """Raise NotAllowed unless the user holds one of ``roles``."""
    refusal = role_refusal(user, *roles, action=action)
    if refusal is not None:
        raise NotAllowed(refusal)


def role_labels(user) -> list[str]:
    return [LABELS[role] for role in KNOWN_ROLES if role in user_roles(user)]


def _people(roles: Iterable[str]) -> str:
    names = [LABELS[role] + "s" for role in roles]
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " or " + names[-1]
