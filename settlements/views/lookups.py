"""The records a URL names, or a 404."""

from django.http import Http404

from settlements import selectors
from settlements.models import Case


def case_or_404(case_id: int) -> Case:
    try:
        return selectors.case_detail(case_id)
    except Case.DoesNotExist:
        raise Http404("No such case.") from None
