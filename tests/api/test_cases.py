"""GET /api/v1/cases and /api/v1/cases/ID: pages that follow each other, and the settlement
exactly as the engine computed it."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from settlements.access import roles
from settlements.models import Case
from settlements.rules import parse_snapshot, settle
from settlements.services import settlements as settlement_services
from settlements.services.decisions import decision_record
from settlements.services.incidents import incident_report
from settlements.services.individual_cases import individual_case_open
from settlements.services.settlements import AdjustmentEntry
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create
from settlements.workflow import CaseStatus
from tests.api.conftest import bearer
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(tokens):
    return bearer(tokens[roles.AUDITOR])


def load(operator, snapshot_factory, **kwargs) -> Case:
    return case_load_snapshot(actor=operator, snapshot=snapshot_factory(**kwargs))


def test_the_list_is_newest_first_with_what_a_game_server_needs(
    api, reader, operator, snapshot_factory
):
    older = load(operator, snapshot_factory, tournament_id="T-1", stage="late")
    newer = load(operator, snapshot_factory, tournament_id="T-2", type="freeroll")

    response = api.get("/api/v1/cases", **reader)

    assert response.status_code == 200
    body = response.json()
    assert [row["id"] for row in body["results"]] == [newer.pk, older.pk]
    assert body["next"] is None
    row = body["results"][1]
    assert row["url"] == f"http://testserver/api/v1/cases/{older.pk}"
    assert row["tournament"] == {
        "id": "T-1",
        "name": "Regular late (20 entrants)",
        "type": "regular",
        "currency": "USD",
    }
    assert (row["kind"], row["status"], row["stage"]) == ("crash", "ready", "late")
    assert (row["entrants"], row["eliminated"], row["remaining"]) == (
        older.entrants,
        older.eliminated,
        older.remaining,
    )
    assert (row["paid_places"], row["pool"]) == (older.paid_places, older.pool)
    assert row["incident"] == older.incident_id
    assert row["crashed_at"] == "2026-11-30T20:14:05+00:00"
    assert body["results"][0]["decision_options"] == ["reschedule", "chip_equity"]


def test_pages_follow_each_other_without_gaps_or_repeats(api, reader, operator, snapshot_factory):
    created = [
        load(operator, snapshot_factory, tournament_id=f"T-{n}", stage="late").pk for n in range(7)
    ]
    seen, url, pages = [], "/api/v1/cases?limit=3", 0
    while url:
        body = api.get(url, **reader).json()
        seen += [row["id"] for row in body["results"]]
        url = body["next"]
        pages += 1
        if url:
            assert url.startswith("http://testserver/api/v1/cases?")
            assert "limit=3" in url
            # A case created while paging does not shift the pages still to come.
            if pages == 1:
                load(operator, snapshot_factory, tournament_id="T-late", stage="late")
    assert pages == 3
    assert seen == sorted(created, reverse=True)


def test_filters(api, reader, operator, snapshot_factory):
    incident = incident_report(
        actor=operator, title="B", started_at=timezone.now() - timedelta(minutes=1)
    )
    ready = load(operator, snapshot_factory, tournament_id="R-1", stage="late")
    waiting = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_factory(tournament_id="F-1", type="freeroll"),
        incident=incident,
    )

    def ids(query):
        response = api.get(f"/api/v1/cases?{query}", **reader)
        assert response.status_code == 200
        return [row["id"] for row in response.json()["results"]]

    assert ids("status=ready") == [ready.pk]
    assert ids("status=awaiting_decision") == [waiting.pk]
    assert ids("tournament=F-1") == [waiting.pk]
    assert ids("tournament=nope") == []
    assert ids(f"incident={incident.pk}") == [waiting.pk]
    assert ids(f"after={waiting.pk}") == [ready.pk]


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("after=x", "?after"),
        ("after=0", "?after"),
        ("limit=-1", "?limit"),
        ("limit=201", "?limit"),
        ("status=lost", "?status"),
        ("incident=1e3", "?incident"),
        # Digits that str.isdigit() accepts: int() refuses the first, reads the others as 1.
        ("limit=%C2%B2", "?limit"),
        ("after=%D9%A1", "?after"),
        ("incident=%EF%BC%91", "?incident"),
        ("limit=+5", "?limit"),
        ("limit=%205", "?limit"),
        (f"after={2**63}", "?after"),
        # PostgreSQL refuses a NUL in a query argument.
        ("tournament=%00", "?tournament"),
    ],
)
def test_bad_parameters_name_themselves(api, reader, query, path):
    response = api.get(f"/api/v1/cases?{query}", **reader)
    assert response.status_code == 400
    assert [error["path"] for error in response.json()["errors"]] == [path]


def test_every_parameter_that_does_not_fit_is_named_in_one_refusal(api, reader):
    response = api.get(
        "/api/v1/cases?after=0&limit=201&status=Ready&tournament=T-1&incident=x&page=2", **reader
    )
    assert response.status_code == 400
    assert response.json() == {
        "errors": [
            {"path": "?after", "message": "must be a whole number above zero, in digits 0-9"},
            {"path": "?limit", "message": "must be at most 200"},
            {"path": "?status", "message": f"must be one of {', '.join(CaseStatus.values)}"},
            {"path": "?incident", "message": "must be a whole number above zero, in digits 0-9"},
        ]
    }


def test_a_case_before_preparation_has_no_settlement(api, reader, operator, snapshot_factory):
    case = load(operator, snapshot_factory, type="freeroll", stage="middle")
    body = api.get(f"/api/v1/cases/{case.pk}", **reader).json()
    assert body["id"] == case.pk and body["status"] == "awaiting_decision"
    assert body["policy"] == {"pre_pct": 5, "early_pct": 25, "late_formula": "chip_equity"}
    assert body["engine_version"]
    assert body["settlement"] is None and body["settlement_status"] is None
    assert body["adjustments"] == []


def test_a_prepared_case_shows_the_settlement_in_the_settle_commands_format(
    api, reader, operator, marketing_manager, snapshot_factory
):
    data = snapshot_factory(type="freeroll", stage="middle", entrants=30, tournament_id="F-9")
    case = case_load_snapshot(actor=operator, snapshot=data)
    decision_record(
        case=case, actor=marketing_manager, option="chip_equity", reason="players asked"
    )
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)

    body = api.get(f"/api/v1/cases/{case.pk}", **reader).json()

    engine = settle(parse_snapshot(data), decision="chip_equity")
    assert body["settlement"] == json.loads(engine.to_json())
    assert body["settlement_id"] == settlement.pk
    assert body["settlement_status"] == "prepared"
    assert body["status"] == "prepared" and body["decision"] == "chip_equity"


def test_approved_settlements_list_their_adjustments(
    api, reader, operator, tournament_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, stage="late", tournament_id="T-5")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=tournament_manager)
    line = settlement.lines.order_by("line_no").first()
    adjustment = settlement_services.settlement_adjust(
        settlement=settlement,
        actor=operator,
        reason="late registration missed",
        entries=[AdjustmentEntry(line.player, line.kind, line.unit, -1, line.source)],
    )

    body = api.get(f"/api/v1/cases/{case.pk}", **reader).json()

    assert body["settlement_status"] == "approved"
    [listed] = body["adjustments"]
    assert listed["id"] == adjustment.pk and listed["status"] == "prepared"
    [reversal] = listed["document"]["lines"]
    assert reversal == {
        "player": line.player,
        "kind": line.kind,
        "unit": line.unit,
        "amount": -1,
        "source": "pool",
    }


def test_an_individual_case_is_listed_without_crash_numbers(
    api, reader, operator, tournament_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, stage="late", tournament_id="T-8")
    individual = individual_case_open(
        actor=tournament_manager,
        tournament=case.tournament,
        players=["p000001"],
        description="disconnected at the final table",
    )
    body = api.get(f"/api/v1/cases/{individual.pk}", **reader).json()
    assert body["kind"] == "individual" and body["stage"] is None
    assert body["settlement"] is None


def test_an_unknown_case_is_a_json_404(api, reader):
    response = api.get("/api/v1/cases/999999", **reader)
    assert response.status_code == 404
    assert response.json()["errors"][0]["message"] == "There is no case #999999."


def test_head_answers_like_get_without_a_body(api, reader):
    response = api.head("/api/v1/cases", **reader)
    assert response.status_code == 200
    assert response.content == b""


@pytest.mark.parametrize("kind", list(roles.DESK_ROLES))
def test_every_role_may_read(api, tokens, kind):
    assert api.get("/api/v1/cases", **bearer(tokens[kind])).status_code == 200


def test_a_user_without_a_role_may_not_read(api, tokens, django_user_model):
    response = api.get("/api/v1/cases", **bearer(tokens["none"]))
    assert response.status_code == 403
    server = make_user(django_user_model, "server-x")
    raw = api_token_create(user=server, name="x")[1]
    assert api.get("/api/v1/cases/1", **bearer(raw)).status_code == 403


def test_writes_are_not_allowed_on_reads(api, reader):
    for url in ("/api/v1/cases", "/api/v1/cases/1"):
        response = api.post(url, b"{}", content_type="application/json", **reader)
        assert response.status_code == 405
        assert response["Allow"] == "GET, HEAD"
