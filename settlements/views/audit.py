"""The auditor's verification of the event log, its checkpoints, and an incident's record.

POST /history/verify/                       queue the verification, then follow it on its
                                            job's page; its outcome is recorded as an event
                                            and shown on the history page
GET  /history/checkpoints/                  the checkpoints verifications ended with, newest
                                            first: what each read, and whether its signature
                                            still holds
GET  /history/incidents/<id>/record.zip     the incident's sealed record, to verify offline
                                            (``python -m settlements.audit verify``)
"""

from django.contrib import messages
from django.http import Http404
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from settlements import checkpoints
from settlements.access import permissions
from settlements.access.decorators import role_required
from settlements.errors import Duplicate
from settlements.exports.incident_record import record_download
from settlements.models import Incident
from settlements.selectors import audit
from settlements.selectors.cases import incident_detail
from settlements.services.jobs import audit_verification_start
from settlements.views.paging import peek_page
from settlements.views.rendering import go_to, render_page

CHECKPOINTS_PER_PAGE = 25


@require_POST
@role_required(*permissions.HISTORY_READERS)
def audit_verify(request):
    try:
        job = audit_verification_start(actor=request.user)
    except Duplicate as duplicate:
        if duplicate.existing is None:
            raise
        messages.info(request, duplicate.message)
        job = duplicate.existing
    return go_to(request, reverse("job_detail", args=[job.pk]))


@require_safe
@role_required(*permissions.HISTORY_READERS)
def audit_checkpoints(request):
    page = peek_page(audit.audit_checkpoints(), request.GET.get("page"), CHECKPOINTS_PER_PAGE)
    for checkpoint in page.items:
        checkpoint.signed = checkpoints.is_signed(checkpoint)
        checkpoint.read = checkpoint.events - checkpoint.first + 1
    return render_page(
        request, "settlements/audit_checkpoints.html", {"page": page}, partial="checkpoints"
    )


@require_safe
@role_required(*permissions.HISTORY_READERS)
def incident_record(request, incident_id: int):
    permissions.enforce(permissions.incident_record_export(user=request.user))
    try:
        incident = incident_detail(incident_id)
    except Incident.DoesNotExist:
        raise Http404("No such incident.") from None
    return record_download(incident)
