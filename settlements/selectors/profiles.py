"""What a user chose for their own pages."""

from settlements.models import Profile


def profile_time_zone(user) -> str:
    """The time zone ``user`` chose, or "" for the site's."""
    chosen = Profile.objects.filter(user=user).values_list("time_zone", flat=True).first()
    return chosen or ""
