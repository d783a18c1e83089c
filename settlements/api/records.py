"""GET /api/v1/incidents/ID/record: the incident's sealed record as one zip archive, for the
auditor to verify offline (``python -m settlements.audit verify``)."""

from django.http import HttpRequest, HttpResponse

from settlements import problems
from settlements.access import permissions
from settlements.api.answers import Refusal, ZipArchive
from settlements.api.base import api_endpoint
from settlements.desk_roles import HISTORY_READERS
from settlements.exports.incident_record import record_download
from settlements.models import Incident, TokenScope
from settlements.selectors.cases import incident_detail


@api_endpoint(
    "GET",
    scope=TokenScope.CASES_READ,
    # Those who may read the history (permissions.incident_record_export).
    allowed=HISTORY_READERS,
    answers={200: ZipArchive, 404: Refusal},
)
def incident_record(request: HttpRequest, user, incident_id: int) -> HttpResponse:
    """The incident's sealed record: every snapshot, decision, settlement with its lines and
    payouts, confirmation, compensation and history version, the events that seal them, and
    the chain's head when it was exported. The layout is in docs/operations.md."""
    permissions.enforce(permissions.incident_record_export(user=user))
    try:
        incident = incident_detail(incident_id)
    except Incident.DoesNotExist:
        return problems.refusal(404, "$", f"There is no incident #{incident_id}.")
    return record_download(incident)
