"""GET /metrics: the desk's metrics in Prometheus' text format (``settlements.monitoring``),
for a scraper that sends ``Authorization: Bearer METRICS_TOKEN``. Without METRICS_TOKEN set
there is no such page (404): the figures say how much money is waiting and where."""

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.crypto import constant_time_compare
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST

from settlements import monitoring


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    expected = settings.METRICS_TOKEN
    if not expected:
        raise Http404("Metrics are not enabled.")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not constant_time_compare(given.strip(), expected):
        response = HttpResponse(
            "Send the metrics token as 'Authorization: Bearer TOKEN'.\n",
            status=401,
            content_type="text/plain; charset=utf-8",
        )
        response["WWW-Authenticate"] = 'Bearer realm="crashdesk-metrics"'
        return response
    return HttpResponse(monitoring.exposition(), content_type=CONTENT_TYPE_LATEST)
