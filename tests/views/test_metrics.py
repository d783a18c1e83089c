"""GET /metrics: Prometheus' text format, only for the scraper's token, with figures that are
the desk's own counts."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from settlements import audit_log
from settlements.models import Case, Job, Settlement
from settlements.selectors.payments.lines import approved_lines
from settlements.services.payments import ConfirmationEntry, payment_confirm
from settlements.services.reissues import reissue_propose
from settlements.workflow import CaseStatus, SettlementStatus
from tests.services.helpers import approved, load, submitted

pytestmark = pytest.mark.django_db

TOKEN = "scraper-secret-0123456789"


@pytest.fixture
def scraper(settings):
    settings.METRICS_TOKEN = TOKEN
    return {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}


def scrape(client: Client, scraper) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics", **scraper)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def test_without_a_token_setting_there_is_no_page(client, settings):
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Basic {TOKEN}", TOKEN])
def test_the_token_is_required(client, scraper, header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.get("/metrics", **extra)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"crashdesk_" not in response.content


def test_requests_are_counted_by_view_and_status(client, scraper):
    before = scrape(client, scraper)
    client.get("/healthz")
    client.get("/healthz")
    client.get("/api/v1/cases")
    after = scrape(client, scraper)

    def grown(labels, name="crashdesk_requests_total"):
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0) - before.get(key, 0)

    assert grown({"view": "healthz", "method": "GET", "status": "200"}) == 2
    assert grown({"view": "api:cases", "method": "GET", "status": "401"}) == 1
    timed = {"view": "healthz", "method": "GET"}
    assert grown(timed, "crashdesk_request_duration_seconds_count") == 2


def test_the_figures_are_the_desks_counts(
    client, scraper, operator, tournament_manager, second_manager, cashier, snapshot_factory
):
    approved(operator, tournament_manager, snapshot_factory, tournament_id="T-1")
    submitted(operator, snapshot_factory, tournament_id="T-2")
    load(operator, snapshot_factory, tournament_id="T-3", stage="late")
    Job.objects.create(kind=Job.Kind.PREPARE, target="case:x", created_by=operator)
    Job.objects.create(
        kind=Job.Kind.SUBMIT, target="incident:y", created_by=operator, status=Job.Status.FAILED
    )
    lines = list(approved_lines(after=0, until=100))
    first, second = lines[0], lines[1]
    at = timezone.now() - timedelta(minutes=1)
    payment_confirm(
        actor=cashier,
        confirmations=[
            ConfirmationEntry(line.key, "failed", "declined", at, line.amount)
            for line in (first, second)
        ]
        + [ConfirmationEntry(lines[2].key, "paid", "wal-1", at, lines[2].amount)],
    )
    reissue_propose(actor=operator, idempotency_key=second.key, reason="new account")
    audit_log.remember(audit_log.verify(), cache=cache)

    figures = scrape(client, scraper)

    def value(name, **labels):
        return figures[(name, tuple(sorted(labels.items())))]

    for status, label in SettlementStatus.choices:
        expected = Settlement.objects.filter(status=status).count()
        assert value("crashdesk_settlements", status=status) == expected, label
    assert value("crashdesk_jobs", status="queued") == 1
    assert value("crashdesk_jobs", status="failed") == 1
    assert value("crashdesk_jobs", status="running") == 0
    assert value("crashdesk_job_oldest_age_seconds", status="queued") >= 0
    assert value("crashdesk_ledger_lines", state="failed") == 1
    assert value("crashdesk_ledger_lines", state="awaiting_reissue") == 1
    assert value("crashdesk_ledger_lines", state="unconfirmed") == len(lines) - 3
    assert 0 < value("crashdesk_ledger_failed_oldest_age_seconds") < 3600
    for role in ("operator", "tournament_manager", "cashier"):
        assert value("crashdesk_waiting_oldest_age_seconds", role=role) >= 0
    assert ("crashdesk_waiting_oldest_age_seconds", (("role", "auditor"),)) not in figures
    decisions = Case.objects.filter(status=CaseStatus.AWAITING_DECISION).exists()
    marketing = ("crashdesk_waiting_oldest_age_seconds", (("role", "marketing_manager"),))
    assert (marketing in figures) == decisions
    assert value("crashdesk_audit_verified") == 1
    verified_at = value("crashdesk_audit_verified_timestamp_seconds")
    assert abs(verified_at - timezone.now().timestamp()) < 600


def test_a_failed_verification_shows_as_zero_and_none_as_absent(client, scraper):
    assert ("crashdesk_audit_verified", ()) not in scrape(client, scraper)
    failed = audit_log.Verification(count=3, head="0" * 64, problem="event 2 was altered")
    audit_log.remember(failed, cache=cache)
    assert scrape(client, scraper)[("crashdesk_audit_verified", ())] == 0


def test_failed_attempts_are_throttled(client, scraper):
    cache.clear()
    for _ in range(10):
        assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer guess").status_code == 401
    # Even the right token waits now: the answer no longer says whether a guess was right.
    refused = client.get("/metrics", **scraper)
    assert refused.status_code == 429
    assert refused["Retry-After"] == "300"
    cache.clear()
    assert client.get("/metrics", **scraper).status_code == 200
