"""Step-up: what moves money asks for the second factor again when its last proof is older
than STEP_UP_MAX_AGE, on every path: the pages, the bulk approval, the services themselves."""

import time

import pytest
from django.urls import reverse
from django.utils.http import urlencode

from settlements.access import permissions, second_factor
from settlements.errors import NotAllowed, SecondFactorStale
from settlements.models import Settlement
from settlements.services import compensation
from settlements.services.compensation import CompensationEntry
from settlements.services.individual_cases import prize_withdrawal_approve, prize_withdrawal_decide
from settlements.services.jobs import NewItem, job_start
from settlements.services.settlements import settlement_approve, settlement_prepare
from settlements.services.tokens import api_token_create
from settlements.workflow import SettlementStatus
from tests.conftest import TEST_TOTP_SECRET, proved_ago
from tests.views.conftest import HTMX, signed_in, submitted_settlements

pytestmark = pytest.mark.django_db

STALE = 11 * 60  # seconds: past the default ten minutes


def stale(user):
    """``user`` as a page hands it to the services, its factor proved ``STALE`` ago."""
    setattr(user, permissions.PROVED_AT, time.time() - STALE)
    return user


@pytest.fixture
def submitted(late_cases, operator) -> Settlement:
    return submitted_settlements(late_cases[:1], operator)[0]


def to_step_up(response, back_to: str) -> None:
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("mfa_reauthenticate"))
    assert response["Location"].endswith(f"?{urlencode({'next': back_to})}")


# --- The rule ------------------------------------------------------------------------------------


def test_a_fresh_proof_passes_and_a_stale_or_missing_one_is_refused(tournament_manager, settings):
    user = tournament_manager
    setattr(user, permissions.PROVED_AT, time.time() - 60)
    assert permissions.step_up(user=user, action="approve settlements") is None
    stale(user)
    refusal = permissions.step_up(user=user, action="approve settlements")
    assert refusal.kind == permissions.STEP_UP
    assert "confirm your second factor again" in refusal
    setattr(user, permissions.PROVED_AT, None)  # never proved in this session, or a token
    assert permissions.step_up(user=user, action="approve settlements") is not None
    # The setting decides how fresh is fresh.
    settings.STEP_UP_MAX_AGE = 20 * 60
    stale(user)
    assert permissions.step_up(user=user, action="approve settlements") is None


def test_work_no_request_makes_carries_no_proof_and_is_not_held(tournament_manager):
    # A management command, or a background job started by a request that passed the check.
    assert not hasattr(tournament_manager, permissions.PROVED_AT)
    assert permissions.step_up(user=tournament_manager, action="approve settlements") is None


# --- Each service that moves money ---------------------------------------------------------------


def test_settlement_approval_is_refused_with_a_stale_proof(submitted, tournament_manager):
    with pytest.raises(SecondFactorStale, match="approve settlements"):
        settlement_approve(settlement=submitted, actor=stale(tournament_manager))
    submitted.refresh_from_db()
    assert submitted.status == SettlementStatus.AWAITING_APPROVAL


def test_the_role_is_answered_before_the_second_factor(submitted, operator):
    # Someone who may not approve at all is told so, not asked for a code.
    with pytest.raises(NotAllowed):
        settlement_approve(settlement=submitted, actor=stale(operator))


def test_compensation_approval_is_refused_with_a_stale_proof(
    operator, tournament_manager, load_case
):
    case = load_case(type="regular", stage="middle", tournament_id="T-STEP")
    settlement_prepare(case=case, actor=operator)
    proposal = compensation.compensation_propose(
        case=case, actor=operator, reason="lag", entries=[CompensationEntry("p000003", 2500)]
    )
    with pytest.raises(SecondFactorStale, match="approve compensation"):
        compensation.compensation_approve(compensation=proposal, actor=stale(tournament_manager))
    # Rejecting pays nobody: no fresh proof needed.
    compensation.compensation_reject(
        compensation=proposal, actor=stale(tournament_manager), reason="no lag"
    )


def test_a_prize_withdrawal_approval_is_refused_with_a_stale_proof(
    tournament_manager, second_manager, load_case
):
    withdrawal = prize_withdrawal_decide(
        case=load_case(type="regular", stage="middle", tournament_id="T-PRIZE"),
        actor=tournament_manager,
        player="p000002",
        prize="paid twice",
        outcome="withdraw",
        reason="duplicate",
        amount=100,
        unit="cash",
    )
    with pytest.raises(SecondFactorStale, match="approve prize withdrawals"):
        prize_withdrawal_approve(withdrawal=withdrawal, actor=stale(second_manager))


def test_issuing_an_api_token_is_refused_with_a_stale_proof(operator):
    with pytest.raises(SecondFactorStale, match="issue API tokens"):
        api_token_create(user=operator, name="game server", actor=stale(operator))
    # The administrator's command on the server (no actor) is not a browser session.
    api_token_create(user=operator, name="game server", actor=None)


def test_a_bulk_approval_is_refused_when_it_starts(submitted, tournament_manager, incident):
    with pytest.raises(SecondFactorStale):
        job_start(
            kind="approve",
            actor=stale(tournament_manager),
            target=f"incident:{incident.pk}",
            items=[NewItem(str(submitted.pk), "one")],
            incident=incident,
        )


# --- The pages -----------------------------------------------------------------------------------


def test_the_approval_page_sends_a_stale_session_to_prove_it_and_back(
    submitted, tournament_manager
):
    client = proved_ago(signed_in(tournament_manager), STALE)
    page = reverse("settlement_approve", args=[submitted.pk])
    assert client.get(page).status_code == 200  # reading the confirmation asks nothing

    answer = client.post(page, {"reason": "checked"}, HTTP_REFERER=f"http://testserver{page}")

    to_step_up(answer, page)
    submitted.refresh_from_db()
    assert submitted.status == SettlementStatus.AWAITING_APPROVAL

    # The code proves it again; back on the page, the same approval goes through.
    second_factor.set_totp_secret(user=tournament_manager, secret=TEST_TOTP_SECRET)
    proved = client.post(
        f"{reverse('mfa_reauthenticate')}?next={page}",
        {"code": second_factor.totp_code(TEST_TOTP_SECRET)},
    )
    assert proved["Location"] == page
    assert client.post(page, {"reason": "checked"}).status_code == 302
    submitted.refresh_from_db()
    assert submitted.status == SettlementStatus.APPROVED


def test_an_htmx_approval_is_sent_on_by_a_client_redirect(submitted, tournament_manager):
    client = proved_ago(signed_in(tournament_manager), STALE)
    page = reverse("settlement_approve", args=[submitted.pk])

    answer = client.post(
        page, {"reason": "checked"}, **HTMX, HTTP_HX_CURRENT_URL=f"http://testserver{page}"
    )

    assert answer["HX-Redirect"].startswith(reverse("mfa_reauthenticate"))
    submitted.refresh_from_db()
    assert submitted.status == SettlementStatus.AWAITING_APPROVAL


def test_a_fresh_session_approves_without_being_asked(submitted, tournament_manager):
    client = proved_ago(signed_in(tournament_manager), 60)
    page = reverse("settlement_approve", args=[submitted.pk])

    assert client.post(page, {"reason": "checked"}).status_code == 302
    submitted.refresh_from_db()
    assert submitted.status == SettlementStatus.APPROVED


def test_the_bulk_approval_page_asks_before_starting(submitted, tournament_manager, incident):
    client = proved_ago(signed_in(tournament_manager), STALE)
    url = reverse("incident_approve", args=[incident.pk])

    answer = client.post(
        url, {"selection": str(submitted.pk), "reason": "outage checked", "step": "confirm"}
    )

    to_step_up(answer, url)
    submitted.refresh_from_db()
    assert submitted.status == SettlementStatus.AWAITING_APPROVAL


def test_the_compensation_and_prize_pages_ask_too(
    operator, tournament_manager, second_manager, load_case
):
    case = load_case(type="regular", stage="middle", tournament_id="T-PAGES")
    settlement_prepare(case=case, actor=operator)
    proposal = compensation.compensation_propose(
        case=case, actor=operator, reason="lag", entries=[CompensationEntry("p000003", 2500)]
    )
    withdrawal = prize_withdrawal_decide(
        case=case,
        actor=tournament_manager,
        player="p000002",
        prize="paid twice",
        outcome="withdraw",
        reason="duplicate",
        amount=100,
        unit="cash",
    )
    client = proved_ago(signed_in(second_manager), STALE)
    for page in (
        reverse("compensation_approve", args=[proposal.pk]),
        reverse("prize_withdrawal_approve", args=[withdrawal.pk]),
    ):
        to_step_up(client.post(page, {"reason": "checked"}), page)
    proposal.refresh_from_db()
    withdrawal.refresh_from_db()
    assert (proposal.status, withdrawal.status) == ("proposed", "proposed")
