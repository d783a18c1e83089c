"""The case page: stage with its numbers, the remedy or the hand-off, and preparing."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from settlements.models import Job, Settlement
from settlements.services import settlements as settlement_services
from settlements.services.decisions import decision_record
from settlements.services.individual_cases import individual_case_open
from settlements.workflow import CaseStatus
from tests.views.conftest import HISTORY_RESTORE, HTMX, assert_full_page, assert_partial, job_of

pytestmark = pytest.mark.django_db


def test_case_page_shows_the_stage_with_its_numbers_and_the_bar(as_operator, load_case):
    # 20 entrants, 10 eliminated, 3 paid places: middle stage.
    case = load_case(type="regular", stage="middle", tournament_id="T-MID", entrants=20)
    html = assert_full_page(as_operator.get(reverse("case_detail", args=[case.pk])))
    assert f"Case #{case.pk}: T-MID" in html
    assert "Stage: Middle" in html
    for label, value in [
        ("Entrants (N)", 20),
        ("Eliminated (E)", 10),
        ("Remaining (R)", 10),
        ("Paid places (M)", 3),
    ]:
        assert f"<dt>{label}</dt><dd>{value}</dd>" in html
    assert "<dt>Eliminated</dt><dd>50 %</dd>" in html
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in html
    assert "This case: 50 %" in html and "In the money (85 %)" in html
    assert "10 of 20 entrants eliminated (50 %)" in html  # the text alternative
    assert 'aria-current="page">Case #' in html
    assert f'href="{reverse("incident_tournaments", args=[case.incident.pk])}"' in html


def test_a_case_needing_no_decision_shows_its_remedy_and_lets_an_operator_prepare(
    as_operator, as_manager, load_case
):
    case = load_case(type="regular", stage="middle", tournament_id="T-READY")
    html = as_operator.get(reverse("case_detail", args=[case.pk])).content.decode()
    assert "Remedy: Chip equity split" in html
    assert f'action="{reverse("case_prepare", args=[case.pk])}"' in html
    assert "Prepare the settlement" in html

    manager = as_manager.get(reverse("case_detail", args=[case.pk])).content.decode()
    assert "Remedy: Chip equity split" in manager
    assert "Prepare the settlement" not in manager
    assert "An operator prepares the settlement next." in manager


def test_a_case_awaiting_a_decision_hands_off_to_marketing(as_operator, load_case):
    case = load_case(type="satellite", stage="middle", tournament_id="S-DEC")
    html = as_operator.get(reverse("case_detail", args=[case.pk])).content.decode()
    assert "Waiting for the Marketing Manager’s decision" in html
    assert "Split in proportion to chips or Split by chip equity" in html
    assert "Prepare the settlement" not in html
    assert 'data-status="awaiting_decision">Awaiting decision</span>' in html


def test_after_a_decision_the_remedy_follows_it(as_operator, marketing_manager, load_case):
    case = load_case(type="satellite", stage="middle", tournament_id="S-DONE")
    decision_record(
        case=case, actor=marketing_manager, option="chip_proportional", reason="Site custom"
    )
    html = as_operator.get(reverse("case_detail", args=[case.pk])).content.decode()
    assert "Remedy: Chip proportional split" in html
    assert "Split in proportion to chips. “Site custom”" in html
    assert "Prepare the settlement" in html


def test_late_stage_remedy_follows_the_policy_formula(as_operator, load_case):
    case = load_case(type="regular", stage="late", tournament_id="T-LATE")
    html = as_operator.get(reverse("case_detail", args=[case.pk])).content.decode()
    assert "Stage: Late" in html and "Remedy: Chip equity split" in html


def test_the_next_step_is_a_partial_under_htmx_and_whole_on_history_restore(as_operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-PART")
    url = reverse("case_detail", args=[case.pk])
    partial = assert_partial(as_operator.get(url, **HTMX), "case-next-step")
    assert "Stage: Middle" not in partial
    assert_full_page(as_operator.get(url, **HISTORY_RESTORE))


def test_preparing_stores_a_settlement_and_returns_to_the_case(as_operator, operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-PREP")
    response = as_operator.post(reverse("case_prepare", args=[case.pk]), {"note": "checked"})
    settlement = Settlement.objects.get(case=case)
    assert response.status_code == 302
    assert response.url == reverse("case_detail", args=[case.pk])
    assert settlement.prepared_by == operator and settlement.note == "checked"

    html = as_operator.get(response.url).content.decode()
    assert f"Settlement #{settlement.pk} prepared." in html
    assert 'data-status="prepared">Prepared</span>' in html
    assert "Prepare the settlement" not in html


def test_preparing_under_htmx_navigates_to_the_case(as_operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-HX")
    response = as_operator.post(reverse("case_prepare", args=[case.pk]), **HTMX)
    assert response.headers["HX-Redirect"] == reverse("case_detail", args=[case.pk])


def test_preparing_a_case_that_awaits_a_decision_is_refused_in_place(as_operator, load_case):
    case = load_case(type="freeroll", stage="middle", tournament_id="F-WAIT")
    response = as_operator.post(reverse("case_prepare", args=[case.pk]), **HTMX)
    assert response.status_code == 422
    html = assert_partial(response, "case-next-step")
    assert "Cannot prepare a settlement for" in html and "awaiting decision" in html
    assert not Settlement.objects.exists()
    case.refresh_from_db()
    assert case.status == CaseStatus.AWAITING_DECISION


def test_preparing_needs_a_post(as_operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-GET")
    assert as_operator.get(reverse("case_prepare", args=[case.pk])).status_code == 405


def test_an_unknown_case_is_not_found(as_operator):
    assert as_operator.get(reverse("case_detail", args=[999])).status_code == 404


@pytest.mark.parametrize(
    ("target", "inside", "outside"),
    [
        ("case-stage", "Stage: Middle", "Remedy:"),
        ("case-settlements", "No settlement yet.", "Stage: Middle"),
        ("case-next-step", "Remedy: Chip equity split", "Stage: Middle"),
    ],
)
def test_each_swap_target_of_the_case_page_gets_its_own_partial(
    as_operator, load_case, target, inside, outside
):
    case = load_case(type="regular", stage="middle", tournament_id=f"T-{target}")
    response = as_operator.get(
        reverse("case_detail", args=[case.pk]), **HTMX, HTTP_HX_TARGET=target
    )
    html = assert_partial(response, target)
    assert inside in html and outside not in html


def case_url(case) -> str:
    return reverse("case_detail", args=[case.pk])


def test_a_rejected_case_says_who_rejected_it_and_why(
    as_operator, operator, tournament_manager, load_case
):
    case = load_case(type="regular", stage="middle", tournament_id="T-REJ")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_reject(
        settlement=settlement, actor=tournament_manager, reason="Chip counts look stale."
    )
    html = assert_full_page(as_operator.get(case_url(case)))
    assert 'id="case-rejection"' in html
    assert f"{settlement}</a> was rejected</strong> by manager on" in html
    assert "“Chip counts look stale.”" in html
    assert "Prepare the settlement" in html  # and it can be prepared anew


def test_a_rescheduled_freeroll_shows_its_new_date_and_invitations(
    as_operator, operator, marketing_manager, load_case, settings
):
    settings.TIME_ZONE = "UTC"
    case = load_case(type="freeroll", stage="middle", entrants=60, tournament_id="F-NEW")
    new_date = (timezone.now() + timedelta(days=7)).replace(
        hour=20, minute=0, second=0, microsecond=0
    )
    decision_record(
        case=case,
        actor=marketing_manager,
        option="reschedule",
        reason="Prime time crash",
        reschedule_at=new_date,
    )
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    shown = new_date.strftime("%-d %b %Y, 20:00 UTC")
    for url in (case_url(case), reverse("settlement_review", args=[settlement.pk])):
        html = assert_full_page(as_operator.get(url))
        assert f"Rescheduled to {shown}" in html
        assert "the 30 players still holding chips at the crash" in html
        assert "p000001" in html and "p000021" not in html  # 20 a page
        assert "Page 1 of 2" in html
        page2 = assert_partial(
            as_operator.get(f"{url}?invite_page=2", **HTMX, HTTP_HX_TARGET="invitations"),
            "invitations",
        )
        assert "p000021" in page2 and "p000030" in page2 and "p000031" not in page2


def test_a_hand_picked_invitation_list_is_shown_as_picked(
    as_operator, marketing_manager, load_case
):
    case = load_case(type="freeroll", stage="early", entrants=20, tournament_id="F-PICKED")
    decision_record(
        case=case,
        actor=marketing_manager,
        option="reschedule",
        reason="Only one table",
        reschedule_at=timezone.now() + timedelta(days=2),
        invited_players=["p000004", "p000002"],
    )
    html = as_operator.get(case_url(case)).content.decode()
    assert "the 2 players the Marketing Manager listed" in html
    assert html.index("p000004</td>") < html.index("p000002</td>")


def test_an_individual_case_shows_no_crash_panels(as_manager, tournament_manager, load_case):
    crash = load_case(type="regular", stage="middle", tournament_id="T-IND")
    case = individual_case_open(
        tournament=crash.tournament,
        actor=tournament_manager,
        players=["p000001"],
        description="Disconnected at the final table.",
    )
    html = assert_full_page(as_manager.get(case_url(case)))
    assert 'id="case-individual"' in html
    assert 'id="case-next-step"' not in html and "Next step" not in html
    assert 'id="case-settlements"' not in html and "No settlement yet" not in html


def test_each_case_shows_the_bar_of_its_own_figures(as_operator, load_case):
    from django.template.loader import render_to_string

    from settlements import charts
    from settlements.rules import Policy
    from settlements.selectors.cases import case_detail

    early = load_case(type="regular", stage="early", tournament_id="T-BAR1", entrants=20)
    middle = load_case(type="regular", stage="middle", tournament_id="T-BAR2", entrants=40)
    for case in (early, middle, early):
        case = case_detail(case.pk)
        bar = charts.stage_bar(
            entrants=case.entrants,
            eliminated=case.eliminated,
            paid_places=case.paid_places,
            policy=Policy(**case.policy),
        )
        html = as_operator.get(reverse("case_detail", args=[case.pk])).content.decode()
        assert render_to_string("settlements/charts/stage_bar.html", {"bar": bar}) in html


def test_a_large_case_is_prepared_in_the_background_and_not_twice(
    settings, as_operator, operator, load_case
):
    settings.PREPARE_INLINE_MAX_ENTRANTS = 10
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    case = load_case(stage="late", entrants=40)
    url = reverse("case_prepare", args=[case.pk])
    first = job_of(as_operator.post(url, {"note": "big one"}))
    assert first.status == Job.Status.QUEUED and first.params == {"note": "big one"}
    page = as_operator.get(reverse("case_detail", args=[case.pk])).content.decode()
    assert 'id="case-preparing"' in page and 'action="/cases/' not in page
    assert job_of(as_operator.post(url)) == first
    assert Job.objects.count() == 1
