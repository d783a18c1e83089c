"""Words that tell each person what is theirs to do: the operator submits and never approves;
a rejected case says how to redo it, snapshot disputes included; resolving an individual case
says what compensation still waits."""

import pytest
from django.urls import reverse

from settlements.services import settlements as settlement_services
from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.individual_cases import individual_case_open
from tests.views.conftest import HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


def test_the_operator_is_told_a_manager_approves_never_the_operator(
    as_operator, operator, load_case
):
    settlement = settlement_services.settlement_prepare(
        case=load_case(stage="late", tournament_id="W-1"), actor=operator
    )
    html = assert_full_page(as_operator.get(reverse("settlement_review", args=[settlement.pk])))
    assert "Another manager than you" not in html
    assert "never the person who prepared or submitted it" in html


def test_a_rejected_case_says_how_to_redo_it_and_when_to_load_it_again(
    as_operator, operator, tournament_manager, load_case
):
    case = load_case(stage="late", tournament_id="W-2")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_reject(
        settlement=settlement, actor=tournament_manager, reason="chip counts look wrong"
    )
    html = assert_full_page(as_operator.get(reverse("case_detail", args=[case.pk])))
    rejection = html[html.index('id="case-rejection"') :]
    assert "Prepare it anew" not in rejection
    assert f'href="{reverse("case_withdraw", args=[case.pk])}">withdraw the case</a>' in rejection
    assert "load the corrected snapshot" in rejection


def test_resolving_an_individual_case_warns_of_compensation_still_waiting(
    as_manager, operator, tournament_manager, load_case
):
    case = individual_case_open(
        tournament=load_case(stage="late", tournament_id="W-3").tournament,
        actor=tournament_manager,
        players=["p000001"],
        description="disconnected",
    )
    url = reverse("individual_case_resolve", args=[case.pk])
    assert 'id="compensation-waiting"' not in as_manager.get(url).content.decode()
    compensation = compensation_propose(
        case=case,
        actor=operator,
        reason="lag",
        entries=[CompensationEntry("p000001", 500)],
    )
    html = assert_full_page(as_manager.get(url))
    warning = html[html.index('id="compensation-waiting"') :]
    assert f'href="{reverse("compensation_detail", args=[compensation.pk])}"' in warning
    # Still said on the check before resolving.
    check = assert_partial(as_manager.post(url, {"outcome": "credited"}, **HTMX), "resolve-form")
    assert 'id="compensation-waiting"' in check
