"""Fixtures for the page tests: signed-in clients and cases loaded through the services."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from settlements.models import Job, Settlement
from settlements.services.incidents import incident_report
from settlements.services.settlements import settlement_prepare, settlement_submit
from settlements.services.snapshots import case_load_snapshot

HTMX = {"HTTP_HX_REQUEST": "true"}
HISTORY_RESTORE = {"HTTP_HX_REQUEST": "true", "HTTP_HX_HISTORY_RESTORE_REQUEST": "true"}


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def as_operator(operator):
    return signed_in(operator)


@pytest.fixture
def as_marketing(marketing_manager):
    return signed_in(marketing_manager)


@pytest.fixture
def as_manager(tournament_manager):
    return signed_in(tournament_manager)


@pytest.fixture
def as_auditor(auditor):
    return signed_in(auditor)


@pytest.fixture
def as_nobody(no_role_user):
    return signed_in(no_role_user)


@pytest.fixture
def incident(operator):
    return incident_report(
        actor=operator,
        title="Cluster B outage",
        started_at=timezone.now() - timedelta(hours=1),
    )


@pytest.fixture
def load_case(operator, incident, snapshot_factory):
    """``load_case(type=..., stage=..., ...)`` -> a case of ``incident`` from a snapshot."""

    def load(**kwargs):
        return case_load_snapshot(
            actor=operator, snapshot=snapshot_factory(**kwargs), incident=incident
        )

    return load


@pytest.fixture
def late_cases(load_case):
    """Three late-stage cases of ``incident``, ready to prepare."""
    return [load_case(stage="late", tournament_id=f"L{number}") for number in range(3)]


def submitted_settlements(cases, operator) -> list[Settlement]:
    """The cases' settlements, prepared and submitted by ``operator``."""
    settlements = []
    for case in cases:
        settlement = settlement_prepare(case=case, actor=operator)
        settlements.append(settlement_submit(settlement=settlement, actor=operator))
    return settlements


def job_of(response) -> Job:
    """The job a response redirects to the page of."""
    job_id = int(response["Location"].rstrip("/").rsplit("/", 1)[1])
    return Job.objects.get(pk=job_id)


def assert_full_page(response) -> str:
    html = response.content.decode()
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert 'class="topbar"' in html
    assert_csp_clean(html)
    return html


def assert_partial(response, element_id: str) -> str:
    html = response.content.decode()
    assert "<html" not in html and "<body" not in html and 'class="topbar"' not in html
    assert f'id="{element_id}"' in html
    assert_csp_clean(html)
    return html


def assert_csp_clean(html: str) -> None:
    """Nothing the strict CSP would block: no inline style or script, no htmx eval hooks."""
    assert not re.search(r"\sstyle\s*=", html), "inline style attribute"
    assert "<style" not in html
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert " src=" in tag, f"inline script: {tag}"
    assert not re.search(r"\shx-on[:-]", html), "hx-on attribute"
    assert not re.search(r"\son[a-z]+\s*=", html), "inline event handler"
