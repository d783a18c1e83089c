"""Withdrawing a case loaded in error from the web: the link on the case page, the
confirmation page (what will happen, a reason, an irreversible button), the refusals, and what
the case page, the settlement page, the dashboard and the incident page show afterwards."""

import pytest
from django.urls import reverse

from settlements.models import Event
from settlements.services import settlements as settlement_services
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.individual_cases import individual_case_open
from settlements.services.snapshots import case_withdraw
from settlements.workflow import CaseStatus, CompensationStatus, SettlementStatus
from tests.views.conftest import HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db

REASON = "Snapshot exported from the wrong table"


def withdraw_url(case) -> str:
    return reverse("case_withdraw", args=[case.pk])


def case_url(case) -> str:
    return reverse("case_detail", args=[case.pk])


@pytest.fixture
def submitted_case(operator, load_case):
    case = load_case(type="regular", stage="late", tournament_id="T-0042", name="Sunday 50")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    return case, settlement


def test_operators_and_managers_find_the_link_on_the_case_page(
    as_operator, as_manager, as_marketing, as_auditor, load_case
):
    case = load_case(tournament_id="T-LINK")
    link = f'href="{withdraw_url(case)}">Withdraw this case</a>'
    assert link in as_operator.get(case_url(case)).content.decode()
    assert link in as_manager.get(case_url(case)).content.decode()
    assert link not in as_marketing.get(case_url(case)).content.decode()
    assert link not in as_auditor.get(case_url(case)).content.decode()


def test_an_approved_case_offers_no_withdrawal(
    as_operator, operator, second_manager, submitted_case
):
    case, settlement = submitted_case
    settlement_services.settlement_approve(settlement=settlement, actor=second_manager)
    html = as_operator.get(case_url(case)).content.decode()
    assert withdraw_url(case) not in html

    page = assert_full_page(as_operator.get(withdraw_url(case)))
    assert "has an approved settlement, so it stays" in page
    assert "adjustment" in page and 'name="reason"' not in page
    refused = as_operator.post(withdraw_url(case), {"reason": REASON})
    assert refused.status_code == 422
    assert "approved settlement" in refused.content.decode()
    assert not Event.objects.filter(type=Event.Type.CASE_WITHDRAWN).exists()


def test_the_confirmation_says_what_will_happen(as_operator, submitted_case):
    case, settlement = submitted_case
    html = assert_full_page(as_operator.get(withdraw_url(case)))
    assert f"<h1>Withdraw case #{case.pk}: T-0042 · Sunday 50</h1>" in html
    statement = html[html.index('id="confirm-statement"') :]
    statement = statement[: statement.index("</p>")]
    assert f"Withdraw case #{case.pk} (T-0042): its snapshot stays on record" in statement
    assert f"Settlement #{settlement.pk} (awaiting approval) is cancelled" in statement
    assert "the tournament can then be loaded again" in statement
    assert 'name="reason"' in html
    assert f'<button class="button button--danger" type="submit">Withdraw case #{case.pk}' in html
    assert f'<a class="button" href="{case_url(case)}">Cancel</a>' in html
    assert f'<a href="{case_url(case)}">Case #{case.pk}</a>' in html  # breadcrumbs
    assert "{#" not in html and "{%" not in html  # no template comment leaks onto the page


def test_compensation_waiting_is_named_and_withdrawn_with_the_case(
    as_operator, operator, submitted_case
):
    case, _ = submitted_case
    waiting = compensation_propose(
        case=case, actor=operator, reason="lag", entries=[CompensationEntry("p000001", 500)]
    )
    html = assert_full_page(as_operator.get(withdraw_url(case)))
    assert f"compensation #{waiting.pk} still waiting for an answer is withdrawn with it" in html
    response = as_operator.post(withdraw_url(case), {"reason": REASON, "step": "confirm"})
    assert response.status_code == 302
    waiting.refresh_from_db()
    assert waiting.status == CompensationStatus.WITHDRAWN
    assert (
        "Withdrawn with its case"
        in as_operator.get(reverse("compensation_detail", args=[waiting.pk])).content.decode()
    )


def test_approved_compensation_keeps_the_case_and_the_page_says_why(
    as_operator, as_manager, operator, second_manager, submitted_case
):
    case, _ = submitted_case
    owed = compensation_approve(
        compensation=compensation_propose(
            case=case, actor=operator, reason="lag", entries=[CompensationEntry("p000001", 500)]
        ),
        actor=second_manager,
    )
    assert withdraw_url(case) not in as_manager.get(case_url(case)).content.decode()
    page = assert_full_page(as_operator.get(withdraw_url(case)))
    assert f"Compensation #{owed.pk} of Case #{case.pk} (T-0042) has been approved" in page
    assert 'name="reason"' not in page
    refused = as_operator.post(withdraw_url(case), {"reason": REASON, "step": "confirm"})
    assert refused.status_code == 422
    assert not Event.objects.filter(type=Event.Type.CASE_WITHDRAWN).exists()


def test_a_case_without_a_settlement_says_so(as_manager, load_case):
    case = load_case(tournament_id="T-NONE")
    html = as_manager.get(withdraw_url(case)).content.decode()
    assert "no settlement of it is waiting to be paid" in html


def test_htmx_gets_the_confirmation_as_a_partial(as_operator, load_case):
    case = load_case(tournament_id="T-HX")
    html = assert_partial(as_operator.get(withdraw_url(case), **HTMX), "case-withdraw")
    assert f'hx-post="{withdraw_url(case)}"' in html


def test_a_withdrawal_needs_a_reason(as_operator, load_case):
    case = load_case(tournament_id="T-WHY")
    response = as_operator.post(withdraw_url(case), {"reason": "  "}, **HTMX)
    assert response.status_code == 422
    assert_partial(response, "case-withdraw")
    assert "This field is required." in response.content.decode()
    case.refresh_from_db()
    assert case.status == CaseStatus.READY


def test_withdrawing_then_loading_the_right_snapshot(
    as_operator, operator, submitted_case, snapshot_factory
):
    case, settlement = submitted_case
    response = as_operator.post(withdraw_url(case), {"reason": REASON})
    assert response.status_code == 302 and response.url == case_url(case)
    case.refresh_from_db()
    settlement.refresh_from_db()
    assert (case.status, case.withdrawn_by, case.withdrawal_reason) == (
        CaseStatus.WITHDRAWN,
        operator,
        REASON,
    )
    assert settlement.status == SettlementStatus.WITHDRAWN

    html = assert_full_page(as_operator.get(case_url(case)))
    assert f"Case #{case.pk} withdrawn." in html  # the message after the redirect
    assert 'data-status="withdrawn">Withdrawn</span>' in html
    assert "Withdrawn: loaded in error" in html
    assert "operator withdrew this case on" in html and f"“{REASON}”" in html
    assert withdraw_url(case) not in html
    assert "Prepare the settlement" not in html and "Propose compensation" not in html
    upload = reverse("incident_upload", args=[case.incident.pk])
    assert f'href="{upload}?tournament={case.tournament.pk}"' in html

    # The incident offers the tournament again, and the new case takes its place.
    picker = as_operator.get(reverse("incident_tournaments", args=[case.incident.pk]))
    assert f"{upload}?tournament={case.tournament.pk}" in picker.content.decode()
    response = as_operator.post(
        f"{upload}?tournament={case.tournament.pk}",
        {"text": snapshot_factory(stage="middle", tournament_id="T-0042").decode()},
    )
    assert response.status_code == 302
    new_case = case.tournament.cases.exclude(pk=case.pk).get()
    assert response.url == case_url(new_case)
    html = as_operator.get(case_url(case)).content.decode()
    now = f'The tournament’s case now is <a href="{case_url(new_case)}">case #{new_case.pk}</a>'
    assert now in html


def test_htmx_withdrawal_navigates_to_the_case(as_manager, load_case):
    case = load_case(tournament_id="T-HXP")
    response = as_manager.post(withdraw_url(case), {"reason": REASON}, **HTMX)
    assert response.status_code == 200
    assert response.headers["HX-Redirect"] == case_url(case)


@pytest.mark.parametrize("who", ["as_marketing", "as_auditor", "as_nobody"])
def test_other_roles_are_refused(request, load_case, who):
    client = request.getfixturevalue(who)
    case = load_case(tournament_id="T-403")
    assert client.get(withdraw_url(case)).status_code == 403
    assert client.post(withdraw_url(case), {"reason": REASON}).status_code == 403
    case.refresh_from_db()
    assert case.status == CaseStatus.READY


def test_an_individual_case_has_no_withdrawal_page(as_manager, tournament_manager, load_case):
    crash = load_case(tournament_id="T-IND")
    individual = individual_case_open(
        tournament=crash.tournament,
        actor=tournament_manager,
        players=["p000001"],
        description="kicked alone",
    )
    assert as_manager.get(withdraw_url(individual)).status_code == 404


def test_a_withdrawn_case_cannot_be_withdrawn_again(as_manager, operator, load_case):
    case = load_case(tournament_id="T-TWICE")
    case_withdraw(case=case, actor=operator, reason=REASON)
    html = as_manager.get(withdraw_url(case)).content.decode()
    assert f"Cannot withdraw Case #{case.pk} (T-TWICE): it is withdrawn." in html
    assert 'name="reason"' not in html


def test_the_settlement_page_says_it_was_withdrawn_with_its_case(
    as_auditor, operator, submitted_case
):
    case, settlement = submitted_case
    case_withdraw(case=case, actor=operator, reason=REASON)
    html = as_auditor.get(reverse("settlement_review", args=[settlement.pk])).content.decode()
    assert 'data-status="withdrawn">Withdrawn</span>' in html
    assert "Withdrawn with its case" in html
    assert f'withdrew <a href="{case_url(case)}">case #{case.pk}</a> as loaded in error' in html
    assert f"“{REASON}”" in html


def test_the_dashboard_counts_a_withdrawn_case_as_no_work(as_operator, operator, load_case):
    case = load_case(tournament_id="T-DASH")
    before = as_operator.get(reverse("dashboard")).content.decode()
    assert "1 case, 1 in progress" in before
    case_withdraw(case=case, actor=operator, reason=REASON)
    html = as_operator.get(reverse("dashboard")).content.decode()
    assert "1 case, 0 in progress" in html
    assert '<span class="stat__value" data-count="ready">0</span>' in html
    assert 'Settlements to prepare <span class="muted">(0)</span></a></h3>' in html
    assert 'data-status="withdrawn">Withdrawn</span>' in html
