"""Metrics for Prometheus (served by ``views.metrics`` at /metrics): each request counted and
timed by view, method and status, and the desk's figures read at each scrape through
``selectors.desk_figures``.

Under gunicorn each worker is a process with its own counters. With PROMETHEUS_MULTIPROC_DIR
set (compose.yaml sets it for the app), prometheus-client keeps them in files there and a scrape
sums every worker's (crashdesk/gunicorn.conf.py removes a dead worker's); unset, a scrape
sees the counters of the worker that answered it, which is right for a single process.
"""

import os
import time

from django.core.cache import cache
from django.utils import timezone
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from settlements.access.refusals import REFUSALS
from settlements.selectors.operations import desk_figures

# Not registered globally: each scrape builds its registry (see ``exposition``).
REQUESTS = Counter(
    "crashdesk_requests",
    "Requests answered, by view, method and status.",
    ["view", "method", "status"],
    registry=None,
)
LATENCY = Histogram(
    "crashdesk_request_duration_seconds",
    "Time from the request reaching Django to its answer, by view and method.",
    ["view", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
    registry=None,
)
# Anything else is counted as "other", so that a client cannot add label values at will.
_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}


class RequestMetricsMiddleware:
    """Counts and times every request. The view is the URL's name (``api:case``), never the
    path, so that the number of series stays small whatever URLs are asked for."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        elapsed = time.perf_counter() - started
        match = request.resolver_match
        view = (match.view_name or "unnamed") if match else "unresolved"
        method = request.method if request.method in _METHODS else "other"
        REQUESTS.labels(view, method, str(response.status_code)).inc()
        LATENCY.labels(view, method).observe(elapsed)
        return response


class DeskCollector:
    """The desk's figures, read when Prometheus scrapes."""

    def collect(self):
        figures = desk_figures(cache=cache)
        now = timezone.now()

        def age(since):
            return (now - since).total_seconds()

        yield _by("crashdesk_jobs", "Background jobs by status.", "status", figures.jobs)
        yield _by(
            "crashdesk_job_oldest_age_seconds",
            "Age of the oldest queued job (since created) and running job (since started).",
            "status",
            {status: age(since) for status, since in figures.job_oldest.items()},
        )
        stalest = GaugeMetricFamily(
            "crashdesk_job_lease_expired_seconds",
            "Time since the oldest lease of a pending job item ran out (0 with none).",
        )
        expired = figures.job_lease_expired_oldest
        stalest.add_metric([], age(expired) if expired else 0)
        yield stalest
        yield _by("crashdesk_settlements", "Settlements by status.", "status", figures.settlements)
        yield _by(
            "crashdesk_ledger_lines",
            "Approved ledger lines not paid: unconfirmed, failed, or failed with a re-issue "
            "waiting for approval.",
            "state",
            figures.lines,
        )
        failed = GaugeMetricFamily(
            "crashdesk_ledger_failed_oldest_age_seconds",
            "Time since the longest-failed line's failure was recorded (0 with none failed).",
        )
        failed.add_metric([], age(figures.line_failed_oldest) if figures.line_failed_oldest else 0)
        yield failed
        yield _by(
            "crashdesk_waiting_oldest_age_seconds",
            "Age of the oldest item waiting for each role.",
            "role",
            {role: age(since) for role, since in figures.waiting_oldest.items()},
        )
        yield from _audit(figures.audit)


def _by(name: str, documentation: str, label: str, values: dict) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for key, value in values.items():
        family.add_metric([key], value)
    return family


def _audit(audit):
    verified = GaugeMetricFamily(
        "crashdesk_audit_verified",
        "1 if the last verification of the event chain passed, 0 if it failed; absent if the "
        "chain was never verified.",
    )
    at = GaugeMetricFamily(
        "crashdesk_audit_verified_timestamp_seconds",
        "When the whole event chain was last verified (Unix time).",
    )
    if audit is not None:
        verified.add_metric([], 1 if audit.ok else 0)
        at.add_metric([], audit.full_at.timestamp())
    yield verified
    yield at


def exposition() -> bytes:
    """Every metric, in Prometheus' text format."""
    registry = CollectorRegistry(auto_describe=False)
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        MultiProcessCollector(registry)
    else:
        registry.register(REQUESTS)
        registry.register(LATENCY)
        registry.register(REFUSALS)
    registry.register(DeskCollector())
    return generate_latest(registry)
