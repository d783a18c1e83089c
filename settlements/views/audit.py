"""The auditor starts a verification of the whole event log as background work.

POST /history/verify/     queue the verification, then follow it on its job's page; its
                          outcome is recorded as an event and shown on the history page
"""

from django.contrib import messages
from django.urls import reverse
from django.views.decorators.http import require_POST

from settlements import services
from settlements.access import roles
from settlements.access.decorators import role_required
from settlements.errors import Duplicate
from settlements.views.rendering import go_to


@require_POST
@role_required(roles.AUDITOR)
def audit_verify(request):
    try:
        job = services.audit_verification_start(actor=request.user)
    except Duplicate as duplicate:
        if duplicate.existing is None:
            raise
        messages.info(request, duplicate.message)
        job = duplicate.existing
    return go_to(request, reverse("job_detail", args=[job.pk]))
