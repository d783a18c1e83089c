"""The audit trail: business events and the versions of every audited record."""

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import FieldDoesNotExist
from django.db.models import CharField, F, QuerySet, Value, Window
from django.db.models.functions import RowNumber
from simple_history.utils import get_history_model_for_model

from settlements.models import (
    ApiToken,
    AuditCheckpoint,
    Case,
    Compensation,
    CompensationItem,
    Decision,
    Event,
    Incident,
    PrizeWithdrawal,
    Reissue,
    Rulebook,
    RulebookVersion,
    Settlement,
    Tournament,
)
from settlements.selectors.common import lean, pk_of
from settlements.selectors.players import player_case_ids


def event_list(
    *,
    incident: Incident | int | None = None,
    case: Case | int | None = None,
    tournament: Tournament | int | None = None,
    actor=None,
    type: str | None = None,
    subject_type: str | None = None,
    subject_id: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    player: str | None = None,
) -> QuerySet[Event]:
    """Business events, newest first, filtered by any combination of the arguments;
    ``subject_type`` and ``subject_id`` name the record an event is about (e.g. "settlement",
    42); ``player``: the events of the cases that concern that player id."""
    events = lean(
        Event.objects.select_related("actor", "incident", "case", "tournament"), "tournament"
    )
    filters = {
        "incident": incident,
        "case": case,
        "tournament": tournament,
        "actor": actor,
        "type": type,
        "subject_type": subject_type,
        "subject_id": subject_id,
        "at__gte": since,
        "at__lt": until,
    }
    events = events.filter(**{key: value for key, value in filters.items() if value is not None})
    if player is not None:
        events = events.filter(case__in=player_case_ids(player))
    return events.order_by("-at", "-id")


def incident_timeline(incident: Incident) -> QuerySet[Event]:
    """Everything that happened in an incident, oldest first."""
    return event_list(incident=incident).order_by("at", "id")


# The versioned models an auditor can browse, with the paths from each historical row to the
# incident, case and tournament it belongs to (None: it belongs to none).
HISTORY_MODELS: dict[str, tuple[type, str | None, str | None, str | None]] = {
    "incident": (Incident, "id", None, None),
    "tournament": (Tournament, None, None, "id"),
    "case": (Case, "incident", "id", "tournament"),
    "decision": (Decision, "case__incident", "case", "case__tournament"),
    "settlement": (Settlement, "case__incident", "case", "case__tournament"),
    "compensation": (Compensation, "case__incident", "case", "case__tournament"),
    "prizewithdrawal": (PrizeWithdrawal, "case__incident", "case", "case__tournament"),
    "reissue": (Reissue, "incident", "case", "case__tournament"),
    "apitoken": (ApiToken, None, None, None),
    "rulebook": (Rulebook, None, None, None),
    "rulebookversion": (RulebookVersion, None, None, None),
}

# The kinds that belong to a crash and its cases (filtered by incident, case or tournament):
# the history a Tournament Manager reads besides the auditor (permissions.history_record_read).
CASE_RECORDS = frozenset(
    name for name, (_model, *paths) in HISTORY_MODELS.items() if any(path for path in paths)
)

# The table of versions of each of them. ``Model.history`` builds a new manager class on every
# access (about 90 µs); a page that reads the versions of every record type uses these.
HISTORICAL_MODELS = {
    name: get_history_model_for_model(model) for name, (model, *_) in HISTORY_MODELS.items()
}


def history_entries(
    *,
    model: str | None = None,
    user=None,
    since: datetime | None = None,
    until: datetime | None = None,
    incident: Incident | int | None = None,
    case: Case | int | None = None,
    tournament: Tournament | int | None = None,
    player: str | None = None,
) -> QuerySet:
    """Every recorded version across the audited models, newest first, as dicts with
    ``model``, ``history_id``, ``id`` (of the versioned row), ``history_date``,
    ``history_type``, ``history_user_id`` and ``history_change_reason``: one UNION query.
    ``player`` keeps the records that concern that player id (see ``_player_filter``)."""
    names = [model] if model else list(HISTORY_MODELS)
    cases = player_case_ids(player) if player is not None else None
    parts = []
    for name in names:
        queryset = _history_part(name, user, since, until, incident, case, tournament)
        if queryset is not None and player is not None:
            queryset = _player_filter(name, queryset, player, cases)
        if queryset is not None:
            parts.append(queryset)
    if not parts:
        return HISTORICAL_MODELS["incident"].objects.none().values("history_id")
    first, *rest = parts
    union = first.union(*rest, all=True) if rest else first
    return union.order_by("-history_date", "-history_id")


def history_record(model: str, history_id: int):
    """One historical version (with its user), for the diff view."""
    return (
        HISTORY_MODELS[model][0].history.select_related("history_user").get(history_id=history_id)
    )


@dataclass(frozen=True)
class FieldChange:
    field: str
    label: str
    old: object
    new: object


def history_changes(record) -> list[FieldChange]:
    """What this version changed compared with the one before it (every set field when it
    is the first version). Uses simple-history's ``diff_against``."""
    previous = record.prev_record
    model = record.instance_type
    if previous is None:
        return [
            FieldChange(
                field.attname,
                str(field.verbose_name),
                None,
                getattr(record, field.attname),
            )
            # The recorded fields, not the model's: a field left out of the history (an API
            # token's last use) has no value on the record.
            for field in record.tracked_fields
            if getattr(record, field.attname) not in (None, "", [], {})
        ]
    delta = record.diff_against(previous, foreign_keys_are_objs=False)
    return [
        FieldChange(
            change.field,
            str(model._meta.get_field(change.field).verbose_name),
            change.old,
            change.new,
        )
        for change in delta.changes
    ]


def _player_filter(name: str, records: QuerySet, player: str, cases: QuerySet) -> QuerySet | None:
    """The versions that concern ``player``: the cases they were in or that name them
    (``cases``, a subquery of their ids), with those cases' incidents, tournaments, decisions
    and settlements; compensation and prizes given in error only where they name the player.
    API tokens concern no player (None)."""
    if name == "case":
        return records.filter(id__in=cases)
    if name in ("incident", "tournament"):
        return records.filter(id__in=Case.objects.filter(pk__in=cases).values(name))
    if name in ("decision", "settlement"):
        return records.filter(case__in=cases)
    if name == "compensation":
        named = CompensationItem.objects.filter(player=player).values("compensation")
        return records.filter(id__in=named)
    if name == "prizewithdrawal":
        return records.filter(player=player)
    return None


def _history_part(name, user, since, until, incident, case, tournament):
    _, incident_path, case_path, tournament_path = HISTORY_MODELS[name]
    records = HISTORICAL_MODELS[name].objects.all()
    for value, path in ((incident, incident_path), (case, case_path)):
        if value is not None:
            if path is None:
                return None
            records = records.filter(**{path: pk_of(value)})
    if tournament is not None:
        if tournament_path is None:
            return None
        records = records.filter(**{tournament_path: pk_of(tournament)})
    if user is not None:
        records = records.filter(history_user=user)
    if since is not None:
        records = records.filter(history_date__gte=since)
    if until is not None:
        records = records.filter(history_date__lt=until)
    # Each part unordered (SQLite allows no ORDER BY inside a UNION); the union is ordered.
    return (
        records.order_by()
        .annotate(model=Value(name, output_field=CharField()))
        .values(
            "model",
            "history_id",
            "id",
            "history_date",
            "history_type",
            "history_user_id",
            "history_change_reason",
        )
    )


def record_versions(model: str, pk: int) -> QuerySet:
    """The versions of one record of ``model`` (a HISTORY_MODELS key), newest first, each
    numbered 1, 2, 3 … within this record, oldest first, whatever the other records'."""
    return (
        HISTORY_MODELS[model][0]
        .history.filter(id=pk)
        .select_related("history_user")
        .annotate(
            number=Window(RowNumber(), order_by=[F("history_date").asc(), F("history_id").asc()])
        )
        .order_by("-history_date", "-history_id")
    )


def version_currency(model: str, version) -> str:
    """The currency a version's amounts are in: its own, or its case's tournament's."""
    currency = getattr(version, "currency", "")
    if currency:
        return currency
    case_id = getattr(version, "case_id", None)
    if model == "case":
        tournament = Tournament.objects.filter(pk=version.tournament_id).first()
        return tournament.currency if tournament else ""
    if case_id:
        case = Case.objects.select_related("tournament").filter(pk=case_id).first()
        return case.tournament.currency if case else ""
    return ""


def version_usernames(model: str, changes) -> dict[int, str]:
    """Usernames of the people a page of versions refers to (prepared by, approved by…)."""
    fields = HISTORY_MODELS[model][0]._meta
    user_model = get_user_model()
    ids = {
        value
        for version in changes
        for change in version
        for value in (change.old, change.new)
        if value is not None and related_model(fields, change.field) is user_model
    }
    return usernames(ids)


def usernames(ids: set[int] | None = None) -> dict[int, str]:
    """User id -> username, of ``ids`` or of everyone (an export of every change)."""
    users = get_user_model().objects.all()
    if ids is not None:
        users = users.filter(pk__in=ids)
    return dict(users.values_list("pk", "username"))


def model_field(meta, field: str):
    try:
        return meta.get_field(field)
    except FieldDoesNotExist:  # a field removed since the version was written
        return None


def related_model(meta, field: str):
    found = model_field(meta, field)
    return found.related_model if found is not None else None


def audit_checkpoints() -> QuerySet:
    """The checkpoints verifications ended with, newest first."""
    return AuditCheckpoint.objects.order_by("-pk")
