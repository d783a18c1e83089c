"""The auditor's history browser; strictly read-only, every view answers GET (and HEAD) only.

GET /history/                     recorded changes (?view=changes) or business events
                                  (?view=events), filtered by incident, case, tournament,
                                  player id, user, record type and dates; paginated without
                                  a count
GET /history/export.csv           what the same filters select, as CSV, streamed
GET /history/<model>/<pk>/        one record's versions, each with what it changed
GET /history/incidents/<id>/      an incident's timeline of business events, oldest first
GET /history/audit-head.json      the event log's head hash and whether it verifies, to keep
                                  outside the database (settlements.audit_log)
"""

import json
from datetime import UTC, datetime, time, timedelta
from functools import partial

from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_safe

from settlements import audit_log, desk_roles, wording
from settlements.access import permissions
from settlements.access.decorators import role_required
from settlements.access.roles import has_role
from settlements.exports.spreadsheets import csv_chunks, csv_download
from settlements.forms import HistoryFilterForm
from settlements.models import Incident
from settlements.money import format_fpp, format_in_unit, format_minor_units
from settlements.selectors import audit
from settlements.selectors.cases import incident_detail
from settlements.templatetags.timezones import when
from settlements.views.paging import peek_page
from settlements.views.rendering import render_page
from settlements.views.rows import RowUrls

PER_PAGE = 50
VERSIONS_PER_PAGE = 20
TIMELINE_PER_PAGE = 100
VIEWS = {"changes": "Recorded changes", "events": "Business events"}
FILTER_FIELDS = ("incident", "case", "tournament", "player", "user", "model", "since", "until")

MODEL_LABELS = {
    name: model._meta.verbose_name.capitalize()
    for name, (model, *_paths) in audit.HISTORY_MODELS.items()
}
MODEL_LABELS["apitoken"] = "API token"
HISTORY_TYPES = {"+": "Created", "~": "Changed", "-": "Deleted"}

# Stored amounts shown in the record's currency (or as points) in the diffs.
MONEY_FIELDS = {
    "tournament": {"buy_in", "fee", "guarantee", "prize_pool", "seat_value"},
    "case": {"pool"},
    "settlement": {"pool", "pool_distributed"},
}


@require_safe
@role_required(*permissions.HISTORY_READERS)
def history(request):
    """The template reads the page of rows (``history_page``) where it shows it, so a partial
    swap of the header alone reads none."""
    view = request.GET.get("view") if request.GET.get("view") in VIEWS else "changes"
    form = HistoryFilterForm(request.GET, model_choices=list(MODEL_LABELS.items()))
    filters = _filters(form)
    query = {name: request.GET[name] for name in FILTER_FIELDS if request.GET.get(name)}
    number = request.GET.get("page")
    context = {
        "form": form,
        "view": view,
        "views": VIEWS,
        "history_page": partial(_history_page, view, filters, number),
        "query": urlencode(query),
        "query_view": urlencode({**query, "view": view}),
        "incident_id": filters["incident"] if filters else None,
        # Not for a partial: a filter or a page turn swaps only the browser below it.
        "audit": None if request.htmx else audit_log.status(cache=cache),
    }
    status = 200 if filters is not None else 422
    return render_page(
        request, "settlements/history.html", context, partial="history_browser", status=status
    )


def _history_page(view: str, filters: dict | None, number: str | None):
    """The page of changes or events the filters select; None when a filter is wrong."""
    if filters is None:
        return None
    if view == "changes":
        page = peek_page(audit.history_entries(**filters), number, PER_PAGE)
        _annotate_changes(page.items)
    else:
        page = peek_page(_events(filters), number, PER_PAGE)
        _annotate_events(page.items)
    return page


@require_safe
@role_required(*permissions.HISTORY_READERS)
def history_export(request):
    view = request.GET.get("view") if request.GET.get("view") in VIEWS else "changes"
    form = HistoryFilterForm(request.GET, model_choices=list(MODEL_LABELS.items()))
    filters = _filters(form)
    if filters is None:
        raise Http404("These filters are not valid; correct them on the history page.")
    rows = _change_rows(filters) if view == "changes" else _event_rows(filters)
    # Exports are in UTC whatever zone the auditor's pages use, so they compare across desks.
    stamp = timezone.now().astimezone(UTC).strftime("%Y%m%d-%H%MZ")
    return csv_download(csv_chunks(rows), f"crashdesk-{view}-{stamp}.csv")


@require_safe
@role_required(*permissions.HISTORY_READERS)
def audit_head(request):
    status = audit_log.status(cache=cache)
    response = JsonResponse(
        {
            "events": status.count,
            "head": status.head,
            "verified": status.ok,
            "problem": status.problem,
            "whole_chain_verified_at": status.full_at.isoformat() if status.full_at else None,
            "exported_at": timezone.now().isoformat(),
        }
    )
    stamp = timezone.localtime().strftime("%Y%m%d-%H%M")
    response["Content-Disposition"] = f'attachment; filename="crashdesk-audit-head-{stamp}.json"'
    return response


@require_safe
@role_required(*permissions.CASE_HISTORY_READERS)
def history_record(request, model: str, pk: int):
    if model not in audit.HISTORY_MODELS:
        raise Http404("No such kind of record.")
    case_record = model in audit.CASE_RECORDS
    if permissions.history_record_read(user=request.user, case_record=case_record):
        raise PermissionDenied
    versions = audit.record_versions(model, pk)
    page = peek_page(versions, request.GET.get("page"), VERSIONS_PER_PAGE)
    if not page.items and page.number == 1:
        raise Http404("No version of this record was recorded.")
    currency = audit.version_currency(model, page.items[0]) if page.items else ""
    changes = {version.history_id: audit.history_changes(version) for version in page.items}
    usernames = audit.version_usernames(model, changes.values())
    for version in page.items:
        version.type_label = HISTORY_TYPES.get(version.history_type, version.history_type)
        version.shown_changes = [
            {
                "label": change.label,
                "field": change.field,
                "old": _display(model, change.field, change.old, currency, usernames),
                "new": _display(model, change.field, change.new, currency, usernames),
            }
            for change in changes[version.history_id]
        ]
    context = {
        "model": model,
        "model_label": MODEL_LABELS[model],
        "pk": pk,
        "page": page,
        "events": list(audit.event_list(subject_type=model, subject_id=pk)[:50]),
        "title": str(page.items[0].instance) if page.items else f"{MODEL_LABELS[model]} #{pk}",
        "live": _live_link(model, pk, page.items[0] if page.items else None),
        "browses_history": has_role(request.user, *desk_roles.HISTORY_READERS),
    }
    return render_page(request, "settlements/history_record.html", context, partial="versions")


@require_safe
@role_required(*permissions.CASE_HISTORY_READERS)
def incident_timeline(request, incident_id: int):
    try:
        incident = incident_detail(incident_id)
    except Incident.DoesNotExist:
        raise Http404("No such incident.") from None
    page = peek_page(audit.incident_timeline(incident), request.GET.get("page"), TIMELINE_PER_PAGE)
    _annotate_events(page.items)
    context = {
        "incident": incident,
        "page": page,
        "browses_history": has_role(request.user, *desk_roles.HISTORY_READERS),
    }
    return render_page(request, "settlements/incident_timeline.html", context, partial="timeline")


# --- Filters and rows ------------------------------------------------------------------------


def _filters(form: HistoryFilterForm) -> dict | None:
    """The selectors' arguments from valid filters; None when a filter is wrong."""
    if not form.is_valid():
        return None
    data = form.cleaned_data
    since = _start_of(data["since"]) if data["since"] else None
    until = _start_of(data["until"] + timedelta(days=1)) if data["until"] else None
    return {
        "model": data["model"] or None,
        "user": data["user"],
        "since": since,
        "until": until,
        "incident": data["incident"],
        "case": data["case"],
        "tournament": data["tournament"],
        "player": data["player"] or None,
    }


def _start_of(day) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def _events(filters: dict):
    return audit.event_list(
        incident=filters["incident"],
        case=filters["case"],
        tournament=filters["tournament"],
        actor=filters["user"],
        subject_type=filters["model"],
        since=filters["since"],
        until=filters["until"],
        player=filters["player"],
    )


def _annotate_changes(rows: list[dict]) -> None:
    """What the page shows of each change besides its time: its record, kind and author. One
    reversal per record type, not one per row (tests/views/test_history_rows.py counts them)."""
    users = audit.usernames({row["history_user_id"] for row in rows} - {None})
    record_url = RowUrls("history_record")
    for row in rows:
        row["url"] = record_url(row["model"], row["id"])
        row["model_label"] = MODEL_LABELS.get(row["model"], row["model"])
        row["type_label"] = HISTORY_TYPES.get(row["history_type"], row["history_type"])
        row["user"] = users.get(row["history_user_id"], "")


def _annotate_events(events) -> None:
    record_url, incident_url = RowUrls("history_record"), RowUrls("incident_timeline")
    case_url = RowUrls("case_detail")
    for event in events:
        event.subject_url = (
            record_url(event.subject_type, event.subject_id)
            if event.subject_type in audit.HISTORY_MODELS and event.subject_id
            else ""
        )
        event.incident_url = incident_url(event.incident_id) if event.incident_id else ""
        event.case_url = case_url(event.case_id) if event.case_id else ""
        event.when = when(event.at, "seconds")


CHANGE_HEADER = ("at", "record_type", "record_id", "history_id", "change", "user", "reason")
EVENT_HEADER = (
    "at",
    "event",
    "event_id",
    "user",
    "incident",
    "case",
    "tournament",
    "subject_type",
    "subject_id",
    "reason",
    "data",
)


def _change_rows(filters: dict):
    usernames = audit.usernames()
    yield CHANGE_HEADER
    for row in audit.history_entries(**filters).iterator(chunk_size=2000):
        yield (
            _utc(row["history_date"]),
            row["model"],
            row["id"],
            row["history_id"],
            HISTORY_TYPES.get(row["history_type"], row["history_type"]),
            usernames.get(row["history_user_id"], ""),
            row["history_change_reason"] or "",
        )


def _event_rows(filters: dict):
    yield EVENT_HEADER
    for event in _events(filters).iterator(chunk_size=2000):
        yield (
            _utc(event.at),
            event.type,
            event.pk,
            event.actor.get_username() if event.actor else "",
            event.incident_id or "",
            event.case_id or "",
            event.tournament.operator_id if event.tournament else "",
            event.subject_type,
            event.subject_id or "",
            event.reason,
            json.dumps(event.data, sort_keys=True),
        )


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat()


# --- Showing stored values -------------------------------------------------------------------


def _live_link(model: str, pk: int, latest) -> tuple[str, str] | None:
    """The page of the record as it is now, as (url, words), where it has one: a decision or
    a prize withdrawal is shown on its case; a tournament or an API token has no page."""
    if latest is None or latest.history_type == "-":
        return None
    if model in ("decision", "prizewithdrawal"):
        name, target, words = "case_detail", latest.case_id, f"its case, #{latest.case_id}"
    else:
        pages = {
            "incident": ("incident_tournaments", f"Incident #{pk}"),
            "case": ("case_detail", f"Case #{pk}"),
            "settlement": ("settlement_review", f"Settlement #{pk}"),
            "compensation": ("compensation_detail", f"Compensation #{pk}"),
        }
        if model not in pages:
            return None
        (name, words), target = pages[model], pk
    return reverse(name, args=[target]), words


# Engine codes stored without Django choices, in the words the pages use for them.
CODE_LABELS = {
    "option": wording.option_label,
    "decision": wording.option_label,
    "remedy": wording.remedy_label,
}


def _display(model: str, field: str, value, currency: str, usernames: dict) -> str:
    """A stored value as a person reads it: amounts in the currency, people by name,
    records by number, codes by their labels, times in the reader's zone, the rest as
    stored."""
    if value is None or value == "":
        return "—"
    meta = audit.HISTORY_MODELS[model][0]._meta
    model_field = audit.model_field(meta, field)
    choices = dict(model_field.flatchoices) if model_field and model_field.choices else {}
    if isinstance(value, str) and value in choices:
        return str(choices[value])
    if field in CODE_LABELS and isinstance(value, str):
        return CODE_LABELS[field](value)
    if field == "decision_options" and isinstance(value, list):
        return " or ".join(wording.option_label(code) for code in value)
    if field == "policy" and isinstance(value, dict):
        return wording.policy_summary(value)
    related = audit.related_model(meta, field)
    if related is get_user_model():
        return usernames.get(value, f"user #{value}")
    if related is not None:
        return f"{related._meta.verbose_name.capitalize()} #{value}"
    if currency and field in MONEY_FIELDS.get(model, ()) and isinstance(value, int):
        return format_minor_units(value, currency)
    if currency and model == "tournament" and field == "payouts" and isinstance(value, list):
        return ", ".join(format_minor_units(v, currency) for v in value if isinstance(v, int))
    if model == "tournament" and field == "fpp_buy_in" and isinstance(value, int):
        return format_fpp(value)
    if currency and field == "totals" and isinstance(value, dict):
        return _totals_text(value, currency)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ", ".join(value)  # player ids
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, datetime):
        return when(value, "seconds")
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _totals_text(totals: dict, currency: str) -> str:
    """{unit: amount} (compensation) or {unit: {source: amount}} (settlement) in words."""
    parts = []
    for unit, value in totals.items():
        if isinstance(value, dict):
            for source, amount in value.items():
                parts.append(f"{format_in_unit(amount, unit, currency)} from the {source}")
        elif isinstance(value, int):
            parts.append(format_in_unit(value, unit, currency))
    return "; ".join(parts) or "—"
