"""Who may act, accounted for by the event log: each role membership, superuser, staff or
inactive flag and API token as it stands must be what the events recorded about it say.

PostgreSQL refuses such rows written without their event (models.access_guards, ApiToken's
triggers); this finds those written with the triggers off (by the tables' owner), for
``verify_audit``. The events are replayed in order: few, as they change only with people.
"""

from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef

from settlements.models import ApiToken, Event

User = get_user_model()
# A flag's value for an account no event speaks of: a plain, active user.
_PLAIN = {"is_superuser": False, "is_staff": False, "is_active": True}


def _recorded_access() -> tuple[dict[int, set[str]], dict[int, dict[str, bool]]]:
    """{user id: role groups}, {user id: flags} as the access events leave them."""
    groups: dict[int, set[str]] = {}
    flags: dict[int, dict[str, bool]] = {}
    events = Event.objects.filter(
        type=Event.Type.USER_ACCESS_CHANGED, subject_type=User._meta.model_name
    ).order_by("seq")
    for user_id, data in events.values_list("subject_id", "data").iterator():
        held = groups.setdefault(user_id, set())
        held |= set(data.get("groups_added", ()))
        held -= set(data.get("groups_removed", ()))
        for flag, (_before, after) in data.get("flags", {}).items():
            flags.setdefault(user_id, {})[flag] = after
    return groups, flags


def access_outside_events() -> str:
    """The first membership, flag or token no event accounts for, named; "" when none."""
    groups, flags = _recorded_access()
    memberships = User.groups.through.objects.order_by("user_id", "group__name")
    for user_id, group in memberships.values_list("user_id", "group__name").iterator():
        if group not in groups.get(user_id, ()):
            return f"user #{user_id}'s membership of {group}"
    for user in User.objects.order_by("pk").values("pk", *_PLAIN).iterator():
        for flag, plain in _PLAIN.items():
            if user[flag] != flags.get(user["pk"], {}).get(flag, plain):
                return f"user #{user['pk']}'s {flag.removeprefix('is_')} flag"

    def named(event_type: str):
        return Exists(
            Event.objects.filter(
                type=event_type, subject_type=ApiToken._meta.model_name, subject_id=OuterRef("pk")
            )
        )

    tokens = ApiToken.objects.alias(
        issued=named(Event.Type.API_TOKEN_CREATED), revoked=named(Event.Type.API_TOKEN_REVOKED)
    )
    for problem, loose in (
        ("issued", tokens.filter(issued=False)),
        ("revoked", tokens.filter(revoked=False, revoked_at__isnull=False)),
        ("still working", tokens.filter(revoked=True, revoked_at__isnull=True)),
    ):
        if (pk := loose.order_by("pk").values_list("pk", flat=True).first()) is not None:
            return f"API token #{pk} ({problem} without an event saying so)"
    return _token_terms_outside_events()


def _token_terms_outside_events() -> str:
    """A token whose scopes or end differ from what its issue and rotation events say (tokens
    issued before tokens had either are given them by a migration, which no event records)."""
    recorded: dict[int, dict] = {}
    events = Event.objects.filter(
        type__in=[Event.Type.API_TOKEN_CREATED, Event.Type.API_TOKEN_ROTATED],
        subject_type=ApiToken._meta.model_name,
    ).order_by("seq")
    for token_id, data in events.values_list("subject_id", "data").iterator():
        terms = recorded.setdefault(token_id, {})
        for name in ("scopes", "expires_at"):
            if name in data:
                terms[name] = data[name]
    tokens = ApiToken.objects.order_by("pk").values_list("pk", "scopes", "expires_at")
    for pk, scopes, expires_at in tokens.iterator():
        terms = recorded.get(pk, {})
        if "scopes" in terms and terms["scopes"] != scopes:
            return f"API token #{pk}'s scopes"
        if "expires_at" in terms and terms["expires_at"] != expires_at.isoformat():
            return f"API token #{pk}'s end"
    return ""
