from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from settlements.services import settlements as settlement_services
from settlements.services.incidents import incident_close, incident_report
from tests.views.conftest import HISTORY_RESTORE, HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


def test_full_page_lists_open_incidents_with_their_cases_and_counts(as_operator, load_case):
    ready = load_case(type="regular", stage="middle", tournament_id="T-MID")
    waiting = load_case(type="satellite", stage="middle", tournament_id="S-MID")
    html = assert_full_page(as_operator.get(reverse("dashboard")))
    assert "Incident #" in html and "Cluster B outage" in html
    assert f'href="{reverse("case_detail", args=[ready.pk])}"' in html
    assert f'href="{reverse("case_detail", args=[waiting.pk])}"' in html
    assert '<span class="stat__value" data-count="open_incidents">1</span>' in html
    assert '<span class="stat__value" data-count="awaiting_decision">1</span>' in html
    assert '<span class="stat__value" data-count="ready">1</span>' in html
    assert 'data-status="awaiting_decision">Awaiting decision</span>' in html
    assert 'data-stage="middle">Middle stage</span>' in html
    # Money comes formatted, never as minor units.
    assert "200.00 USD" in html  # 20 entrants x 10.00 USD buy-in


def test_cases_needing_someone_come_first_on_the_dashboard_and_the_incident_page(
    as_operator, operator, tournament_manager, incident, load_case
):
    ready = load_case(type="regular", stage="middle", tournament_id="T-1")
    rejected = load_case(type="regular", stage="late", tournament_id="T-2")
    settlement = settlement_services.settlement_prepare(case=rejected, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_reject(
        settlement=settlement, actor=tournament_manager, reason="Recount"
    )
    deciding = load_case(type="freeroll", stage="middle", tournament_id="F-1")
    expected = [deciding.pk, rejected.pk, ready.pk]

    dashboard = as_operator.get(reverse("dashboard")).content.decode()
    incident_page = as_operator.get(
        reverse("incident_tournaments", args=[incident.pk])
    ).content.decode()
    for html, start in [(dashboard, 'id="incident-list"'), (incident_page, 'id="hit-title"')]:
        html = html[html.index(start) :]
        positions = [html.index(f'href="{reverse("case_detail", args=[pk])}"') for pk in expected]
        assert positions == sorted(positions)


def test_waiting_for_me_depends_on_the_role(
    as_operator, as_marketing, as_manager, as_auditor, load_case
):
    load_case(type="regular", stage="middle", tournament_id="T-READY")
    deciding = load_case(type="satellite", stage="middle", tournament_id="S-DECIDE")

    marketing = as_marketing.get(reverse("dashboard")).content.decode()
    assert 'Decisions to make <span class="muted">(1)</span>' in marketing
    assert "Settlements to prepare" not in marketing
    # Straight to the decision waiting on it, not the case page above it.
    decision = reverse("case_decision", args=[deciding.pk])
    assert f'href="{decision}">Case #{deciding.pk}' in marketing

    operator = as_operator.get(reverse("dashboard")).content.decode()
    assert 'Settlements to prepare <span class="muted">(1)</span>' in operator
    assert 'Settlements to submit <span class="muted">(0)</span>' in operator
    assert "Decisions to make" not in operator

    manager = as_manager.get(reverse("dashboard")).content.decode()
    assert "Settlements to approve" in manager and "Compensation to approve" in manager
    assert "Decisions to make" not in manager

    auditor = as_auditor.get(reverse("dashboard")).content.decode()
    # An auditor answers no record; what waits for them is the periodic access review.
    assert "Access review due now" in auditor
    assert "Settlements to approve" not in auditor


def test_approvals_wait_for_the_manager_once_submitted(as_manager, operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-APP")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    html = as_manager.get(reverse("dashboard")).content.decode()
    assert 'Settlements to approve <span class="muted">(1)</span>' in html
    assert f"Settlement #{settlement.pk}" in html
    assert 'data-status="awaiting_approval">Awaiting approval</span>' in html


def test_empty_dashboard_says_what_to_do(as_operator, as_auditor):
    assert "report the crash" in as_operator.get(reverse("dashboard")).content.decode()
    auditor = as_auditor.get(reverse("dashboard")).content.decode()
    assert "No open incidents" in auditor and "report the crash" not in auditor


def test_closed_incidents_leave_the_dashboard(as_operator, operator, incident):
    incident_close(incident=incident, actor=operator)
    html = as_operator.get(reverse("dashboard")).content.decode()
    assert "Cluster B outage" not in html


def _report_incidents(operator, count):
    for number in range(count):
        incident_report(
            actor=operator,
            title=f"Outage {number:02d}",
            started_at=timezone.now() - timedelta(minutes=number),
        )


def test_incidents_are_paginated_and_htmx_gets_only_the_list(as_operator, operator):
    _report_incidents(operator, 12)
    first = as_operator.get(reverse("dashboard")).content.decode()
    assert "Outage 00" in first and "Outage 09" in first and "Outage 10" not in first
    assert "Page 1 of 2" in first
    assert 'href="?page=2" hx-get="?page=2"' in first

    response = as_operator.get(reverse("dashboard"), {"page": 2}, **HTMX)
    html = assert_partial(response, "incident-list")
    assert "Outage 10" in html and "Outage 11" in html and "Outage 00" not in html
    assert "Waiting for you" not in html
    assert response.headers["Vary"].count("HX-Request") == 1


def test_history_restore_gets_the_whole_page(as_operator, operator):
    _report_incidents(operator, 12)
    response = as_operator.get(reverse("dashboard"), {"page": 2}, **HISTORY_RESTORE)
    html = assert_full_page(response)
    assert "Outage 10" in html and "Waiting for you" in html


def test_a_page_number_out_of_range_shows_the_last_page(as_operator, operator):
    _report_incidents(operator, 12)
    html = as_operator.get(reverse("dashboard"), {"page": 99}).content.decode()
    assert "Page 2 of 2" in html
