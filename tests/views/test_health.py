import pytest
from django.db import OperationalError
from django.urls import reverse

from settlements.views import health


@pytest.mark.django_db
def test_healthz_reports_ok_without_login(client):
    response = client.get(reverse("healthz"))

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}
    # A cached "ok" would hide an outage from the probe.
    assert "no-cache" in response["Cache-Control"]


def test_healthz_answers_503_when_the_database_fails(client, monkeypatch):
    class UnreachableDatabase:
        def cursor(self):
            raise OperationalError("connection refused")

    monkeypatch.setattr(health, "connection", UnreachableDatabase())

    response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json() == {"status": "error", "database": "unavailable"}


def test_healthz_refuses_writes(client):
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_healthz_is_not_redirected_to_https(client, settings):
    # Container and balancer probes speak plain HTTP even when every page is forced to HTTPS.
    settings.SECURE_SSL_REDIRECT = True

    assert client.get("/healthz").status_code == 200
    assert client.get("/accounts/login/").status_code == 301
