"""Sign-in throttling on top of django-axes: who a client is, and a limit per combination.

Failures are counted for each combination in ``AXES_LOCKOUT_PARAMETERS``: a username from one
address (someone guessing one account's password), and an address alone (someone trying one
password on many accounts). Axes compares every combination with the same limit, but an
address is shared by a whole office behind its router, so it gets a larger one
(``AXES_ADDRESS_FAILURE_LIMIT``); otherwise five typos by colleagues would lock them all out.
"""

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_failure_limit, get_lockout_parameters
from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest

ADDRESS_ALONE = ("ip_address",)


def client_address(request: HttpRequest) -> str | None:
    """The address a sign-in comes from (``AXES_CLIENT_IP_CALLABLE``).

    ``X-Forwarded-For`` is believed only when ``TRUSTED_PROXY_COUNT`` says how many proxies of
    ours stand in front of the app: each of them appends the address it was reached from, so
    the client is the entry the outermost one wrote, that many from the end. Anything to the
    left of it was written by the client and may be anything. Without that setting, or when
    the header has fewer entries than there are proxies (the request did not come through
    them), the connection's own address is used.
    """
    remote = request.META.get("REMOTE_ADDR")
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [hop for hop in hops if hop]
    return hops[-proxies] if len(hops) >= proxies else remote


def _names(combination: str | list[str]) -> tuple[str, ...]:
    return (combination,) if isinstance(combination, str) else tuple(combination)


class SigninThrottleHandler(AxesDatabaseHandler):
    """Axes' database handler with the address's own failure limit (``AXES_HANDLER``)."""

    def get_failures(self, request, credentials=None) -> int:
        # Axes locks when this reaches the failure limit. Each combination's count is shifted
        # by the difference between its own limit and that one, so the largest shifted count
        # reaches the limit exactly when some combination reaches its own.
        limit = get_failure_limit(request, credentials)
        combinations = get_lockout_parameters(request, credentials)
        attempts = self.get_user_attempts(request, credentials)
        return max(
            (queryset.aggregate(total=Sum("failures_since_start"))["total"] or 0)
            + limit
            - self._limit(combination, limit)
            for combination, queryset in zip(combinations, attempts, strict=True)
        )

    def reset_user_attempts(self, request, credentials=None) -> int:
        # A sign-in clears the signed-in user's own failures, not the address's: otherwise one
        # account the sprayer owns would wipe the failures they spread over everyone else's.
        combinations = get_lockout_parameters(request, credentials)
        attempts = self.filter_user_attempts(request, credentials)
        return sum(
            queryset.delete()[0]
            for combination, queryset in zip(combinations, attempts, strict=True)
            if "username" in _names(combination)
        )

    @staticmethod
    def _limit(combination, default: int) -> int:
        if _names(combination) == ADDRESS_ALONE:
            return settings.AXES_ADDRESS_FAILURE_LIMIT
        return default
