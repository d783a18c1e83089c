"""Incidents, and tournaments registered by hand."""

import re
from collections.abc import Sequence
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from settlements import player_ids
from settlements.access import permissions
from settlements.errors import DomainError, Duplicate
from settlements.models import (
    ID_MAX_LENGTH,
    PROSE_MAX_LENGTH,
    Event,
    Incident,
    Tournament,
    TournamentType,
)
from settlements.money import is_currency
from settlements.services.common import (
    check_amount,
    check_tournament_text,
    checked_time,
    record_event,
    refuse_look_alike_tournament,
    required_text,
    save_with_history,
)
from settlements.workflow import CASE_FINAL

_CURRENCY = re.compile(r"[A-Z]{3}")


@transaction.atomic
def incident_report(*, actor, title: str, started_at: datetime, description: str = "") -> Incident:
    incident = new_incident(
        actor=actor, title=title, started_at=started_at, description=description
    )
    record_incident_reported(incident, actor=actor)
    return incident


def new_incident(*, actor, title: str, started_at: datetime, description: str = "") -> Incident:
    """A new incident, stored; the caller records its event (record_incident_reported) in
    the same transaction, so a load that reports its own incident can record it last."""
    permissions.enforce(permissions.incident_report(user=actor))
    title = required_text(title, "title", max_length=200)
    description = description.strip()
    if len(description) > PROSE_MAX_LENGTH:
        raise DomainError(
            f"The description must be at most {PROSE_MAX_LENGTH} characters.", field="description"
        )
    incident = Incident(
        title=title,
        started_at=checked_time(started_at, "started_at"),
        description=description,
        reported_by=actor,
    )
    save_with_history(incident, actor=actor, reason="Incident reported")
    return incident


def record_incident_reported(incident: Incident, *, actor) -> None:
    record_event(
        Event.Type.INCIDENT_REPORTED,
        actor=actor,
        incident=incident,
        subject=incident,
        data={"title": incident.title, "started_at": incident.started_at.isoformat()},
    )


@transaction.atomic
def incident_close(*, incident: Incident, actor, reason: str = "") -> Incident:
    incident = Incident.objects.select_for_update().get(pk=incident.pk)
    unfinished = list(
        incident.cases.exclude(status__in=CASE_FINAL).values_list("pk", flat=True)[:10]
    )
    permissions.enforce(
        permissions.incident_close(incident=incident, user=actor, unfinished=unfinished)
    )
    incident.closed_at = timezone.now()
    incident.closed_by = actor
    save_with_history(incident, actor=actor, reason=reason.strip() or "Incident closed")
    record_event(
        Event.Type.INCIDENT_CLOSED, actor=actor, incident=incident, subject=incident, reason=reason
    )
    return incident


@transaction.atomic
def tournament_create(
    *,
    actor,
    operator_id: str,
    type: str,
    currency: str,
    name: str = "",
    buy_in: int | None = None,
    fee: int | None = None,
    guarantee: int | None = None,
    fpp_buy_in: int | None = None,
    prize_pool: int | None = None,
    payouts: Sequence[int] = (),
    seat_value: int | None = None,
    scheduled_start: datetime | None = None,
) -> Tournament:
    """Register a tournament by hand (a snapshot load registers its tournament by itself)."""
    permissions.enforce(permissions.tournament_create(user=actor))
    operator_id = required_text(operator_id, "operator_id", max_length=ID_MAX_LENGTH)
    check_tournament_text(operator_id, "id", field="operator_id")
    name = name.strip()[:ID_MAX_LENGTH]
    check_tournament_text(name, "name", field="name")
    if type not in TournamentType.values:
        raise DomainError("Choose regular, freeroll or satellite.", field="type")
    if not isinstance(currency, str) or not _CURRENCY.fullmatch(currency):
        raise DomainError("Give the currency as three capital letters, e.g. USD.", field="currency")
    if not is_currency(currency):
        raise DomainError(f"{currency} is not an ISO 4217 currency code.", field="currency")
    amounts = {
        "buy_in": buy_in,
        "fee": fee,
        "guarantee": guarantee,
        "fpp_buy_in": fpp_buy_in,
        "prize_pool": prize_pool,
        "seat_value": seat_value,
    }
    for field, value in amounts.items():
        if value is not None:
            check_amount(value, field)
    payouts = list(payouts)
    for place, value in enumerate(payouts, start=1):
        check_amount(value, "payouts", positive=True, what=f"The prize of place {place}")
    refuse_look_alike_tournament(operator_id)
    tournament = Tournament(
        operator_id=operator_id,
        key=player_ids.tournament_key(operator_id),
        name=name,
        type=type,
        currency=currency,
        payouts=payouts,
        scheduled_start=checked_time(scheduled_start, "scheduled_start")
        if scheduled_start
        else None,
        **amounts,
    )
    try:
        with transaction.atomic():
            save_with_history(tournament, actor=actor, reason="Tournament registered")
    except IntegrityError:
        raise Duplicate(
            f"Tournament {operator_id} is already registered.", field="operator_id"
        ) from None
    record_event(
        Event.Type.TOURNAMENT_CREATED,
        actor=actor,
        tournament=tournament,
        subject=tournament,
        data={"operator_id": operator_id, "type": type},
    )
    return tournament
