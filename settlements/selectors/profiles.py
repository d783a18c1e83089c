"""What a user chose for their own pages."""

from django.utils import timezone

from settlements.models import Profile, SignedInSession


def profile_time_zone(user) -> str:
    """The time zone ``user`` chose, or "" for the site's."""
    chosen = Profile.objects.filter(user=user).values_list("time_zone", flat=True).first()
    return chosen or ""


def signed_in_sessions(user):
    """The sessions ``user`` is signed in with now, the latest first."""
    return (
        SignedInSession.objects.filter(user=user, session__expire_date__gt=timezone.now())
        .select_related("session")
        .order_by("-signed_in_at", "session_id")
    )
