"""The JSON API of the game servers: report a crash with its snapshot, follow its case.

    POST /api/v1/snapshots[?incident=ID]   the snapshot as the body -> 201 with the new case
    GET  /api/v1/cases[?after=ID&limit=N&status=S&tournament=T&incident=I]
    GET  /api/v1/cases/ID                  the case, and its settlement once prepared (its
                                           lines only for the roles that read the ledger)
    GET  /api/v1/ledger[?after=CURSOR&limit=N]   approved ledger lines, in feed order (cashier)
    POST /api/v1/ledger/confirmations      what the cashier paid or failed to pay (cashier)
    GET  /api/v1/settlements/ID/statements[?after=PLAYER&limit=N | ?player=PLAYER]
                                           the players' statements (roles that see amounts)

Clients authenticate with ``Authorization: Bearer TOKEN`` (``manage.py api_token``) and
nothing else: a session cookie is ignored here, which is why these views are exempt from
CSRF (a browser cannot be tricked into sending a bearer token). Every answer is JSON; every
refusal is ``{"errors": [{"path": ..., "message": ...}]}`` where ``path`` is the snapshot
path of the problem ("$" for the whole document), ``?name`` for a query parameter, or
``Authorization`` for the credentials. The ledger feed's format is described in the README
("The cashier's API").
"""

import base64
import binascii
import logging
from functools import wraps
from itertools import islice

import msgspec
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path, reverse
from django.utils.cache import patch_cache_control
from django.utils.http import urlencode
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt

from settlements import bounds, selectors, services, statements
from settlements.access import permissions, roles
from settlements.errors import DomainError, Duplicate, InvalidTransition, NotAllowed
from settlements.ledger import line_document
from settlements.models import Case, Incident, Settlement, Snapshot
from settlements.rules import InvalidInput
from settlements.selectors import payments as payment_reads
from settlements.services import payments
from settlements.workflow import CaseStatus

log = logging.getLogger("crashdesk.api")

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
# A token is 56 characters; anything much longer is not worth hashing.
MAX_CREDENTIAL_LENGTH = 256
API_PREFIX = "/api/"


def _errors(status: int, *problems: tuple[str, str], **extra) -> JsonResponse:
    body = {"errors": [{"path": where, "message": message} for where, message in problems]}
    return _json({**body, **extra}, status=status)


def _snapshot_errors(problems) -> JsonResponse:
    """A refused snapshot's problems; a problem in a player's row also names the player."""
    errors = []
    for problem in problems:
        error = {"path": problem.path, "message": problem.message}
        if problem.player is not None:
            error["player"] = problem.player
        errors.append(error)
    return _json({"errors": errors}, status=400)


def _json(data: dict, *, status: int = 200) -> JsonResponse:
    response = JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False})
    # Cases and settlements are confidential and change: no cache may keep them.
    patch_cache_control(response, no_store=True, private=True)
    return response


def _bearer_token(request: HttpRequest) -> str | None:
    scheme, _, credentials = request.headers.get("Authorization", "").strip().partition(" ")
    credentials = credentials.strip()
    if scheme.lower() != "bearer" or not credentials or len(credentials) > MAX_CREDENTIAL_LENGTH:
        return None
    return credentials


def api_endpoint(*methods: str, allowed: tuple[str, ...]):
    """Method check (405), bearer authentication (401), role check (403), and a JSON answer
    even for an unexpected error (500). The view receives the token's user."""

    def decorator(view):
        @wraps(view)
        def wrapper(request: HttpRequest, *args, **kwargs):
            try:
                if request.method not in methods:
                    response = _errors(
                        405,
                        ("$", f"Use {' or '.join(methods)} here, not {request.method}."),
                    )
                    response["Allow"] = ", ".join(methods)
                    return response
                raw = _bearer_token(request)
                token = services.api_token_authenticate(raw=raw) if raw else None
                if token is None:
                    return _unauthenticated(request, offered=raw is not None)
                if not roles.has_role(token.user, *allowed):
                    return _errors(
                        403,
                        (
                            "Authorization",
                            f"The user of this token ({token.user.get_username()}) may not "
                            f"do this; it needs the role of {_role_names(allowed)}.",
                        ),
                    )
                return view(request, token.user, *args, **kwargs)
            except Exception:
                log.exception("API request failed: %s %s", request.method, request.path)
                return _server_error_response()

        return csrf_exempt(wrapper)

    return decorator


def _unauthenticated(request: HttpRequest, *, offered: bool) -> JsonResponse:
    if offered:
        log.warning(
            "API request with an unknown or revoked token",
            extra={"path": request.path, "client": request.META.get("REMOTE_ADDR")},
        )
        message = "This token is not valid: unknown, revoked, or its user is deactivated."
        challenge = 'Bearer realm="crashdesk", error="invalid_token"'
    else:
        message = "Send your API token as 'Authorization: Bearer TOKEN'."
        challenge = 'Bearer realm="crashdesk"'
    response = _errors(401, ("Authorization", message))
    response["WWW-Authenticate"] = challenge
    return response


def _role_names(allowed: tuple[str, ...]) -> str:
    return " or ".join(roles.LABELS[role] for role in allowed)


# --- POST /api/v1/snapshots --------------------------------------------------------------------


@api_endpoint("POST", allowed=(roles.OPERATOR,))
def snapshots(request: HttpRequest, user) -> JsonResponse:
    limit = settings.SNAPSHOT_MAX_BYTES
    declared = request.META.get("CONTENT_LENGTH", "").strip()
    if not declared:
        return _errors(411, ("$", "Send the snapshot with a Content-Length header."))
    size = bounds.whole_number(declared)
    if size is None:
        return _errors(400, ("$", "The Content-Length header is not a number of bytes."))
    if size > limit:
        # Refused on the declared size alone: the body is never read.
        return too_large(size, limit)
    # Read at most one byte past the limit, so a body longer than declared cannot fill memory.
    body = request.read(limit + 1)
    if len(body) > limit:
        return too_large(len(body), limit)

    incident = None
    raw_incident = request.GET.get("incident")
    if raw_incident is not None:
        number = bounds.whole_number(raw_incident)
        if number is None:
            return _errors(400, ("?incident", "must be an incident number, in digits 0-9"))
        incident = Incident.objects.filter(pk=number).first()
        if incident is None:
            return _errors(400, ("?incident", f"There is no incident #{number}."))

    try:
        case = services.case_load_snapshot(actor=user, snapshot=body, incident=incident)
    except InvalidInput as invalid:
        return _snapshot_errors(invalid.problems)
    except Duplicate as duplicate:
        return _duplicate(request, duplicate, body)
    except NotAllowed as refusal:
        return _errors(403, ("Authorization", refusal.message))
    except InvalidTransition as refusal:
        where = "?incident" if incident is not None else (refusal.field or "$")
        return _errors(409, (where, refusal.message))
    except DomainError as refusal:
        return _errors(400, (refusal.field or "$", refusal.message))

    url = reverse("api:case", args=[case.pk])
    response = _json(
        {
            "case": case.pk,
            "url": request.build_absolute_uri(url),
            "incident": case.incident_id,
            "stage": case.stage,
            "status": case.status,
            "decision_options": list(case.decision_options),
        },
        status=201,
    )
    response["Location"] = url
    return response


def bad_request(where: str, message: str) -> JsonResponse:
    return _errors(400, (where, message))


def too_large(size: int, limit: int) -> JsonResponse:
    return _errors(413, ("$", f"The snapshot is {size:,} bytes; the limit is {limit:,} bytes."))


def _duplicate(request: HttpRequest, duplicate: Duplicate, body: bytes) -> JsonResponse:
    """409 pointing at the case that already exists. ``same_snapshot`` tells a game server
    that retried after a lost answer that its first post went through."""
    existing = duplicate.existing
    if not isinstance(existing, Case):
        return _errors(409, ("tournament.id", duplicate.message))
    stored = Snapshot.objects.filter(case=existing).values_list("sha256", flat=True).first()
    text = body.decode("utf-8", "replace")
    return _errors(
        409,
        ("tournament.id", duplicate.message),
        case=existing.pk,
        url=request.build_absolute_uri(reverse("api:case", args=[existing.pk])),
        same_snapshot=stored == Snapshot.digest(text),
    )


# --- GET /api/v1/cases and /api/v1/cases/ID ------------------------------------------------------


@api_endpoint("GET", "HEAD", allowed=roles.ALL_ROLES)
def cases(request: HttpRequest, user) -> JsonResponse:
    """Newest first, a page at a time: ``next`` is the URL of the following page (keyset
    pagination on the case id, so pages stay right while new cases arrive)."""
    problems = []
    after = _positive_int(request.GET.get("after"), "?after", problems)
    limit = _positive_int(request.GET.get("limit"), "?limit", problems) or PAGE_SIZE
    if limit > MAX_PAGE_SIZE:
        problems.append(("?limit", f"must be at most {MAX_PAGE_SIZE}"))
    status = request.GET.get("status")
    if status is not None and status not in CaseStatus.values:
        problems.append(("?status", f"must be one of {', '.join(CaseStatus.values)}"))
    incident = _positive_int(request.GET.get("incident"), "?incident", problems)
    if problems:
        return _errors(400, *problems)

    found = selectors.case_list(status=status, incident=incident).order_by("-id")
    tournament = request.GET.get("tournament")
    if tournament is not None:
        found = found.filter(tournament__operator_id=tournament)
    if after is not None:
        found = found.filter(pk__lt=after)
    page = list(found[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    next_url = None
    if more:
        query = request.GET.copy()
        query["after"] = str(page[-1].pk)
        next_url = request.build_absolute_uri(f"{request.path}?{urlencode(query, doseq=True)}")
    return _json({"results": [_case_summary(request, case) for case in page], "next": next_url})


@api_endpoint("GET", "HEAD", allowed=roles.ALL_ROLES)
def case(request: HttpRequest, user, case_id: int) -> JsonResponse:
    try:
        found = selectors.case_detail(case_id)
    except Case.DoesNotExist:
        return _errors(404, ("$", f"There is no case #{case_id}."))
    data = _case_summary(request, found)
    data["policy"] = found.policy or None
    data["engine_version"] = found.engine_version or None
    settlement = selectors.case_current_settlement(found) if found.is_crash else None
    adjustments, documents = [], []
    if settlement is not None:
        adjustments = list(selectors.settlement_adjustments(settlement))
        for record in (settlement, *adjustments):
            record.case = found
        # The stored engine output, in the format of `manage.py settle`: not computed again.
        # Two queries for the settlement and all its adjustments together.
        documents = selectors.settlements_as_dicts([settlement, *adjustments])
    # The lines are the ledger: a role the web refuses it gets the payouts without them.
    if documents and (refusal := permissions.ledger_read(user=user)):
        for document in documents:
            document["lines"] = None
        data["withheld"] = [{"path": "settlement.lines", "message": str(refusal)}]
    data["settlement_id"] = settlement.pk if settlement else None
    data["settlement_status"] = settlement.status if settlement else None
    data["settlement"] = documents[0] if settlement else None
    data["adjustments"] = [
        {"id": adjustment.pk, "status": adjustment.status, "document": document}
        for adjustment, document in zip(adjustments, documents[1:], strict=True)
    ]
    return _json(data)


def _positive_int(raw: str | None, where: str, problems: list) -> int | None:
    if raw is None:
        return None
    number = bounds.whole_number(raw)
    if not number:
        problems.append((where, "must be a whole number above zero, in digits 0-9"))
        return None
    return number


def _case_summary(request: HttpRequest, case: Case) -> dict:
    tournament = case.tournament
    return {
        "id": case.pk,
        "url": request.build_absolute_uri(reverse("api:case", args=[case.pk])),
        "kind": case.kind,
        "status": case.status,
        "incident": case.incident_id,
        "tournament": {
            "id": tournament.operator_id,
            "name": tournament.name,
            "type": tournament.type,
            "currency": tournament.currency,
        },
        "crashed_at": case.crashed_at.isoformat() if case.crashed_at else None,
        "stage": case.stage or None,
        "entrants": case.entrants,
        "eliminated": case.eliminated,
        "remaining": case.remaining,
        "paid_places": case.paid_places,
        "pool": case.pool,
        "decision_options": list(case.decision_options),
        "decision": case.decision or None,
        "created_at": case.created_at.isoformat(),
        "updated_at": case.updated_at.isoformat(),
    }


# --- GET /api/v1/settlements/ID/statements --------------------------------------------------------

STATEMENTS_PAGE_SIZE = 100
STATEMENTS_MAX_PAGE_SIZE = 1000


@api_endpoint("GET", "HEAD", allowed=permissions.AMOUNT_READERS)
def settlement_statements(request: HttpRequest, user, settlement_id: int) -> JsonResponse:
    """The statements of a settlement's entrants, ``limit`` at a time in code-point order of
    their ids after ``after`` (``next`` is the following page's URL); or, with ``player``, that
    one player's, with what else is on record for them. What the statement pages and exports
    show, for a CRM or a mailer: the roles that may see amounts, as there."""
    problems = []
    raw_limit = request.GET.get("limit")
    limit = _positive_int(raw_limit, "?limit", problems) or STATEMENTS_PAGE_SIZE
    if limit > STATEMENTS_MAX_PAGE_SIZE:
        problems.append(("?limit", f"must be at most {STATEMENTS_MAX_PAGE_SIZE}"))
    player, after = request.GET.get("player"), request.GET.get("after")
    if player is not None and (after is not None or raw_limit is not None):
        problems.append(("?player", "asks for one statement: leave out ?after and ?limit"))
    if problems:
        return _errors(400, *problems)
    try:
        settlement = selectors.settlement_detail(settlement_id, people=False)
    except Settlement.DoesNotExist:
        return _errors(404, ("$", f"There is no settlement #{settlement_id}."))
    if settlement.is_adjustment:
        return _errors(
            404,
            (
                "$",
                f"{settlement} is an adjustment; its players' statements are those of the "
                f"settlement it corrects, #{settlement.corrects_id}.",
            ),
        )
    more = False
    if player is not None:
        found = [selectors.player_statement(settlement, player)]
        if found[0] is None:
            return _errors(
                404, ("?player", f"{player!r} was not an entrant of {settlement}'s tournament.")
            )
    else:
        page = selectors.settlement_statements(settlement, after=after, chunk_size=limit + 1)
        found = list(islice(page, limit + 1))
        more, found = len(found) > limit, found[:limit]
    next_url = None
    if more:
        query = request.GET.copy()
        query["after"] = found[-1].player
        next_url = request.build_absolute_uri(f"{request.path}?{urlencode(query, doseq=True)}")
    return _json(
        {
            "settlement": settlement.pk,
            "case": settlement.case_id,
            "settlement_status": settlement.status,
            "statements": [statements.document(statement) for statement in found],
            "next": next_url,
        }
    )


# --- GET /api/v1/ledger ------------------------------------------------------------------------

FEED_PAGE_SIZE = 1000
FEED_MAX_PAGE_SIZE = 10_000
_CURSOR_TAG = b"ledger:"


@api_endpoint("GET", "HEAD", allowed=permissions.CASHIERS)
def ledger(request: HttpRequest, user) -> HttpResponse:
    """Approved lines in feed order, ``limit`` at a time after the opaque ``after`` cursor.

    A line's place is given under the lock that orders commits, so every place up to the
    last one visible is committed: a page never skips a line that appears later, and the
    cursor after it never repeats one (see ``LedgerRelease``).
    """
    problems = []
    raw_cursor = request.GET.get("after")
    after = 0 if raw_cursor is None else decode_cursor(raw_cursor)
    if after is None:
        problems.append(("?after", "is not a cursor this feed gave out"))
    limit = _positive_int(request.GET.get("limit"), "?limit", problems) or FEED_PAGE_SIZE
    if limit > FEED_MAX_PAGE_SIZE:
        problems.append(("?limit", f"must be at most {FEED_MAX_PAGE_SIZE}"))
    if problems:
        return _errors(400, *problems)

    lines = [
        line_document(line)
        for line in payment_reads.approved_lines(after=after, until=after + limit)
    ]
    last = after + len(lines)
    cursor = encode_cursor(last)
    more = len(lines) == limit and payment_reads.last_position() > last
    query = request.GET.copy()
    query["after"] = cursor
    body = {
        "lines": lines,
        "cursor": cursor,
        "more": more,
        "next": request.build_absolute_uri(f"{request.path}?{urlencode(query, doseq=True)}"),
    }
    response = HttpResponse(msgspec.json.encode(body), content_type="application/json")
    patch_cache_control(response, no_store=True, private=True)
    return response


def encode_cursor(position: int) -> str:
    return base64.urlsafe_b64encode(_CURSOR_TAG + str(position).encode()).decode().rstrip("=")


def decode_cursor(raw: str) -> int | None:
    """The place a cursor stands after; None for anything this feed did not give out."""
    if not raw or len(raw) > 40:
        return None
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
    except (binascii.Error, ValueError):
        return None
    number = text.removeprefix(_CURSOR_TAG)
    if number == text or not number.isdigit() or len(number) > 18:
        return None
    return int(number)


# --- POST /api/v1/ledger/confirmations ------------------------------------------------------------

MAX_CONFIRMATIONS = 5000
# About 150 bytes a confirmation; a full batch with room to spare.
CONFIRMATIONS_MAX_BYTES = 4 * 1024 * 1024
_CONFIRMATION_FIELDS = ("idempotency_key", "status", "external_reference", "at", "amount")
_CONFIRMATION_FIELD_SET = frozenset(_CONFIRMATION_FIELDS)


@api_endpoint("POST", allowed=permissions.CASHIERS)
def ledger_confirmations(request: HttpRequest, user) -> JsonResponse:
    """``{"confirmations": [{idempotency_key, status, external_reference, at, amount}, ...]}``;
    each is answered in ``results``, in the order sent. The batch is refused as a whole (400)
    only when it is not such a document."""
    declared = bounds.whole_number(request.META.get("CONTENT_LENGTH", "").strip())
    if declared is not None and declared > CONFIRMATIONS_MAX_BYTES:
        return _errors(413, ("$", f"Send at most {CONFIRMATIONS_MAX_BYTES:,} bytes in one batch."))
    body = request.read(CONFIRMATIONS_MAX_BYTES + 1)
    if len(body) > CONFIRMATIONS_MAX_BYTES:
        return _errors(413, ("$", f"Send at most {CONFIRMATIONS_MAX_BYTES:,} bytes in one batch."))
    try:
        document = msgspec.json.decode(body)
    # Arrays nested some thousands deep exhaust the decoder's stack: not a batch either.
    except (msgspec.DecodeError, RecursionError):
        return _errors(400, ("$", "The body is not a JSON document."))
    items = document.get("confirmations") if isinstance(document, dict) else None
    if not isinstance(items, list) or set(document) != {"confirmations"}:
        return _errors(400, ("$", 'Send {"confirmations": [...]} and nothing else.'))
    if not items:
        return _errors(400, ("confirmations", "List at least one confirmation."))
    if len(items) > MAX_CONFIRMATIONS:
        return _errors(
            400, ("confirmations", f"Send at most {MAX_CONFIRMATIONS:,} confirmations at once.")
        )

    results: list[dict | None] = [None] * len(items)
    valid: list[tuple[int, payments.ConfirmationEntry]] = []
    for index, item in enumerate(items):
        parsed, problem = _confirmation(item, f"confirmations[{index}]")
        if problem is not None:
            key = item.get("idempotency_key") if isinstance(item, dict) else None
            results[index] = _result(key if isinstance(key, str) else None, "refused", *problem)
        else:
            valid.append((index, parsed))
    if valid:
        answers = payments.payment_confirm(
            actor=user, confirmations=[confirmation for _, confirmation in valid]
        )
        for (index, _), answer in zip(valid, answers, strict=True):
            path = f"confirmations[{index}].{answer.field}"
            results[index] = _result(answer.idempotency_key, answer.outcome, path, answer.message)
    counts = {outcome: 0 for outcome in ("recorded", "already_recorded", "refused")}
    for result in results:
        counts[result["outcome"]] += 1
    return _json({"results": results, **counts})


def _confirmation(item, path: str):
    """(ConfirmationEntry, None), or (None, (path, message)) for an item of the wrong shape."""
    if not isinstance(item, dict):
        return None, (path, "must be an object")
    if item.keys() != _CONFIRMATION_FIELD_SET:
        unknown = sorted(item.keys() - _CONFIRMATION_FIELD_SET)
        if unknown:
            return None, (f"{path}.{unknown[0]}", "is not a field of a confirmation")
        missing = next(name for name in _CONFIRMATION_FIELDS if name not in item)
        return None, (f"{path}.{missing}", "is missing")
    key, status, reference = item["idempotency_key"], item["status"], item["external_reference"]
    if not (isinstance(key, str) and isinstance(status, str) and isinstance(reference, str)):
        name = next(
            name
            for name, value in (
                ("idempotency_key", key),
                ("status", status),
                ("external_reference", reference),
            )
            if not isinstance(value, str)
        )
        return None, (f"{path}.{name}", "must be a string")
    amount = item["amount"]
    if isinstance(amount, bool) or not isinstance(amount, int):
        return None, (f"{path}.amount", "must be a whole number of minor units")
    if not isinstance(item["at"], str):
        return None, (f"{path}.at", "must be a string")
    # The snapshot's own rule for times: RFC 3339 with its zone, and within what can be
    # stored and read back (a year-1 time a minute east of UTC was recorded, then broke
    # every page that listed it; an offset past 15:59 was a database error).
    try:
        at = bounds.parse_rfc3339(item["at"])
    except ValueError as problem:
        return None, (f"{path}.at", str(problem))
    return payments.ConfirmationEntry(key, status, reference.strip(), at, amount), None


def _result(key: str | None, outcome: str, path: str = "", message: str = "") -> dict:
    result = {"idempotency_key": key, "outcome": outcome}
    if outcome == "refused":
        result["errors"] = [{"path": path, "message": message}]
    return result


# --- Error pages for /api/ paths -----------------------------------------------------------------


def _server_error_response() -> JsonResponse:
    return _errors(500, ("$", "Something went wrong on our side; it has been logged."))


def server_error(request: HttpRequest, *args, **kwargs):
    """handler500: JSON for API clients, the usual page for people."""
    if request.path.startswith(API_PREFIX):
        return _server_error_response()
    return defaults.server_error(request, *args, **kwargs)


def page_not_found(request: HttpRequest, exception, *args, **kwargs):
    """handler404: JSON for API clients, the usual page for people."""
    if request.path.startswith(API_PREFIX):
        return _errors(404, ("$", f"There is no API endpoint {request.path}."))
    return defaults.page_not_found(request, exception, *args, **kwargs)


app_name = "api"
urlpatterns = [
    path("snapshots", snapshots, name="snapshots"),
    path("cases", cases, name="cases"),
    path("cases/<int:case_id>", case, name="case"),
    path("ledger", ledger, name="ledger"),
    path("ledger/confirmations", ledger_confirmations, name="ledger_confirmations"),
    path(
        "settlements/<int:settlement_id>/statements",
        settlement_statements,
        name="settlement_statements",
    ),
]
