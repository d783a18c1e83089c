"""Compensation, prizes given in error and individual cases: propose, queue, answer."""

import csv
import io

import pytest
from django.urls import reverse

from settlements.models import Case, Compensation, Event, PrizeWithdrawal, Tournament
from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.settlements import settlement_prepare
from settlements.workflow import CaseStatus, CompensationStatus
from tests.views.conftest import HISTORY_RESTORE, HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


@pytest.fixture
def settled_case(operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-COMP")
    settlement_prepare(case=case, actor=operator)
    return case


@pytest.fixture
def proposal(operator, settled_case):
    return compensation_propose(
        case=settled_case,
        actor=operator,
        reason="Disconnected by our server before the crash",
        entries=[CompensationEntry("p000003", 2500), CompensationEntry("p000004", 1250)],
    )


def test_the_proposal_form_is_a_page_and_a_partial(as_operator, settled_case):
    url = reverse("compensation_new", args=[settled_case.pk])
    html = assert_full_page(as_operator.get(url))
    assert "Propose compensation: case #" in html and "Players and amounts" in html
    assert_partial(as_operator.get(url, **HTMX), "compensation-form")
    assert_full_page(as_operator.get(url, **HISTORY_RESTORE))


def test_proposing_stores_minor_units_and_opens_the_proposal(as_operator, operator, settled_case):
    url = reverse("compensation_new", args=[settled_case.pk])
    data = {"entries": "p000003 25.00\np000004, 12,50 T$\n\np000005 300 fpp", "reason": "Lag"}
    response = as_operator.post(url, data)
    compensation = Compensation.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("compensation_detail", args=[compensation.pk])
    assert compensation.proposed_by == operator and compensation.reason == "Lag"
    items = list(compensation.items.values_list("player", "unit", "amount"))
    assert items == [
        ("p000003", "cash", 2500),
        ("p000004", "tdollars", 1250),
        ("p000005", "fpp", 300),
    ]
    html = as_operator.get(response.url).content.decode()
    assert "25.00 USD" in html and "12.50 USD in T$" in html and "300 FPP" in html


def test_bad_lines_are_listed_and_nothing_is_stored(as_operator, settled_case):
    url = reverse("compensation_new", args=[settled_case.pk])
    data = {"entries": "p000003\np000004 12.345\np000005 5 seats", "reason": "Lag"}
    response = as_operator.post(url, data, **HTMX)
    assert response.status_code == 422
    html = assert_partial(response, "compensation-form")
    assert "Line 1: write the player id, then the amount." in html
    assert "Line 2: “12.345” has more than 2 decimals." in html
    assert "Line 3: the unit is cash, T$ or FPP." in html
    assert "p000004 12.345" in html  # what was typed is kept
    assert not Compensation.objects.exists()


def test_the_service_refuses_a_player_outside_the_case(as_operator, settled_case):
    url = reverse("compensation_new", args=[settled_case.pk])
    response = as_operator.post(url, {"entries": "stranger 5", "reason": "r"}, **HTMX)
    assert response.status_code == 422
    assert "Not a player of Case #" in response.content.decode()
    assert not Compensation.objects.exists()


def test_a_crash_case_needs_its_settlement_before_compensation(as_operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-EARLY")
    page = as_operator.get(reverse("case_detail", args=[case.pk])).content.decode()
    assert reverse("compensation_new", args=[case.pk]) not in page
    response = as_operator.post(
        reverse("compensation_new", args=[case.pk]), {"entries": "p000001 5", "reason": "r"}
    )
    assert response.status_code == 422
    assert "once its settlement has been prepared" in response.content.decode()


def test_who_may_propose(as_marketing, as_auditor, as_manager, settled_case):
    url = reverse("compensation_new", args=[settled_case.pk])
    assert as_marketing.get(url).status_code == 403
    assert as_auditor.post(url, {"entries": "p000001 5", "reason": "r"}).status_code == 403
    assert as_manager.get(url).status_code == 200
    assert not Compensation.objects.exists()


def test_the_queue_lists_proposals_by_status(as_manager, as_auditor, proposal):
    url = reverse("compensation_list")
    html = assert_full_page(as_manager.get(url))
    assert f'href="{reverse("compensation_detail", args=[proposal.pk])}"' in html
    assert "37.50 USD" in html and 'data-status="proposed">Awaiting approval' in html
    approved = assert_partial(as_auditor.get(url + "?status=approved", **HTMX), "compensation-list")
    assert "No compensation waits" not in approved and "Nothing here yet." in approved
    assert reverse("compensation_detail", args=[proposal.pk]) not in approved


def test_approval_restates_the_amount_and_is_never_the_proposers(
    as_operator, as_manager, tournament_manager, proposal
):
    detail = reverse("compensation_detail", args=[proposal.pk])
    approve = reverse("compensation_approve", args=[proposal.pk])
    assert "Approve…" in as_manager.get(detail).content.decode()
    assert as_operator.get(approve).status_code == 403  # not a manager at all
    html = assert_full_page(as_manager.get(approve))
    assert f"Approve compensation #{proposal.pk}: 2 players, 37.50 USD paid by the house." in html
    response = as_manager.post(approve, {"reason": "Confirmed in the logs"}, **HTMX)
    assert response.headers["HX-Redirect"] == detail
    proposal.refresh_from_db()
    assert proposal.status == CompensationStatus.APPROVED
    assert proposal.approved_by == tournament_manager
    csv_response = as_manager.get(reverse("compensation_ledger", args=[proposal.pk]))
    rows = list(csv.reader(io.StringIO(b"".join(csv_response.streaming_content).decode())))
    row = dict(zip(rows[0], rows[1], strict=True))
    assert row["idempotency_key"] == f"C{proposal.pk}-1"
    assert [row[name] for name in ("player", "kind", "unit", "amount_minor", "amount")] == [
        "p000003",
        "compensation",
        "cash",
        "2500",
        "25.00",
    ]


def test_a_manager_cannot_answer_their_own_proposal(as_manager, tournament_manager, settled_case):
    own = compensation_propose(
        case=settled_case,
        actor=tournament_manager,
        reason="r",
        entries=[CompensationEntry("p000001", 100)],
    )
    detail = as_manager.get(reverse("compensation_detail", args=[own.pk])).content.decode()
    assert "Approve…" not in detail and "You proposed it" in detail
    url = reverse("compensation_approve", args=[own.pk])
    assert as_manager.get(url).status_code == 403
    response = as_manager.post(url, {"reason": "fine"})
    assert response.status_code == 403
    assert "another Tournament Manager must approve it" in response.content.decode()
    own.refresh_from_db()
    assert own.status == CompensationStatus.PROPOSED


def test_rejection_needs_a_reason(as_manager, proposal):
    url = reverse("compensation_reject", args=[proposal.pk])
    assert as_manager.post(url, {"reason": ""}, **HTMX).status_code == 422
    as_manager.post(url, {"reason": "Not our fault"})
    proposal.refresh_from_db()
    assert proposal.status == CompensationStatus.REJECTED
    assert proposal.review_reason == "Not our fault"
    assert as_manager.get(reverse("compensation_ledger", args=[proposal.pk])).status_code == 404


def test_a_prize_given_in_error_is_decided_with_a_confirmation(as_manager, settled_case):
    url = reverse("prize_withdrawal_new", args=[settled_case.pk])
    assert_full_page(as_manager.get(url))
    data = {
        "player": "p000002",
        "prize": "Cash paid instead of a seat",
        "amount": "12.00",
        "unit": "cash",
        "outcome": "withdraw",
        "reason": "Paid twice by the cashier",
    }
    step2 = assert_partial(as_manager.post(url, data, **HTMX), "withdrawal-form")
    assert "Withdraw “Cash paid instead of a seat” from p000002 (12.00 USD)." in step2
    assert not PrizeWithdrawal.objects.exists()
    done = as_manager.post(url, {**data, "step": "confirm"})
    assert done.status_code == 302
    withdrawal = PrizeWithdrawal.objects.get()
    assert (withdrawal.outcome, withdrawal.amount, withdrawal.unit) == ("withdraw", 1200, "cash")
    page = as_manager.get(done.url).content.decode()
    assert "Withdraw the prize" in page and "Paid twice by the cashier" in page


def test_a_prize_decision_checks_its_amount_and_role(as_manager, as_operator, settled_case):
    url = reverse("prize_withdrawal_new", args=[settled_case.pk])
    bad = {"player": "p1", "prize": "x", "amount": "3", "outcome": "leave", "reason": "r"}
    response = as_manager.post(url, bad, **HTMX)
    assert (
        response.status_code == 422 and "Give the unit of the amount." in response.content.decode()
    )
    seats = as_manager.post(url, {**bad, "amount": "1.5", "unit": "tickets"}, **HTMX)
    assert seats.status_code == 422 and "“1.5” must be a whole number." in seats.content.decode()
    assert as_operator.get(url).status_code == 403
    assert not PrizeWithdrawal.objects.exists()


def test_an_individual_case_is_opened_then_resolved(as_manager, as_operator, settled_case):
    new = reverse("individual_case_new")
    assert as_operator.get(new).status_code == 403
    response = as_manager.post(
        new,
        {"tournament": "T-COMP", "players": "p000007\np000008", "description": "Client froze"},
    )
    case = Case.objects.get(kind=Case.Kind.INDIVIDUAL)
    assert response.url == reverse("case_detail", args=[case.pk])
    assert case.players == ["p000007", "p000008"]
    page = as_manager.get(response.url).content.decode()
    assert "Client froze" in page and "Resolve the case…" in page
    listing = as_operator.get(reverse("individual_case_list")).content.decode()
    assert f'href="{reverse("case_detail", args=[case.pk])}"' in listing

    resolve = reverse("individual_case_resolve", args=[case.pk])
    step2 = as_manager.post(resolve, {"outcome": "Refunded their buy-ins"}, **HTMX).content.decode()
    assert "Resolve case #" in step2 and "“Refunded their buy-ins”" in step2
    case.refresh_from_db()
    assert case.status == CaseStatus.OPEN
    as_manager.post(resolve, {"outcome": "Refunded their buy-ins", "step": "confirm"})
    case.refresh_from_db()
    assert case.status == CaseStatus.RESOLVED and case.outcome == "Refunded their buy-ins"


def test_an_unknown_tournament_is_named_next_to_its_field(as_manager):
    response = as_manager.post(
        reverse("individual_case_new"),
        {"tournament": "NOPE", "players": "p1", "description": "d"},
        **HTMX,
    )
    assert response.status_code == 422
    html = assert_partial(response, "individual-case-form")
    assert "No registered tournament has the id “NOPE”." in html
    assert "give its type, currency and buy-in below" in html


def test_an_individual_case_registers_a_tournament_that_never_crashed(
    as_manager, tournament_manager
):
    response = as_manager.post(
        reverse("individual_case_new"),
        {
            "tournament": "T-NEVER",
            "type": "regular",
            "currency": "eur",
            "buy_in": "5.50",
            "fee": "0.50",
            "name": "Tuesday Turbo",
            "players": "p1",
            "description": "Disconnected for ten minutes.",
        },
    )
    case = Case.objects.get(kind=Case.Kind.INDIVIDUAL)
    assert response.status_code == 302
    tournament = case.tournament
    assert (tournament.operator_id, tournament.currency, tournament.buy_in, tournament.fee) == (
        "T-NEVER",
        "EUR",
        550,
        50,
    )
    assert tournament.name == "Tuesday Turbo" and not tournament.cases.filter(kind="crash")
    types = list(Event.objects.filter(tournament=tournament).values_list("type", flat=True))
    assert sorted(types) == ["individual_case_opened", "tournament_created"]
    assert tournament.history.get().history_user == tournament_manager


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"currency": "EUR", "buy_in": "5.555"}, "buy_in", "more than 2 decimals"),
        ({"currency": "EU", "buy_in": "5"}, "currency", "three capital letters"),
        ({"currency": "EUR"}, "buy_in", "Give the tournament"),
        ({"currency": "EUR", "type": "freeroll", "buy_in": "5"}, "buy_in", "no buy-in"),
    ],
)
def test_a_tournament_to_register_is_checked_at_its_fields(as_manager, fields, field, words):
    data = {"tournament": "T-NEW", "players": "p1", "description": "d", "type": "regular"}
    response = as_manager.post(reverse("individual_case_new"), {**data, **fields}, **HTMX)
    assert response.status_code == 422
    html = response.content.decode()
    error = html[html.index('<div class="field field--error">') :]
    assert f'id="id_{field}"' in error[: error.index("</div>")]
    assert words in error[: error.index("</div>")]
    assert not Tournament.objects.filter(operator_id="T-NEW").exists()
    assert not Case.objects.exists()


def test_the_proposal_page_pages_its_players_in_a_partial(as_auditor, operator, settled_case):
    many = compensation_propose(
        case=settled_case,
        actor=operator,
        reason="Everyone still in lost a hand to the lag",
        entries=[CompensationEntry(f"p{n:06d}", 100) for n in range(1, 11)],
    )
    url = reverse("compensation_detail", args=[many.pk])
    html = assert_full_page(as_auditor.get(url))
    assert "Everyone still in lost a hand to the lag" in html
    assert "10.00 USD" in html  # the total, paid by the house
    assert "Approve…" not in html  # an auditor only reads
    items = assert_partial(
        as_auditor.get(url, **HTMX, HTTP_HX_TARGET="compensation-items"), "compensation-items"
    )
    assert items.count('<td class="mono">') == 10 and "Paid by the house" not in items


def test_the_individual_case_form_refuses_a_look_alike_tournament(as_manager, settled_case):
    response = as_manager.post(
        reverse("individual_case_new"),
        {
            "tournament": "t-comp\u00a0",
            "players": "p000007",
            "description": "Client froze",
            "type": "regular",
            "currency": "USD",
            "buy_in": "10",
        },
    )
    page = response.content.decode()
    assert response.status_code == 422
    assert f"case #{settled_case.pk} concerns it" in page
    assert not Case.objects.filter(kind=Case.Kind.INDIVIDUAL).exists()
