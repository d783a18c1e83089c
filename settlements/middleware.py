"""Request and response rules that hold for every URL.

The size limit refuses an oversized body on its declared size, before anything reads it. It
has to run before the CSRF middleware: that one reads a POST body (to find the form's token)
before any view is called, so a check in the upload view would come after the whole upload
had been received. No endpoint takes more than one snapshot plus form overhead.
"""

import zoneinfo

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import HttpResponse
from django.utils import timezone
from django.utils.cache import patch_cache_control

from settlements import bounds, problems

# Room for the multipart framing and the other form fields around a snapshot of the maximum
# size (the CSRF token, the pasted-text field, headers of each part).
FORM_OVERHEAD_BYTES = 64 * 1024


class RequestSizeLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        declared = request.META.get("CONTENT_LENGTH", "")
        # Django reads nothing of a body whose length is missing or not a number, so only a
        # declared length can be too large.
        size = bounds.whole_number(declared) or 0
        limit = settings.SNAPSHOT_MAX_BYTES
        if size <= limit + FORM_OVERHEAD_BYTES:
            return self.get_response(request)
        if problems.is_api_request(request):
            return problems.snapshot_too_large(size, limit)
        return HttpResponse(
            f"This upload is {size:,} bytes; a snapshot may be at most {limit:,} bytes.\n",
            status=413,
            content_type="text/plain; charset=utf-8",
        )


class NoStoreMiddleware:
    """Tell browsers and proxies to keep no copy of any answer the app makes.

    Nearly every page, ledger and API answer names players or amounts of money, and a copy
    left in a shared proxy or in the browser's cache of a shared desk could be read by someone
    the app would refuse. Set for every response rather than per view, so a new page cannot
    forget it. Static files are served (with long caching) by WhiteNoise before this runs.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        patch_cache_control(response, no_store=True, private=True)
        return response


class QueryTextMiddleware:
    """Refuse a query parameter holding the NUL character, or given more than once, for every
    URL at once.

    No stored text can contain one (PostgreSQL's text type cannot), and PostgreSQL refuses it
    as a query argument: a search or filter with a NUL was a server error. A parameter given
    twice (``?incident=1&incident=2``) was read as its last value, so a list filtered by one
    could be taken for a list filtered by the other; no page or API reads a parameter as a
    list. Both are a client's mistake, answered with a 400 naming the parameter.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        for name, values in request.GET.lists():
            message = None
            if "\x00" in name or any("\x00" in value for value in values):
                message = "must not contain the NUL character"
            elif len(values) > 1:
                message = "must be given once"
            if message is not None:
                where = "?" + name.replace("\x00", "")
                if problems.is_api_request(request):
                    return problems.refusal(400, where, message)
                return HttpResponse(
                    f"{where} {message}.\n", status=400, content_type="text/plain; charset=utf-8"
                )
        return self.get_response(request)


# The signed-in user's time zone name, kept in their session so that no page pays a query for
# it: copied from their profile when they sign in, and set again when they change it.
TIME_ZONE_SESSION_KEY = "crashdesk_time_zone"


class UserTimeZoneMiddleware:
    """Show every time in the signed-in user's own zone (their profile's choice), or the site's
    TIME_ZONE. Pages read times through the active zone; exports and the API never do (they
    write UTC), and a request without a session (the API) keeps the site's zone."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        name = request.session.get(TIME_ZONE_SESSION_KEY, "")
        try:
            zone = zoneinfo.ZoneInfo(name) if name else None
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            zone = None  # a zone since removed from the system's database
        if zone is None:
            timezone.deactivate()
        else:
            timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()


def remember_time_zone(request, time_zone: str) -> None:
    request.session[TIME_ZONE_SESSION_KEY] = time_zone


@receiver(user_logged_in, dispatch_uid="crashdesk-time-zone-at-sign-in")
def _time_zone_at_sign_in(sender, request, user, **kwargs):
    from settlements.models import Profile

    if request is not None and hasattr(request, "session"):
        chosen = Profile.objects.filter(user=user).values_list("time_zone", flat=True).first()
        remember_time_zone(request, chosen or "")
