"""Loading a snapshot: what is stored, what is refused, and that a refusal stores nothing."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from settlements import seals
from settlements.errors import DomainError, Duplicate, InvalidTransition, NotAllowed
from settlements.models import Case, CasePlayer, Event, Incident, Snapshot, Tournament
from settlements.rules import InvalidInput, Policy, assess, parse_snapshot
from settlements.services import incidents
from settlements.services.rulebooks import rulebook_version_approve, rulebook_version_propose
from settlements.services.snapshots import case_load_snapshot
from settlements.workflow import CaseStatus
from tests.conftest import build_snapshot
from tests.services.helpers import event_types, row_counts

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("type_", ["regular", "freeroll", "satellite"])
@pytest.mark.parametrize("stage", ["pre", "early", "middle", "late"])
def test_load_stores_the_snapshot_and_the_engines_assessment(
    operator, snapshot_factory, type_, stage
):
    data = snapshot_factory(type=type_, stage=stage, entrants=40)
    case = case_load_snapshot(actor=operator, snapshot=data)

    expected = assess(parse_snapshot(data))
    case.refresh_from_db()
    assert (case.stage, case.entrants, case.eliminated, case.remaining) == (
        expected.stage,
        expected.entrants,
        expected.eliminated,
        expected.remaining,
    )
    assert (case.paid_places, case.pool) == (expected.paid_places, expected.pool)
    assert case.decision_options == list(expected.decision_options)
    assert case.status == (
        CaseStatus.AWAITING_DECISION if expected.decision_options else CaseStatus.READY
    )
    assert case.snapshot.text == data.decode()
    assert case.snapshot.size_bytes == len(data)
    assert case.snapshot.sha256 == Snapshot.digest(data.decode())
    assert case.policy == {"pre_pct": 5, "early_pct": 25, "late_formula": "chip_equity"}
    assert case.engine_version


def test_entrants_are_stored_in_snapshot_order(operator, snapshot_factory):
    document = json.loads(snapshot_factory(entrants=30))
    # Out of id order, as the rows are written in id order but keep their snapshot positions.
    players = document["players"] = document["players"][::-2] + document["players"][::2]
    case = case_load_snapshot(actor=operator, snapshot=json.dumps(document))
    stored = list(
        CasePlayer.objects.filter(case=case)
        .order_by("position")
        .values_list("position", "player", "chips")
    )
    assert stored == [(i, p["id"], p["chips"]) for i, p in enumerate(players)]
    assert [p["id"] for p in players] != sorted(p["id"] for p in players)
    # Sealed in snapshot order too, as verify_audit reads them back.
    loaded = Event.objects.get(type=Event.Type.SNAPSHOT_LOADED, case=case)
    assert loaded.subject_facts["entrant_rows"] == seals.entrant_digests([case.pk])[case.pk]


def test_load_registers_the_tournament_and_reports_an_incident(operator, snapshot_factory):
    data = snapshot_factory(type="satellite", stage="middle", tournament_id="SAT-9")
    case = case_load_snapshot(actor=operator, snapshot=data)

    tournament = Tournament.objects.get(operator_id="SAT-9")
    info = json.loads(data)["tournament"]
    assert (tournament.type, tournament.currency) == ("satellite", "USD")
    assert (tournament.buy_in, tournament.fee, tournament.seat_value) == (
        info["buy_in"],
        info["fee"],
        info["seat_value"],
    )
    assert case.tournament == tournament
    assert case.incident.reported_by == operator
    assert case.incident.started_at == case.crashed_at
    assert case.crashed_at.isoformat() == "2026-11-30T20:14:05+00:00"
    assert event_types() == ["tournament_created", "incident_reported", "snapshot_loaded"]
    loaded = Event.objects.get(type="snapshot_loaded")
    assert (loaded.actor, loaded.case, loaded.incident, loaded.tournament) == (
        operator,
        case,
        case.incident,
        tournament,
    )
    assert loaded.data["sha256"] == case.snapshot.sha256
    assert loaded.data["stage"] == "middle"


def test_load_records_history_user_and_reason(operator, snapshot_factory):
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory())
    (version,) = case.history.all()
    assert version.history_user == operator
    assert version.history_change_reason.startswith("Snapshot loaded (")
    assert version.history_type == "+"


def test_load_joins_a_given_open_incident(operator, snapshot_factory):
    incident = incidents.incident_report(
        actor=operator, title="Rack 3 down", started_at=timezone.now()
    )
    first = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(tournament_id="A"), incident=incident
    )
    second = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(tournament_id="B"), incident=incident
    )
    assert first.incident == second.incident == incident
    assert Incident.objects.count() == 1


def test_the_version_in_force_when_the_tournament_started_is_used_and_kept(
    operator, tournament_manager, second_manager, snapshot_factory
):
    # 10 % eliminated is early by default, but middle when the early threshold is 10 %.
    effective = timezone.now() + timedelta(days=7)
    version = rulebook_version_propose(
        key="eu-main",
        parameters={"early_pct": 10},
        text="Stricter early stage.",
        effective_from=effective,
        actor=tournament_manager,
        reason="New market",
    )
    version = rulebook_version_approve(version=version, actor=second_manager, reason="ok")
    starts = (effective + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    case = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_factory(stage="early", entrants=20, rulebook="eu-main", starts_at=starts),
    )
    assert case.stage == "middle"
    assert case.rulebook_version == version
    assert case.policy == Policy(**version.parameters).to_dict()
    default = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(stage="early", entrants=20, tournament_id="D")
    )
    assert default.stage == "early"
    assert (default.rulebook_version.rulebook.key, default.rulebook_version.number) == (
        "default",
        1,
    )


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"rulebook": "nowhere"}, "tournament.rulebook"),
        ({"rulebook": "eu-main"}, "tournament.starts_at"),
        ({"rulebook": "eu-main", "starts_at": "2026-01-01T00:00:00Z"}, "tournament.starts_at"),
    ],
)
def test_an_unknown_rulebook_or_an_earlier_start_is_refused_with_its_path(
    fields, path, operator, tournament_manager, snapshot_factory
):
    rulebook_version_propose(
        key="eu-main",
        parameters={},
        text="Text.",
        effective_from=timezone.now() + timedelta(days=7),
        actor=tournament_manager,
        reason="New market",
    )
    before = row_counts()
    with pytest.raises(InvalidInput) as caught:
        case_load_snapshot(actor=operator, snapshot=snapshot_factory(crashed_at=None, **fields))
    assert [problem.path for problem in caught.value.problems] == [path]
    assert row_counts() == before


def test_an_existing_tournament_is_brought_up_to_date(operator, snapshot_factory):
    incidents.tournament_create(
        actor=operator, operator_id="R-1", type="regular", currency="USD", buy_in=500, fee=50
    )
    tournament = Tournament.objects.get(operator_id="R-1")
    case = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(tournament_id="R-1"), tournament=tournament
    )
    tournament.refresh_from_db()
    assert (tournament.buy_in, tournament.fee) == (1000, 100)
    assert case.tournament == tournament
    latest = tournament.history.first()
    assert latest.history_change_reason == "Updated from a snapshot"
    changed = Event.objects.get(type="tournament_updated")
    assert {"buy_in", "fee", "payouts"} <= set(changed.data["changed"])


def test_the_snapshot_must_be_about_the_chosen_tournament(operator, snapshot_factory):
    other = incidents.tournament_create(
        actor=operator, operator_id="OTHER", type="regular", currency="USD"
    )
    before = row_counts()
    with pytest.raises(DomainError, match="about tournament R-2, not OTHER"):
        case_load_snapshot(
            actor=operator, snapshot=snapshot_factory(tournament_id="R-2"), tournament=other
        )
    assert row_counts() == before


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda s: s["players"][3].update(chips=-1), "players[3].chips"),
        (lambda s: s["tournament"].update(payouts=[1, 1]), "tournament.payouts"),
        (lambda s: s.update(extra=1), "extra"),
        (lambda s: s["tournament"].update(seat_value=100), "tournament.seat_value"),
    ],
)
def test_an_invalid_snapshot_is_refused_with_paths_and_stores_nothing(operator, mutate, path):
    snapshot = build_snapshot()
    mutate(snapshot)
    before = row_counts()
    with pytest.raises(InvalidInput) as refused:
        case_load_snapshot(actor=operator, snapshot=json.dumps(snapshot))
    assert any(problem.path.startswith(path) for problem in refused.value.problems)
    assert row_counts() == before


def test_broken_json_and_bad_bytes_store_nothing(operator):
    before = row_counts()
    for data in (b"{not json", b"\xff\xfe\x00", b""):
        with pytest.raises(InvalidInput):
            case_load_snapshot(actor=operator, snapshot=data)
    assert row_counts() == before


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda s: s["players"][2].update(id="x" * 201), "players[2].id"),
        (lambda s: s["players"][5].update(id="bad\x00id"), "players[5].id"),
        (lambda s: s["tournament"].update(id="T" * 300), "tournament.id"),
        (lambda s: s["tournament"].update(name="n" * 201), "tournament.name"),
    ],
)
def test_what_the_database_cannot_hold_is_refused_with_its_path(operator, mutate, path):
    snapshot = build_snapshot()
    mutate(snapshot)
    before = row_counts()
    with pytest.raises(InvalidInput) as refused:
        case_load_snapshot(actor=operator, snapshot=json.dumps(snapshot))
    assert [problem.path for problem in refused.value.problems] == [path]
    assert row_counts() == before


def test_a_second_snapshot_of_the_same_tournament_is_a_duplicate(operator, snapshot_factory):
    data = snapshot_factory(tournament_id="DUP")
    first = case_load_snapshot(actor=operator, snapshot=data)
    before = row_counts()
    with pytest.raises(Duplicate) as refused:
        case_load_snapshot(actor=operator, snapshot=data)
    assert refused.value.existing == first
    assert f"#{first.pk}" in str(refused.value)
    assert row_counts() == before


def test_a_closed_incident_takes_no_new_case(operator, snapshot_factory):
    incident = incidents.incident_report(actor=operator, title="Done", started_at=timezone.now())
    incidents.incident_close(incident=incident, actor=operator)
    with pytest.raises(InvalidTransition, match="closed"):
        case_load_snapshot(actor=operator, snapshot=snapshot_factory(), incident=incident)
    assert not Case.objects.exists()


@pytest.mark.parametrize("who", ["marketing_manager", "tournament_manager", "auditor", "none"])
def test_only_operators_load_snapshots(users, snapshot_factory, who):
    before = row_counts()
    with pytest.raises(NotAllowed):
        case_load_snapshot(actor=users[who], snapshot=snapshot_factory())
    assert row_counts() == before


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's TOAST compression")
def test_a_large_snapshot_is_stored_compressed_with_lz4(operator, snapshot_factory):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = %s",
            ["default_toast_compression"],
        )
        if not cursor.fetchone()[0]:
            pytest.skip("this PostgreSQL was built without LZ4")
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory(entrants=2000))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_compression(text) FROM settlements_snapshot WHERE id = %s",
            [case.snapshot_id],
        )
        assert cursor.fetchone()[0] == "lz4"
