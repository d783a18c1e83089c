"""The "report a crash" wizard: incident details, tournaments hit, snapshot upload."""

import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from settlements.models import Case, CasePlayer, Event, Incident, Snapshot, Tournament
from settlements.services.incidents import incident_close, tournament_create
from settlements.services.snapshots import case_withdraw
from tests.conftest import build_snapshot
from tests.views.conftest import HISTORY_RESTORE, HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


def stored_counts():
    return (
        Incident.objects.count(),
        Tournament.objects.count(),
        Case.objects.count(),
        Snapshot.objects.count(),
        CasePlayer.objects.count(),
        Event.objects.count(),
    )


# --- Step 1: incident details -----------------------------------------------------------------


def test_step_one_is_a_page_and_its_form_a_partial(as_operator):
    html = assert_full_page(as_operator.get(reverse("incident_new")))
    assert 'aria-current="step">Incident details' in html
    assert 'id="incident-form"' in html and 'type="datetime-local"' in html
    assert "When players were first cut off, in UTC time." in html

    partial = assert_partial(as_operator.get(reverse("incident_new"), **HTMX), "incident-form")
    assert "Report a crash: steps" not in partial


def test_reporting_an_incident_moves_to_the_tournaments_step(as_operator, operator):
    response = as_operator.post(
        reverse("incident_new"),
        {"title": "Cluster B outage", "started_at": "2026-11-29T20:14", "description": "DB"},
    )
    incident = Incident.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("incident_tournaments", args=[incident.pk])
    assert incident.reported_by == operator and incident.description == "DB"
    assert Event.objects.filter(type=Event.Type.INCIDENT_REPORTED, incident=incident).exists()


def test_under_htmx_success_navigates_so_the_url_follows_the_step(as_operator):
    response = as_operator.post(
        reverse("incident_new"), {"title": "Outage", "started_at": "2026-11-29T20:14"}, **HTMX
    )
    incident = Incident.objects.get()
    assert response.headers["HX-Redirect"] == reverse("incident_tournaments", args=[incident.pk])


def test_an_invalid_incident_re_renders_the_form_with_errors_and_saves_nothing(as_operator):
    future = (timezone.localtime() + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    response = as_operator.post(
        reverse("incident_new"),
        {"title": "", "started_at": future, "description": "kept text"},
        **HTMX,
    )
    assert response.status_code == 422
    html = assert_partial(response, "incident-form")
    assert "This field is required." in html
    assert "An incident cannot start in the future." in html
    assert "kept text" in html
    assert Incident.objects.count() == 0

    full = as_operator.post(reverse("incident_new"), {"title": "x", "started_at": "yesterday"})
    assert full.status_code == 422
    assert "Enter a valid date/time." in assert_full_page(full)


# --- Step 2: the tournaments it hit ------------------------------------------------------------


def test_step_two_lists_the_cases_and_offers_both_ways_to_add(as_operator, incident, load_case):
    url = reverse("incident_tournaments", args=[incident.pk])
    assert 'aria-current="step">Tournaments hit' in as_operator.get(url).content.decode()
    case = load_case(type="regular", stage="middle", tournament_id="T-9")
    html = assert_full_page(as_operator.get(url))
    # Loaded, and its remedy follows from the rules: every step of the report is done.
    assert 'aria-current="step"' not in html and html.count('class="steps__done"') == 4
    assert f'href="{reverse("case_detail", args=[case.pk])}">#{case.pk}' in html
    assert f'href="{reverse("incident_upload", args=[incident.pk])}"' in html
    assert 'id="tournament-picker"' in html


def test_registered_tournaments_without_a_crash_case_can_be_picked_and_searched(
    as_operator, operator, incident, load_case
):
    load_case(type="regular", stage="middle", tournament_id="T-CRASHED")
    spare = tournament_create(
        actor=operator, operator_id="T-SPARE", type="regular", currency="EUR", name="Spare"
    )
    tournament_create(
        actor=operator, operator_id="T-OTHER", type="freeroll", currency="EUR", name="Other"
    )
    url = reverse("incident_tournaments", args=[incident.pk])
    picker = assert_partial(as_operator.get(url, {"q": "spare"}, **HTMX), "tournament-picker")
    assert "T-SPARE" in picker and "T-OTHER" not in picker and "T-CRASHED" not in picker
    upload = reverse("incident_upload", args=[incident.pk])
    assert f'href="{upload}?tournament={spare.pk}"' in picker

    everything = as_operator.get(url, **HTMX).content.decode()
    assert "T-OTHER" in everything and "T-CRASHED" not in everything


def test_other_roles_see_the_incident_but_not_the_wizard(as_manager, incident):
    html = as_manager.get(reverse("incident_tournaments", args=[incident.pk])).content.decode()
    assert "Cluster B outage" in html
    assert "Add a tournament" not in html
    assert reverse("incident_upload", args=[incident.pk]) not in html


def test_an_unknown_incident_is_not_found(as_operator):
    assert as_operator.get(reverse("incident_tournaments", args=[999])).status_code == 404
    assert as_operator.get(reverse("incident_upload", args=[999])).status_code == 404


# --- Step 3: the snapshot ----------------------------------------------------------------------


def upload_url(incident, tournament=None):
    url = reverse("incident_upload", args=[incident.pk])
    return f"{url}?tournament={tournament.pk}" if tournament else url


def test_step_three_is_a_page_with_file_and_paste_and_a_progress_bar(as_operator, incident):
    html = assert_full_page(as_operator.get(upload_url(incident)))
    assert 'aria-current="step">Snapshot' in html
    assert 'type="file"' in html and 'name="text"' in html
    assert 'hx-encoding="multipart/form-data"' in html
    assert '<progress id="upload-progress"' in html and 'data-progress="upload-progress"' in html


def test_a_pasted_snapshot_opens_its_case(as_operator, incident, snapshot_factory):
    text = snapshot_factory(type="regular", stage="middle", tournament_id="T-PASTE").decode()
    response = as_operator.post(upload_url(incident), {"text": text}, **HTMX)
    case = Case.objects.get()
    assert response.headers["HX-Redirect"] == reverse("case_detail", args=[case.pk])
    assert case.incident == incident and case.tournament.operator_id == "T-PASTE"
    assert case.snapshot.text == text


def test_an_uploaded_snapshot_file_opens_its_case(as_operator, incident, snapshot_factory):
    data = snapshot_factory(type="satellite", stage="middle", tournament_id="S-FILE")
    upload = SimpleUploadedFile("crash.json", data, content_type="application/json")
    response = as_operator.post(upload_url(incident), {"file": upload})
    case = Case.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("case_detail", args=[case.pk])
    assert case.snapshot.size_bytes == len(data)


def test_a_bad_snapshot_lists_every_problem_saves_nothing_and_keeps_the_text(as_operator, incident):
    document = build_snapshot(type="regular", stage="middle", tournament_id="T-BAD")
    document["tournament"]["seat_value"] = 100
    text = json.dumps(document, indent=1)
    before = stored_counts()

    response = as_operator.post(upload_url(incident), {"text": text}, **HTMX)

    assert response.status_code == 422
    html = assert_partial(response, "upload-form")
    assert 'id="snapshot-problems"' in html
    assert "Nothing was saved" in html
    assert "<td>tournament.seat_value</td>" in html
    # The pasted text comes back exactly (escaped), so it can be fixed in place.
    assert escape(text) in html
    assert stored_counts() == before


def test_every_problem_of_a_snapshot_has_its_own_row(as_operator, incident):
    document = build_snapshot(type="regular", stage="middle", tournament_id="T-BAD2")
    document["players"][1]["chips"] = -5
    document["players"][3]["chips"] = -1
    response = as_operator.post(upload_url(incident), {"text": json.dumps(document)})
    html = assert_full_page(response)
    assert "<td>players[1].chips</td>" in html
    assert "<td>players[3].chips</td>" in html
    assert "2 problems" in html


def test_every_format_problem_of_a_file_is_listed_with_the_player_it_concerns(
    as_operator, incident
):
    document = build_snapshot(type="regular", stage="middle", tournament_id="T-FMT")
    document["tournament"]["fee"] = 1.5
    document["tournament"]["stack"] = 3
    document["tournament"]["name"] = 7
    document["players"][2]["chips"] = "12"
    document["players"][4]["chips"] = True
    player_2, player_4 = document["players"][2]["id"], document["players"][4]["id"]
    response = as_operator.post(upload_url(incident), {"text": json.dumps(document)}, **HTMX)
    html = assert_partial(response, "upload-form")
    assert "5 problems" in html
    for path in ("tournament.fee", "tournament.stack", "tournament.name"):
        assert f'<td>{path}</td><td class="mono"></td>' in html
    assert f'<td>players[2].chips</td><td class="mono">{player_2}</td>' in html
    assert f'<td>players[4].chips</td><td class="mono">{player_4}</td>' in html


def test_a_repeated_player_id_names_the_id_and_its_first_row(as_operator, incident):
    document = build_snapshot(type="regular", stage="middle", tournament_id="T-DUP")
    repeated = document["players"][1]["id"]
    document["players"][5]["id"] = repeated
    response = as_operator.post(upload_url(incident), {"text": json.dumps(document)})
    html = assert_full_page(response)
    assert f'<td>players[5].id</td><td class="mono">{repeated}</td>' in html
    assert f"repeats the id “{repeated}” of players[1]" in html


def test_invalid_json_is_reported_at_the_document(as_operator, incident):
    response = as_operator.post(upload_url(incident), {"text": '{"format": '})
    assert response.status_code == 422
    html = response.content.decode()
    assert 'id="snapshot-problems"' in html
    assert "{&quot;format&quot;: " in html
    assert Case.objects.count() == 0


def test_nothing_or_both_given_is_a_form_error(as_operator, incident, snapshot_factory):
    nothing = as_operator.post(upload_url(incident), {"text": "  "}, **HTMX)
    assert nothing.status_code == 422
    assert "Choose the snapshot file or paste its JSON." in nothing.content.decode()

    data = snapshot_factory()
    both = as_operator.post(
        upload_url(incident),
        {"text": data.decode(), "file": SimpleUploadedFile("s.json", data)},
    )
    assert both.status_code == 422
    html = both.content.decode()
    assert "choose a file or paste it, not both" in html
    assert "You chose" in html and "s.json" in html
    assert Case.objects.count() == 0


def test_a_tournament_loaded_twice_points_to_its_existing_case(
    as_operator, incident, load_case, snapshot_factory
):
    case = load_case(type="regular", stage="middle", tournament_id="T-TWICE")
    before = stored_counts()
    response = as_operator.post(
        upload_url(incident),
        {
            "text": snapshot_factory(
                type="regular", stage="middle", tournament_id="T-TWICE"
            ).decode()
        },
    )
    assert response.status_code == 422
    html = response.content.decode()
    assert "already has a crash case" in html
    assert f'href="{reverse("case_detail", args=[case.pk])}">Open case #{case.pk}' in html
    assert stored_counts() == before


def test_a_picked_tournament_must_match_the_snapshot(
    as_operator, operator, incident, snapshot_factory
):
    picked = tournament_create(
        actor=operator, operator_id="T-PICKED", type="regular", currency="USD"
    )
    page = as_operator.get(upload_url(incident, picked)).content.decode()
    assert "T-PICKED" in page
    before = stored_counts()
    response = as_operator.post(
        upload_url(incident, picked),
        {"text": snapshot_factory(type="regular", stage="middle", tournament_id="T-ELSE").decode()},
    )
    assert response.status_code == 422
    assert "This snapshot is about tournament T-ELSE, not T-PICKED." in response.content.decode()
    assert stored_counts() == before

    ok = as_operator.post(
        upload_url(incident, picked),
        {
            "text": snapshot_factory(
                type="regular", stage="middle", tournament_id="T-PICKED"
            ).decode()
        },
    )
    assert ok.status_code == 302
    assert Case.objects.get().tournament == picked


def test_a_closed_incident_takes_no_more_snapshots(
    as_operator, operator, incident, snapshot_factory
):
    incident_close(incident=incident, actor=operator)
    response = as_operator.post(upload_url(incident), {"text": snapshot_factory().decode()})
    assert response.status_code == 422
    assert "is closed" in response.content.decode()
    assert Case.objects.count() == 0


def test_reload_of_each_step_gives_the_whole_page(as_operator, incident):
    for url in (
        reverse("incident_new"),
        reverse("incident_tournaments", args=[incident.pk]),
        upload_url(incident),
    ):
        assert_full_page(as_operator.get(url, **HISTORY_RESTORE))


def test_the_workbench_lists_filters_sorts_and_pages_every_case(
    as_auditor, incident, late_cases, load_case
):
    load_case(type="satellite", stage="middle", tournament_id="S1")
    url = reverse("incident_tournaments", args=[incident.pk])
    html = assert_full_page(as_auditor.get(url))
    assert 'id="incident-counts"' in html and "Choose the remedy" in html
    assert "Marketing Manager" in html and "Prepare the settlement" in html
    partial = assert_partial(
        as_auditor.get(url, {"status": "awaiting_decision"}, HTTP_HX_TARGET="workbench", **HTMX),
        "workbench",
    )
    assert "S1" in partial and "L0" not in partial
    page = as_auditor.get(url, {"sort": "-tournament"}).content.decode()
    # Read within the list: a nonce or token in the page head may hold "L2" by chance.
    by_entrants = page[page.index('id="workbench"') :]
    assert by_entrants.index("S1") < by_entrants.index("L2") < by_entrants.index("L0")


def test_close_an_incident_only_when_its_work_is_done(as_operator, incident, load_case):
    url = reverse("incident_close", args=[incident.pk])
    case = load_case(stage="late")
    assert "still need" in assert_full_page(as_operator.get(url))
    case_withdraw(case=case, actor=case.created_by, reason="wrong file")
    response = as_operator.post(url, {"reason": "all settled"}, **HTMX)
    assert response.status_code == 200 and response.headers["HX-Redirect"]
    incident.refresh_from_db()
    assert not incident.is_open
    assert Event.objects.filter(type=Event.Type.INCIDENT_CLOSED, reason="all settled").exists()


def test_a_rebuy_knock_out_snapshot_file_opens_its_case(as_operator, incident, snapshot_factory):
    data = snapshot_factory(stage="late", tournament_id="KO-FILE", rebuys=True)
    upload = SimpleUploadedFile("ko.json", data, content_type="application/json")
    response = as_operator.post(upload_url(incident), {"file": upload})
    case = Case.objects.get()
    assert response.status_code == 302 and case.entrants_digest
