"""Times and whole numbers typed into forms and URLs are checked against settlements.bounds:
refused at their field or parameter, never a server error, nothing written."""

from datetime import UTC, datetime

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from settlements.models import Decision, Incident, Tournament
from tests.services.helpers import row_counts
from tests.views.conftest import HTMX, submitted_settlements

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = "between 0001-01-02 and 9999-12-30 (UTC)"


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Tokyo"])
def test_an_incident_starting_where_no_time_can_be_shown_is_refused_at_its_field(
    as_operator, settings, zone
):
    settings.TIME_ZONE = zone
    before = row_counts()
    response = as_operator.post(
        reverse("incident_new"), {"title": "Year one", "started_at": "0001-01-01T00:00"}, **HTMX
    )
    assert response.status_code == 422
    errors = response.context["form"].errors
    assert list(errors) == ["started_at"] and OUT_OF_RANGE in errors["started_at"][0]
    assert row_counts() == before


def test_a_reschedule_where_no_time_can_be_shown_is_refused_at_its_field(
    as_marketing, load_case, settings
):
    settings.TIME_ZONE = "America/New_York"
    case = load_case(type="freeroll", stage="middle", tournament_id="F-9999")
    data = {
        "option": "reschedule",
        "reason": "Players asked for it",
        "reschedule_at": "9999-12-31T23:00",
        "step": "confirm",
    }
    response = as_marketing.post(reverse("case_decision", args=[case.pk]), data, **HTMX)
    assert response.status_code == 422
    errors = response.context["form"].errors
    assert list(errors) == ["reschedule_at"] and OUT_OF_RANGE in errors["reschedule_at"][0]
    assert not Decision.objects.exists()


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ({"until": "9999-12-31"}, "until", OUT_OF_RANGE),
        ({"since": "0001-01-01"}, "since", OUT_OF_RANGE),
        ({"incident": "١"}, "incident", "digits 0-9"),
        ({"case": "²"}, "case", "digits 0-9"),
        ({"case": "9" * 25}, "case", "digits 0-9"),
    ],
)
def test_history_filters_beyond_the_bounds_are_named(as_auditor, query, field, message):
    for url in (reverse("history"), reverse("history_export")):
        response = as_auditor.get(url, query)
        if url == reverse("history"):
            assert response.status_code == 422
            errors = response.context["form"].errors
            assert list(errors) == [field] and message in errors[field][0]
        else:
            # The export of filters the page refuses is not a file; the page names them.
            assert response.status_code == 404


@pytest.mark.parametrize("page", ["9" * 30, str(2**63), "²", "١", "-1", "0"])
def test_any_page_number_answers_a_page(as_auditor, as_operator, incident, page):
    assert as_auditor.get(reverse("history"), {"page": page}).status_code == 200
    assert as_auditor.get(reverse("dashboard"), {"page": page}).status_code == 200
    url = reverse("incident_tournaments", args=[incident.pk])
    assert as_operator.get(url, {"page": page}).status_code == 200


@pytest.mark.parametrize("tournament", ["²", "١", "+1", "9" * 30])
def test_a_picked_tournament_that_is_not_a_number_is_not_found(as_operator, incident, tournament):
    url = reverse("incident_upload", args=[incident.pk])
    assert as_operator.get(url, {"tournament": tournament}).status_code == 404


def test_a_nul_in_any_query_parameter_is_a_bad_request(as_operator, as_auditor, incident):
    url = reverse("incident_tournaments", args=[incident.pk])
    response = as_operator.get(url, {"q": "a\x00b"})
    assert response.status_code == 400
    assert response.content.decode() == "?q must not contain the NUL character.\n"
    assert as_auditor.get(reverse("history"), {"tournament": "\x00"}).status_code == 400
    assert Incident.objects.count() == 1


@pytest.mark.parametrize("incident", ["²", "١", "9" * 30, "-1"])
def test_a_full_queue_filtered_by_an_incident_that_is_not_a_number_shows_it_all(
    as_operator, incident
):
    response = as_operator.get(reverse("queue", args=["to_prepare"]), {"incident": incident})
    assert response.status_code == 200
    assert response.context["incident"] == ""


def test_the_admin_checks_the_times_it_may_edit_the_same_way(operator, incident):
    """The admin edits an incident's start and a tournament's schedule through model
    validation; the bounds are the services'."""
    incident.started_at = datetime(1, 1, 1, tzinfo=UTC)
    with pytest.raises(ValidationError) as refused:
        incident.full_clean()
    assert OUT_OF_RANGE in refused.value.message_dict["started_at"][0]
    tournament = Tournament(operator_id="T-ADMIN", type="regular", currency="USD")
    tournament.scheduled_start = datetime(9999, 12, 31, 12, tzinfo=UTC)
    with pytest.raises(ValidationError) as refused:
        tournament.full_clean()
    assert list(refused.value.message_dict) == ["scheduled_start"]


def test_a_reschedule_of_many_cases_where_no_time_can_be_shown_is_refused_before_any_job(
    as_marketing, load_case, settings
):
    """The decision of many cases is recorded by a job: the form let such a date through, and
    the job then failed every case one by one."""
    settings.TIME_ZONE = "America/New_York"
    cases = [load_case(type="freeroll", stage="early", tournament_id=f"FB{n}") for n in range(2)]
    data = {
        "selection": ",".join(str(case.pk) for case in cases),
        "option": "reschedule",
        "reason": "Players asked for it",
    }
    url = reverse("incident_decide", args=[cases[0].incident_id])
    before = row_counts()
    for when in ("9999-12-31T23:00", "0001-01-01T00:00", "10000-01-01T00:00", "2027-02-30T10:00"):
        response = as_marketing.post(url, {**data, "reschedule_at": when}, **HTMX)
        assert response.status_code == 422, when
        errors = response.context["form"].errors
        assert list(errors) == ["reschedule_at"], when
    assert row_counts() == before


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("x" * 1_000_000, "at most 5000 characters"),
        ("a\x00b", "Null characters are not allowed"),
        (" \n\t", "This field is required"),
    ],
)
def test_a_reason_for_many_approvals_that_cannot_be_kept_is_refused_at_its_field(
    as_manager, operator, incident, load_case, reason, message
):
    """A reason is kept with every settlement approved: 1 MB of it was taken, and repeated."""
    cases = [load_case(stage="late", tournament_id=f"R{n}") for n in range(2)]
    settlements = submitted_settlements(cases, operator)
    before = row_counts()
    response = as_manager.post(
        reverse("incident_approve", args=[incident.pk]),
        {
            "selection": ",".join(str(s.pk) for s in settlements),
            "reason": reason,
            "step": "confirm",
        },
        **HTMX,
    )
    assert response.status_code == 422
    errors = response.context["form"].errors
    assert list(errors) == ["reason"] and message in errors["reason"][0]
    assert row_counts() == before


@pytest.mark.parametrize("incident", ["²", "١", "9" * 30, "-1", "1e3"])
def test_payment_pages_filtered_by_an_incident_that_is_not_a_number_find_none(as_auditor, incident):
    """ "²" passed str.isdigit() and failed int(): a server error on four pages."""
    for name in ("payments", "payments_audit", "payments_audit_export"):
        assert as_auditor.get(reverse(name), {"incident": incident}).status_code == 404


@pytest.mark.parametrize("after", ["²", "١", "9" * 30, "-1", "x"])
def test_the_overdue_lines_after_a_place_that_is_not_a_number_start_at_the_first(as_auditor, after):
    response = as_auditor.get(reverse("payments"), {"tab": "overdue", "after": after})
    assert response.status_code == 200 and response.context["after"] == 0


def test_a_query_parameter_given_twice_is_a_bad_request(as_operator, incident):
    url = reverse("incident_tournaments", args=[incident.pk])
    response = as_operator.get(f"{url}?q=a&q=b")
    assert response.status_code == 400
    assert response.content.decode() == "?q must be given once.\n"
    assert as_operator.get(f"{url}?q=a").status_code == 200
