"""A user's own settings: the time zone their screens show times in, and how often they are
emailed what waits for them.

A setting is not a business event: it changes how one person's pages read, never a record of
the workflow, so it writes no ``Event`` (it is no business change); its history
version still records who changed it and when.
"""

import zoneinfo

from django.db import IntegrityError, transaction

from settlements.access import permissions
from settlements.errors import DomainError
from settlements.models import DigestEvery, Profile
from settlements.services.common import save_with_history


def time_zone_names() -> list[str]:
    """Every zone a user may choose, sorted (the system's IANA database)."""
    return sorted(zoneinfo.available_timezones() - {"Factory", "localtime"})


@transaction.atomic
def profile_set_time_zone(*, user, actor, time_zone: str) -> Profile:
    """Show ``user``'s times in ``time_zone`` (an IANA name), or in the site's zone for ""."""
    permissions.enforce(permissions.profile_update(owner=user, user=actor))
    time_zone = (time_zone or "").strip()
    if time_zone and time_zone not in time_zone_names():
        raise DomainError(f"“{time_zone[:64]}” is not a time zone name.", field="time_zone")
    reason = f"Time zone: {time_zone or 'the site default'}"
    return _profile_set(user, actor, reason, time_zone=time_zone)


@transaction.atomic
def profile_set_digest(*, user, actor, every: int) -> Profile:
    """Email ``user`` what waits for them at most every ``every`` minutes (0: never)."""
    permissions.enforce(permissions.profile_update(owner=user, user=actor))
    if every not in DigestEvery.values:
        raise DomainError("Choose how often to be emailed from the list.", field="digest_every")
    reason = f"Email digest: {DigestEvery(every).label}"
    return _profile_set(user, actor, reason, digest_every=every)


def locked_profile(user, actor=None, reason: str = "Settings first kept", **values) -> Profile:
    """``user``'s profile, locked; created with ``values`` (the site's defaults besides) if they
    have none yet."""
    profile = Profile.objects.select_for_update().filter(user=user).first()
    if profile is None:
        try:
            with transaction.atomic():  # a second tab may be creating it at the same moment
                profile = Profile(user=user, **values)
                save_with_history(profile, actor=actor, reason=reason)
        except IntegrityError:
            profile = Profile.objects.select_for_update().get(user=user)
    return profile


def _profile_set(user, actor, reason: str, **values) -> Profile:
    profile = locked_profile(user, actor, reason, **values)
    if any(getattr(profile, field) != value for field, value in values.items()):
        for field, value in values.items():
            setattr(profile, field, value)
        save_with_history(profile, actor=actor, reason=reason)
    return profile
