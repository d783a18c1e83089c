"""Taking back a prize given in error, on the pages: proposed by one Tournament Manager, waiting
for the others on their dashboard, approved or rejected on a confirmation page."""

import pytest
from django.urls import reverse

from settlements.models import PrizeWithdrawal
from settlements.selectors.payments.lines import approved_lines
from settlements.services.individual_cases import prize_withdrawal_decide
from settlements.workflow import PrizeWithdrawalStatus
from tests.views.conftest import HTMX, assert_full_page, assert_partial, signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def proposal(operator, tournament_manager, load_case) -> PrizeWithdrawal:
    case = load_case(type="regular", stage="middle", tournament_id="T-PRIZE")
    return prize_withdrawal_decide(
        case=case,
        actor=tournament_manager,
        player="p000002",
        prize="Cash paid instead of a seat",
        outcome="withdraw",
        reason="paid from the wrong pool",
        amount=1200,
        unit="cash",
    )


@pytest.fixture
def as_second(second_manager):
    return signed_in(second_manager)


def withdrawal_keys() -> list[str]:
    return [line.key for line in approved_lines() if line.key.startswith("W")]


def test_the_proposal_form_says_another_manager_approves(as_manager, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-FORM")
    url = reverse("prize_withdrawal_new", args=[case.pk])
    data = {
        "player": "p000002",
        "prize": "A seat paid twice",
        "amount": "3.00",
        "unit": "cash",
        "outcome": "withdraw",
        "reason": "the cashier paid it twice",
        "step": "confirm",
    }
    done = as_manager.post(url, data)
    assert done.status_code == 302
    withdrawal = PrizeWithdrawal.objects.get()
    assert withdrawal.status == PrizeWithdrawalStatus.PROPOSED
    page = as_manager.get(done.url).content.decode()
    assert "another Tournament Manager approves it" in page
    assert "Awaiting approval" in page and withdrawal_keys() == []


def test_it_waits_on_the_other_managers_dashboard_and_not_the_proposers(
    as_manager, as_second, as_operator, proposal
):
    label = str(proposal)
    link = reverse("prize_withdrawal_approve", args=[proposal.pk])
    dashboard = assert_full_page(as_second.get(reverse("dashboard")))
    assert "Prize withdrawals to approve" in dashboard and link in dashboard
    own = as_manager.get(reverse("dashboard")).content.decode()
    assert "Prize withdrawals to approve" in own and link not in own
    assert (
        "Prize withdrawals to approve" not in as_operator.get(reverse("dashboard")).content.decode()
    )

    queue = reverse("queue", args=["prize_withdrawals"])
    assert label in assert_full_page(as_second.get(queue))
    assert label in assert_partial(as_second.get(queue, **HTMX), "queue")
    assert label not in as_manager.get(queue).content.decode()
    assert as_operator.get(queue).status_code == 403


def test_the_other_manager_approves_it_after_a_confirmation(as_second, second_manager, proposal):
    case_page = as_second.get(reverse("case_detail", args=[proposal.case_id])).content.decode()
    url = reverse("prize_withdrawal_approve", args=[proposal.pk])
    assert url in case_page
    page = assert_full_page(as_second.get(url))
    assert "The cashier will collect 12.00 USD back from p000002" in page
    assert_partial(as_second.get(url, **HTMX), "withdrawal-actions")
    assert withdrawal_keys() == []

    response = as_second.post(url, {"reason": "checked the payout log"}, **HTMX)
    assert response.headers["HX-Redirect"].startswith(
        reverse("case_detail", args=[proposal.case_id])
    )
    proposal.refresh_from_db()
    assert (proposal.status, proposal.approved_by) == ("approved", second_manager)
    assert withdrawal_keys() == [f"W{proposal.pk}-1"]
    after = as_second.get(reverse("case_detail", args=[proposal.case_id])).content.decode()
    assert "approved by manager2" in after and url not in after
    dashboard = as_second.get(reverse("dashboard")).content.decode()
    assert f"#withdrawal-{proposal.pk}" not in dashboard


def test_a_rejection_needs_a_reason_and_collects_nothing(as_second, proposal):
    url = reverse("prize_withdrawal_reject", args=[proposal.pk])
    assert "Nothing will be collected from p000002" in assert_full_page(as_second.get(url))
    assert as_second.post(url, {"reason": ""}, **HTMX).status_code == 422
    assert as_second.post(url, {"reason": "the player was owed it"}).status_code == 302
    proposal.refresh_from_db()
    assert proposal.status == PrizeWithdrawalStatus.REJECTED
    assert withdrawal_keys() == []


def test_the_proposer_and_other_roles_are_refused_on_the_server(
    as_manager, as_operator, as_auditor, proposal
):
    case_page = as_manager.get(reverse("case_detail", args=[proposal.case_id])).content.decode()
    approve = reverse("prize_withdrawal_approve", args=[proposal.pk])
    assert approve not in case_page and "another Tournament Manager answers it" in case_page
    assert as_manager.get(approve).status_code == 403
    refused = as_manager.post(approve, {"reason": "looks right"})
    assert refused.status_code == 403
    assert "another Tournament Manager must approve it" in refused.content.decode()
    for client in (as_operator, as_auditor):
        assert client.post(approve, {"reason": "looks right"}).status_code == 403
    reject = reverse("prize_withdrawal_reject", args=[proposal.pk])
    assert as_operator.post(reject, {"reason": "no"}).status_code == 403
    proposal.refresh_from_db()
    assert proposal.status == PrizeWithdrawalStatus.PROPOSED and withdrawal_keys() == []
    assert as_manager.get(reverse("prize_withdrawal_approve", args=[10**9])).status_code == 404


def test_the_amount_is_not_called_optional_since_a_withdrawal_needs_it(as_manager, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-AMOUNT")
    html = as_manager.get(reverse("prize_withdrawal_new", args=[case.pk])).content.decode()
    label = html[html.index('for="id_amount"') :].split("</label>")[0]
    assert "Amount to take back" in label and "optional" not in label
    assert "Needed to withdraw the prize" in html
