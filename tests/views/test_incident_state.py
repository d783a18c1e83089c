"""The incident page follows the incident's real state: the step it is at, and only the bulk
actions that have work to do."""

import pytest
from django.urls import reverse

from settlements.services.settlements import settlement_approve
from settlements.services.snapshots import case_withdraw
from tests.views.conftest import assert_full_page, submitted_settlements

pytestmark = pytest.mark.django_db

BULK = (
    "Prepare every ready case",
    "Submit every prepared settlement",
    "Decide alike cases together",
    "Approve settlements",
    "Close the incident",
)


def _page(client, incident) -> str:
    return assert_full_page(client.get(reverse("incident_tournaments", args=[incident.pk])))


def _offered(html: str) -> set[str]:
    actions = html[
        html.index('id="bulk-actions"') : html.index("</div>", html.index("bulk-actions"))
    ]
    return {words for words in BULK if words in actions}


def test_an_empty_incident_is_at_its_tournaments_and_offers_no_bulk_step(
    as_operator, as_manager, as_marketing, incident
):
    html = _page(as_operator, incident)
    assert 'aria-current="step">Tournaments hit' in html
    assert "no tournament loaded yet" in html and "nothing left to do" not in html
    assert _offered(html) == set()
    assert _offered(_page(as_manager, incident)) == _offered(_page(as_marketing, incident)) == set()


def test_steps_and_buttons_follow_the_cases(
    as_operator,
    as_manager,
    as_marketing,
    operator,
    tournament_manager,
    incident,
    late_cases,
    load_case,
):
    deciding = load_case(type="satellite", stage="middle", tournament_id="S-D")
    html = _page(as_operator, incident)
    assert 'aria-current="step">Stage and remedy' in html
    assert _offered(html) == {"Prepare every ready case"}
    assert _offered(_page(as_marketing, incident)) == {"Decide alike cases together"}

    case_withdraw(case=deciding, actor=operator, reason="loaded in error")
    submitted_settlements(late_cases, operator)
    html = _page(as_operator, incident)
    # Every case awaits approval: every step of reporting it is done.
    assert 'aria-current="step"' not in html and html.count('class="steps__done"') == 4
    assert _offered(html) == set()
    assert _offered(_page(as_manager, incident)) == {"Approve settlements"}

    for settlement in incident.cases.exclude(status="withdrawn"):
        settlement_approve(
            settlement=settlement.settlements.get(), actor=tournament_manager, reason="ok"
        )
    html = _page(as_operator, incident)
    assert "nothing left to do" in html and _offered(html) == {"Close the incident"}
