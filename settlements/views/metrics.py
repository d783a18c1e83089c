"""GET /metrics: the desk's metrics in Prometheus' text format (``settlements.monitoring``),
for a scraper that sends ``Authorization: Bearer METRICS_TOKEN``. Without METRICS_TOKEN set
there is no such page (404): the figures say how much money is waiting and where.

Failed attempts are counted per client address (as sign-ins are, through
``access.signin.client_address``): past FAILURE_LIMIT within FAILURE_WINDOW seconds the page
answers 429 without looking at the token, so the token cannot be guessed at the speed the
server answers."""

from django.conf import settings
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.crypto import constant_time_compare
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST

from settlements import monitoring
from settlements.access.signin import client_address

FAILURE_LIMIT = 10
FAILURE_WINDOW = 300


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    expected = settings.METRICS_TOKEN
    if not expected:
        raise Http404("Metrics are not enabled.")
    failures = f"metrics-failures:{client_address(request)}"
    if cache.get(failures, 0) >= FAILURE_LIMIT:
        response = HttpResponse(
            "Too many failed attempts; try again later.\n",
            status=429,
            content_type="text/plain; charset=utf-8",
        )
        response["Retry-After"] = str(FAILURE_WINDOW)
        return response
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not constant_time_compare(given.strip(), expected):
        # The window starts at the first failure; add() leaves a running count alone.
        cache.add(failures, 0, FAILURE_WINDOW)
        cache.incr(failures)
        response = HttpResponse(
            "Send the metrics token as 'Authorization: Bearer TOKEN'.\n",
            status=401,
            content_type="text/plain; charset=utf-8",
        )
        response["WWW-Authenticate"] = 'Bearer realm="crashdesk-metrics"'
        return response
    return HttpResponse(monitoring.exposition(), content_type=CONTENT_TYPE_LATEST)
