"""POST /api/v1/snapshots: the same parser and service as the upload, answered in JSON."""

import io
import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from settlements.access import roles
from settlements.models import Case, Incident
from settlements.services.incidents import incident_close, incident_report
from tests.api.conftest import bearer, post_snapshot
from tests.conftest import build_snapshot
from tests.services.helpers import row_counts

pytestmark = pytest.mark.django_db

URL = "/api/v1/snapshots"


class ExplodingStream(io.RawIOBase):
    """A request body that fails the test if anybody reads it."""

    def read(self, size=-1):
        raise AssertionError("the body was read")

    readline = read


class CountingStream(io.BytesIO):
    def __init__(self, data: bytes):
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size=-1):
        chunk = super().read(size)
        self.bytes_read += len(chunk)
        return chunk


def raw_post(client: Client, token: str | None, stream, length: str | None, url: str = URL):
    environ = {"wsgi.input": stream}
    if length is not None:
        environ["CONTENT_LENGTH"] = length
    if token:
        environ.update(bearer(token))
    return client.generic("POST", url, b"", content_type="application/json", **environ)


# --- Success ---------------------------------------------------------------------------------


def test_a_snapshot_opens_a_case_and_an_incident_named_after_the_tournament(
    api, operator_token, operator, snapshot_factory
):
    data = snapshot_factory(type="satellite", stage="middle", tournament_id="SAT-7", name="Sat")
    response = post_snapshot(api, operator_token, data)

    assert response.status_code == 201
    assert response["Content-Type"] == "application/json"
    body = response.json()
    case = Case.objects.get()
    assert body == {
        "case": case.pk,
        "url": f"http://testserver/api/v1/cases/{case.pk}",
        "incident": case.incident_id,
        "stage": "middle",
        "status": "awaiting_decision",
        "decision_options": ["chip_proportional", "chip_equity"],
    }
    assert response["Location"] == f"/api/v1/cases/{case.pk}"
    assert case.created_by == operator and case.snapshot.text == data.decode()
    assert case.incident.title == "Crash of Sat" and case.incident.reported_by == operator
    assert "no-store" in response["Cache-Control"]


def test_a_case_that_needs_no_decision_is_ready(api, operator_token, snapshot_factory):
    response = post_snapshot(api, operator_token, snapshot_factory(type="regular", stage="late"))
    assert response.status_code == 201
    assert response.json()["status"] == "ready"
    assert response.json()["decision_options"] == []


def test_a_snapshot_can_join_an_open_incident(api, operator_token, operator, snapshot_factory):
    incident = incident_report(
        actor=operator, title="Cluster A", started_at=timezone.now() - timedelta(minutes=5)
    )
    for number in (1, 2):
        data = snapshot_factory(tournament_id=f"T-{number}")
        response = post_snapshot(api, operator_token, data, f"?incident={incident.pk}")
        assert response.status_code == 201
        assert response.json()["incident"] == incident.pk
    assert Incident.objects.count() == 1
    assert incident.cases.count() == 2


def test_a_closed_incident_takes_no_snapshot(api, operator_token, operator, snapshot_factory):
    incident = incident_report(
        actor=operator, title="Over", started_at=timezone.now() - timedelta(hours=2)
    )
    incident_close(incident=incident, actor=operator)
    before = row_counts()
    response = post_snapshot(api, operator_token, snapshot_factory(), f"?incident={incident.pk}")
    assert response.status_code == 409
    [error] = response.json()["errors"]
    assert error["path"] == "?incident" and "closed" in error["message"]
    assert row_counts() == before


@pytest.mark.parametrize(
    "value", ["999", "abc", "-1", "1.5", "", "9" * 40, "%C2%B2", "%D9%A1", "%EF%BC%91", "+1"]
)
def test_an_unknown_incident_is_refused_by_its_parameter(
    api, operator_token, snapshot_factory, value
):
    before = row_counts()
    response = post_snapshot(api, operator_token, snapshot_factory(), f"?incident={value}")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "?incident"
    assert row_counts() == before


@pytest.mark.parametrize(
    "crashed_at",
    [
        "0001-01-01T00:00:00+00:01",  # before year 1 in UTC: PostgreSQL keeps it, Python can't
        "9999-12-31T23:59:59-00:01",  # after year 9999 in UTC
        "0001-01-01T12:00:00Z",  # shown in a zone behind UTC, it would be year 0
        "9999-12-31T23:59:60Z",  # a leap second past the end
    ],
)
def test_a_crash_time_that_cannot_be_stored_and_shown_is_refused_at_its_path(
    api, operator_token, crashed_at
):
    doc = build_snapshot(tournament_id="EDGE")
    doc["crashed_at"] = crashed_at
    before = row_counts()
    response = post_snapshot(api, operator_token, json.dumps(doc).encode())
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["path"] == "crashed_at"
    assert "between 0001-01-02 and 9999-12-30 (UTC)" in error["message"]
    assert row_counts() == before


@pytest.mark.parametrize(
    ("crashed_at", "stored"),
    [
        ("0001-01-02T00:00:00Z", "0001-01-02T00:00:00+00:00"),
        ("0001-01-02T23:59:00+23:59", "0001-01-02T00:00:00+00:00"),
        # The upper bound (9999-12-30) is in the future, refused as such: microseconds kept.
        ("2026-11-30T23:59:59.999999Z", "2026-11-30T23:59:59.999999+00:00"),
        ("2016-12-31T23:59:60Z", "2017-01-01T00:00:00+00:00"),
    ],
)
def test_crash_times_at_the_edges_are_kept_and_shown(
    api, operator_token, tokens, crashed_at, stored
):
    doc = build_snapshot(tournament_id="EDGE")
    doc["crashed_at"] = crashed_at
    response = post_snapshot(api, operator_token, json.dumps(doc).encode())
    assert response.status_code == 201, response.content
    case = api.get(response["Location"], **bearer(tokens[roles.AUDITOR]))
    assert case.json()["crashed_at"] == stored


# --- Invalid snapshots -----------------------------------------------------------------------


def test_every_problem_is_listed_with_its_path_and_nothing_is_stored(api, operator_token):
    snapshot = build_snapshot(type="regular", stage="late")
    snapshot["tournament"]["payouts"] = [5000, 3000]
    snapshot["tournament"]["seat_value"] = 10
    snapshot["players"][3]["chips"] = -5
    before = row_counts()

    response = post_snapshot(api, operator_token, json.dumps(snapshot).encode())

    assert response.status_code == 400
    errors = response.json()["errors"]
    paths = {error["path"] for error in errors}
    assert "tournament.seat_value" in paths or "players[3].chips" in paths
    assert all(error["path"] and error["message"] for error in errors)
    assert row_counts() == before


def test_format_problems_come_all_at_once_naming_the_player(api, operator_token):
    snapshot = build_snapshot(type="regular", stage="late")
    snapshot["tournament"]["fee"] = 2.5
    snapshot["players"][3]["chips"] = 1.5
    response = post_snapshot(api, operator_token, json.dumps(snapshot).encode())
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"path": "tournament.fee", "message": "must be an integer, not a decimal number"},
        {
            "path": "players[3].chips",
            "message": "must be an integer, not a decimal number",
            "player": snapshot["players"][3]["id"],
        },
    ]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (b"", "$"),
        (b"{", "$"),
        (b"[]", "$"),
        (b"null", "$"),
        (b'\xff\xfe{"a": 1}', "$"),
        (b'{"format": "crash-snapshot/1", "tournament": {}, "players": [], "x": 1}', None),
    ],
)
def test_broken_documents_are_refused_with_a_path(api, operator_token, body, path):
    before = row_counts()
    response = raw_post(api, operator_token, io.BytesIO(body), str(len(body)))
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert errors and all(isinstance(e["path"], str) and e["path"] for e in errors)
    if path is not None:
        assert errors[0]["path"] == path
    assert row_counts() == before


def test_what_the_database_cannot_hold_is_refused_by_path(api, operator_token):
    snapshot = build_snapshot(stage="late")
    snapshot["players"][0]["id"] = "p" * 201
    response = post_snapshot(api, operator_token, json.dumps(snapshot).encode())
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "players[0].id"
    assert not Case.objects.exists()


# --- Duplicates ------------------------------------------------------------------------------


def test_the_same_snapshot_twice_points_at_the_case_it_opened(
    api, operator_token, snapshot_factory
):
    data = snapshot_factory(tournament_id="T-42")
    first = post_snapshot(api, operator_token, data).json()
    before = row_counts()

    response = post_snapshot(api, operator_token, data)

    assert response.status_code == 409
    body = response.json()
    assert body["case"] == first["case"] and body["url"] == first["url"]
    assert body["same_snapshot"] is True
    [error] = body["errors"]
    assert error["path"] == "tournament.id"
    assert "T-42" in error["message"] and f"#{first['case']}" in error["message"]
    assert row_counts() == before


def test_another_snapshot_of_a_loaded_tournament_is_a_conflict_too(
    api, operator_token, snapshot_factory
):
    first = post_snapshot(api, operator_token, snapshot_factory(tournament_id="T-42")).json()
    before = row_counts()
    other = snapshot_factory(tournament_id="T-42", stage="late")
    response = post_snapshot(api, operator_token, other)
    assert response.status_code == 409
    assert response.json()["case"] == first["case"]
    assert response.json()["same_snapshot"] is False
    assert row_counts() == before


# --- Size ------------------------------------------------------------------------------------


def test_an_oversized_body_is_refused_by_its_declared_length_unread(api, operator_token, settings):
    settings.SNAPSHOT_MAX_BYTES = 10_000
    before = row_counts()
    response = raw_post(api, operator_token, ExplodingStream(), str(10**9))
    assert response.status_code == 413
    assert response.json()["errors"][0]["path"] == "$"
    assert "1,000,000,000 bytes" in response.json()["errors"][0]["message"]
    assert row_counts() == before


def test_the_limit_is_exact(api, operator_token, settings, snapshot_factory):
    data = snapshot_factory(stage="late")
    settings.SNAPSHOT_MAX_BYTES = len(data)
    padded = data + b" "
    response = post_snapshot(api, operator_token, padded)
    assert response.status_code == 413
    assert post_snapshot(api, operator_token, data).status_code == 201


def test_the_default_limit_admits_a_300000_entrant_snapshot(settings):
    entrant = json.dumps({"id": "p000123", "chips": 12345678}) + ", "
    needed = 300_000 * len(entrant) + 1000
    assert needed < settings.SNAPSHOT_MAX_BYTES


def test_a_body_longer_than_declared_is_not_read_beyond_the_declared_length(
    api, operator_token, snapshot_factory
):
    data = snapshot_factory(stage="late") + b" " * 1_000_000
    stream = CountingStream(data)
    response = raw_post(api, operator_token, stream, "100")
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] == "$"
    assert stream.bytes_read <= 100
    assert not Case.objects.exists()


def test_a_missing_length_asks_for_one(api, operator_token, snapshot_factory):
    response = raw_post(api, operator_token, CountingStream(snapshot_factory()), None)
    assert response.status_code == 411
    assert not Case.objects.exists()


def test_an_oversized_form_upload_is_refused_before_the_csrf_check_reads_it(operator, settings):
    incident = incident_report(
        actor=operator, title="Cluster C", started_at=timezone.now() - timedelta(minutes=5)
    )
    settings.SNAPSHOT_MAX_BYTES = 10_000
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    response = raw_post(
        client, None, ExplodingStream(), str(50_000_000), url=f"/incidents/{incident.pk}/upload/"
    )
    assert response.status_code == 413
    assert "10,000 bytes" in response.content.decode()


def test_a_rebuy_knock_out_snapshot_opens_its_case(api, operator_token, snapshot_factory):
    data = snapshot_factory(stage="middle", tournament_id="KO-API", rebuys=True)
    response = post_snapshot(api, operator_token, data)
    assert response.status_code == 201
    case = Case.objects.get()
    assert case.entrants_digest and case.tournament.entry_bounty == 500


def test_a_version_2_field_in_a_version_1_snapshot_is_refused_at_its_path(api, operator_token):
    document = build_snapshot(stage="middle")
    document["players"][0]["entries"] = 2
    response = post_snapshot(api, operator_token, json.dumps(document).encode())
    assert response.status_code == 400
    assert "players[0].entries" in json.dumps(response.json())
    assert not Case.objects.exists()
