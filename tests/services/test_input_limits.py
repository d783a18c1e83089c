"""Smaller holes of issue 41: an incident's description has the length every sentence has, a
crash does not happen in the future, and typed amounts are ASCII digits."""

import json
from datetime import UTC, timedelta

import pytest
from django.utils import timezone

from settlements.errors import DomainError
from settlements.models import PROSE_MAX_LENGTH, Incident, Tournament, Unit
from settlements.money import AmountError, parse_amount
from settlements.rules import InvalidInput
from settlements.services.incidents import incident_report, tournament_create
from settlements.services.snapshots import case_load_snapshot

pytestmark = pytest.mark.django_db


def test_an_incident_description_is_at_most_5000_characters(operator):
    with pytest.raises(DomainError, match="at most 5000") as refusal:
        incident_report(
            actor=operator,
            title="DC1",
            started_at=timezone.now(),
            description="x" * (PROSE_MAX_LENGTH + 1),
        )
    assert refusal.value.field == "description"
    assert not Incident.objects.exists()
    incident_report(
        actor=operator, title="DC1", started_at=timezone.now(), description="x" * PROSE_MAX_LENGTH
    )


def _crashed(minutes: float) -> str:
    return (timezone.now() + timedelta(minutes=minutes)).astimezone(UTC).isoformat()


def test_a_crash_in_the_future_is_refused(operator, snapshot_factory):
    with pytest.raises(InvalidInput) as refusal:
        case_load_snapshot(actor=operator, snapshot=snapshot_factory(crashed_at=_crashed(60)))
    assert [(p.path, p.message) for p in refusal.value.problems] == [
        ("crashed_at", "is in the future")
    ]
    assert not Tournament.objects.exists()


def test_a_game_servers_clock_may_run_a_little_ahead(operator, snapshot_factory):
    case_load_snapshot(actor=operator, snapshot=snapshot_factory(crashed_at=_crashed(1)))


@pytest.mark.parametrize("typed", ["１２", "١٢", "12.٥", "𝟏𝟐"])
def test_typed_amounts_take_ascii_digits_only(typed):
    with pytest.raises(AmountError):
        parse_amount(typed, unit=Unit.CASH, currency="USD")
    assert parse_amount("12.5", unit=Unit.CASH, currency="USD") == 1250


@pytest.mark.parametrize("code", ["ZZZ", "USX", "ABC"])
def test_an_unknown_currency_code_is_refused(operator, snapshot_factory, code):
    with pytest.raises(DomainError, match="ISO 4217") as refusal:
        tournament_create(actor=operator, operator_id="T-1", type="regular", currency=code)
    assert refusal.value.field == "currency"
    document = json.loads(snapshot_factory())
    document["tournament"]["currency"] = code
    with pytest.raises(InvalidInput) as invalid:
        case_load_snapshot(actor=operator, snapshot=json.dumps(document))
    assert [p.path for p in invalid.value.problems] == ["tournament.currency"]
    assert not Tournament.objects.exists()


@pytest.mark.parametrize("code", ["USD", "EUR", "JPY", "BHD", "CHF"])
def test_iso_4217_codes_are_taken(operator, code):
    tournament_create(actor=operator, operator_id="T-1", type="regular", currency=code)
