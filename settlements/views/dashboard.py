"""The dashboard: what is open, what waits for the signed-in user, and the counts."""

from functools import partial

from django.core.paginator import Paginator
from django.utils import timezone

from settlements import change_mark, selectors
from settlements.access import permissions, roles
from settlements.access.decorators import role_required
from settlements.views.paging import page_number
from settlements.views.rendering import render_page

TEMPLATE = "settlements/dashboard.html"


# The proposed rulebook versions listed at most under "Waiting for you".
DASHBOARD_RULEBOOK_VERSIONS = 10


@role_required(*roles.DESK_ROLES)
def dashboard(request):
    """The parts of the page are cached fragments keyed by the desk's change mark (any business
    change moves it, settlements.change_mark), so a later view reads them instead of the 19
    queries behind them; the template reads the data (the functions below) only on a miss."""
    user = request.user
    held = sorted(roles.user_roles(user))
    # Paging over the count settles the page shown (out of range or not a number gives the
    # last or first page) before its cached fragment is looked up.
    page = Paginator(
        range(selectors.open_incident_count()), selectors.DASHBOARD_INCIDENTS_PER_PAGE
    ).get_page(page_number(request))
    context = {
        "mark": change_mark.mark(),
        "page": page,
        # The queues depend on the roles and, where the user's own work is left out, on the user.
        "queues_of": "+".join(held)
        + (f":{user.pk}" if selectors.waiting_excludes_own_work(user) else ""),
        "reporters": selectors.dashboard_reporters(page),
        # The incidents' times are written in the reader's zone.
        "time_zone": timezone.get_current_timezone_name(),
        "counts": selectors.case_status_counts,
        "waiting": partial(selectors.dashboard_queues, user),
        # Tournament Managers approve others' rulebook versions (their own are left out, which
        # the cache key above already follows).
        "rulebook_versions": partial(_rulebook_versions_waiting, user),
        "incidents": partial(selectors.dashboard_incidents, page),
    }
    return render_page(request, TEMPLATE, context, partial="incident_list")


def _rulebook_versions_waiting(user) -> list:
    if not roles.has_role(user, *permissions.RULEBOOK_WRITERS):
        return []
    return list(selectors.versions_awaiting_approval(user)[:DASHBOARD_RULEBOOK_VERSIONS])
