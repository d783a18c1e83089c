"""The records a URL names, or a 404."""

from django.http import Http404

from settlements.models import Case, Compensation, Incident, Job, Tournament
from settlements.selectors.cases import case_detail, incident_detail
from settlements.selectors.compensation import compensation_detail
from settlements.selectors.incidents import tournament_detail
from settlements.selectors.jobs import job_detail


def case_or_404(case_id: int) -> Case:
    try:
        return case_detail(case_id)
    except Case.DoesNotExist:
        raise Http404("No such case.") from None


def incident_or_404(incident_id: int) -> Incident:
    try:
        return incident_detail(incident_id)
    except Incident.DoesNotExist:
        raise Http404("No such incident.") from None


def compensation_or_404(compensation_id: int) -> Compensation:
    try:
        return compensation_detail(compensation_id)
    except Compensation.DoesNotExist:
        raise Http404("No such compensation.") from None


def tournament_or_404(tournament_id: int) -> Tournament:
    try:
        return tournament_detail(tournament_id)
    except Tournament.DoesNotExist:
        raise Http404("No such tournament.") from None


def job_or_404(job_id: int) -> Job:
    try:
        return job_detail(job_id)
    except Job.DoesNotExist:
        raise Http404("No such job.") from None
