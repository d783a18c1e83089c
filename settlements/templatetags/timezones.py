"""Dates and times as people read them: in the signed-in user's time zone (activated by
settlements.middleware.UserTimeZoneMiddleware), always followed by that zone's name, so a time
on a screen is never ambiguous. Exports and the API stay in UTC."""

from django import template
from django.utils import timezone
from django.utils.dateformat import format as date_format

register = template.Library()

FORMATS = {"minutes": "j M Y, H:i", "seconds": "j M Y, H:i:s", "time": "H:i"}


@register.filter
def when(value, precision: str = "minutes") -> str:
    """{{ at|when }} -> "30 Nov 2026, 21:14 CET"; {{ at|when:"seconds" }} adds the seconds,
    {{ at|when:"time" }} leaves out the date."""
    if value in (None, ""):
        return ""
    local = timezone.localtime(value)
    # The zone's name from the moment itself: Django's "T" leaves it out in the hour a clock
    # goes back, the one hour where "01:30" alone is ambiguous.
    return f"{date_format(local, FORMATS[precision])} {local.tzname()}"


@register.simple_tag
def current_zone() -> str:
    """The name of the zone times are shown in, e.g. "Europe/Paris"."""
    return timezone.get_current_timezone_name()
