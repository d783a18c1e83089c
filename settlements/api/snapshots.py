"""POST /api/v1/snapshots[?incident=ID]: a game server reports a crash with its snapshot (the
body, in SNAPSHOT.md's format) and gets the new case (201), read by the same parser and
service as the upload page."""

from typing import Annotated

import msgspec
from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.urls import reverse

from settlements import bounds, problems
from settlements.access import permissions
from settlements.api.answers import CaseCreated, DuplicateSnapshot, Refusal
from settlements.api.base import answer, api_endpoint
from settlements.api.reading import Id, read_query
from settlements.demo import build_snapshot
from settlements.errors import DomainError, Duplicate, InvalidTransition, NotAllowed
from settlements.models import Case, Incident, TokenScope
from settlements.rules.snapshot import SnapshotDocument
from settlements.selectors.cases import case_loaded_from, incident_detail
from settlements.services.snapshots import case_load_snapshot


class SnapshotQuery(msgspec.Struct, kw_only=True, frozen=True):
    """The open incident the crash belongs to; without it a new incident is reported."""

    incident: Annotated[
        Id | None, msgspec.Meta(description="An open incident; without it a new one is reported.")
    ] = None


@api_endpoint(
    "POST",
    scope=TokenScope.SNAPSHOTS_WRITE,
    allowed=permissions.SNAPSHOT_LOADERS,
    query=SnapshotQuery,
    body=SnapshotDocument,
    answers={201: CaseCreated, 409: DuplicateSnapshot, 411: Refusal, 413: Refusal},
    links={201: {"case": ("case", {"case_id": "$response.body#/case"})}},
    example=build_snapshot(tournament_id="T-20261130-0042", name="Sunday 200", entrants=10),
)
def snapshots(request: HttpRequest, user) -> JsonResponse:
    """Report a crash with the tournament's snapshot.

    The body is the snapshot (SNAPSHOT.md); the answer is the new case. Sent again after a lost
    answer, it is refused with 409 and `same_snapshot` true: the first post went through and
    nothing is written twice."""
    limit = settings.SNAPSHOT_MAX_BYTES
    declared = request.META.get("CONTENT_LENGTH", "").strip()
    if not declared:
        return problems.refusal(411, "$", "Send the snapshot with a Content-Length header.")
    size = bounds.whole_number(declared)
    if size is None:
        return problems.refusal(400, "$", "The Content-Length header is not a number of bytes.")
    if size > limit:
        # Refused on the declared size alone: the body is never read.
        return problems.snapshot_too_large(size, limit)
    # Read at most one byte past the limit, so a body longer than declared cannot fill memory.
    body = request.read(limit + 1)
    if len(body) > limit:
        return problems.snapshot_too_large(len(body), limit)

    query = read_query(request.GET, SnapshotQuery)
    incident = None
    if query.incident is not None:
        try:
            incident = incident_detail(query.incident)
        except Incident.DoesNotExist:
            return problems.refusal(400, "?incident", f"There is no incident #{query.incident}.")

    try:
        case = case_load_snapshot(actor=user, snapshot=body, incident=incident)
    except Duplicate as duplicate:
        return _duplicate(request, duplicate, body)
    except NotAllowed as refusal:
        return problems.refusal(403, "Authorization", refusal.message)
    except InvalidTransition as refusal:
        where = "?incident" if incident is not None else (refusal.field or "$")
        return problems.refusal(409, where, refusal.message)
    except DomainError as refusal:
        return problems.refusal(400, refusal.field or "$", refusal.message)

    url = reverse("api:case", args=[case.pk])
    response = answer(
        {
            "case": case.pk,
            "url": request.build_absolute_uri(url),
            "incident": case.incident_id,
            "stage": case.stage,
            "status": case.status,
            "decision_options": list(case.decision_options),
        },
        CaseCreated,
        status=201,
    )
    response["Location"] = url
    return response


def _duplicate(request: HttpRequest, duplicate: Duplicate, body: bytes) -> JsonResponse:
    """409 pointing at the case that already exists. ``same_snapshot`` tells a game server
    that retried after a lost answer that its first post went through."""
    existing = duplicate.existing
    if not isinstance(existing, Case):
        return problems.refusal(409, "tournament.id", duplicate.message)
    return problems.refusal(
        409,
        "tournament.id",
        duplicate.message,
        case=existing.pk,
        url=request.build_absolute_uri(reverse("api:case", args=[existing.pk])),
        same_snapshot=case_loaded_from(existing, body.decode("utf-8", "replace")),
    )
