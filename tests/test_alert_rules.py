"""The compose setup's Prometheus (docker/prometheus/): it scrapes the app's /metrics with the
token compose hands it, and every alert reads a metric the app exports."""

import re
from pathlib import Path

import pytest
import yaml
from django.urls import resolve
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parent.parent
PROMETHEUS = ROOT / "docker" / "prometheus"


def _exported(client, settings) -> set[str]:
    settings.METRICS_TOKEN = "t" * 32
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {settings.METRICS_TOKEN}")
    names = set()
    for family in text_string_to_metric_families(response.content.decode()):
        names |= {family.name, *(sample.name for sample in family.samples)}
        if family.type == "counter":
            names.add(f"{family.name}_total")
    return names


@pytest.mark.django_db
def test_every_alert_reads_a_metric_the_app_exports(client, settings):
    rules = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())["groups"][0]["rules"]
    exported = _exported(client, settings)
    assert {"crashdesk_requests_total", "crashdesk_audit_verified"} <= exported
    alerts = {rule["alert"] for rule in rules}
    assert {"CrashDeskJobStuck", "CrashDeskAuditVerificationFailed"} <= alerts
    assert "CrashDeskLinesFailedForADay" in alerts
    for rule in rules:
        for name in re.findall(r"\bcrashdesk_\w+", rule["expr"]):
            assert name in exported, f"{rule['alert']} reads {name}, which is not exported"


def test_prometheus_scrapes_the_metrics_page_with_the_compose_secret():
    config = yaml.safe_load((PROMETHEUS / "prometheus.yml").read_text())
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    (job,) = config["scrape_configs"]
    assert resolve(job["metrics_path"]).url_name == "metrics"
    assert job["static_configs"][0]["targets"] == ["app:8000"]
    secret = Path(job["authorization"]["credentials_file"]).name
    assert compose["secrets"][secret] == {"environment": "METRICS_TOKEN"}
    assert secret in compose["services"]["prometheus"]["secrets"]
    assert config["rule_files"] == ["/etc/prometheus/alerts.yml"]
    assert ",app" in compose["services"]["app"]["environment"]["ALLOWED_HOSTS"]


def test_compose_runs_the_sweep_that_seals_loose_versions_beside_the_workers():
    """Issue 41: a version written outside the services is sealed within HISTORY_SWEEP_SECONDS
    only if something runs the sweep on a deployed desk."""
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    assert compose["services"]["sweeper"]["command"] == [
        "python",
        "manage.py",
        "seal_loose_versions",
        "--repeat",
    ]
    assert "seal_loose_versions --repeat" in (ROOT / "scripts" / "run").read_text()
