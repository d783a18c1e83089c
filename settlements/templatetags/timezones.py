"""Dates and times as people read them: in the signed-in user's time zone (activated by
settlements.middleware.UserTimeZoneMiddleware), always followed by that zone's name, so a time
on a screen is never ambiguous. Exports and the API stay in UTC."""

from django import template
from django.utils import timezone
from django.utils.dates import MONTHS_3

register = template.Library()

PRECISIONS = ("minutes", "seconds", "time")


@register.filter
def when(value, precision: str = "minutes") -> str:
    """{{ at|when }} -> "30 Nov 2026, 21:14 CET"; {{ at|when:"seconds" }} adds the seconds,
    {{ at|when:"time" }} leaves out the date.

    Written out by hand rather than through Django's date formatting (what "j M Y, H:i" gives,
    as tests/views/test_time_zones.py checks), because history pages show fifty of these and
    the format string was parsed for every one."""
    if precision not in PRECISIONS:
        raise template.TemplateSyntaxError(f"when: no precision {precision!r}")
    if value in (None, ""):
        return ""
    local = timezone.localtime(value)
    clock = f"{local.hour:02d}:{local.minute:02d}"
    if precision == "seconds":
        clock = f"{clock}:{local.second:02d}"
    # The zone's name from the moment itself: Django's "T" leaves it out in the hour a clock
    # goes back, the one hour where "01:30" alone is ambiguous.
    if precision == "time":
        return f"{clock} {local.tzname()}"
    day = f"{local.day} {MONTHS_3[local.month].title()} {local.year:04d}"
    return f"{day}, {clock} {local.tzname()}"


@register.simple_tag
def current_zone() -> str:
    """The name of the zone times are shown in, e.g. "Europe/Paris"."""
    return timezone.get_current_timezone_name()
