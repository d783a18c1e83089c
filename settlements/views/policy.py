"""The crash policy page: what it shows is worked out in selectors.policy_page, for the
`default` rulebook's version in force."""

from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_safe

from settlements import selectors
from settlements.access import roles
from settlements.access.decorators import role_required
from settlements.rules import parse_policy
from settlements.selectors import policy_page
from settlements.services.snapshots import DEFAULT_RULEBOOK
from settlements.site_policy import icm_flag


@require_safe
@role_required(*roles.DESK_ROLES)
def crash_policy(request):
    # The migration made its first version in force from the start of time; none is withdrawn
    # once in force, so there always is one.
    version = selectors.version_in_force(DEFAULT_RULEBOOK, timezone.now())
    context = policy_page.policy_page(parse_policy(version.parameters), icm_on=icm_flag())
    context["rulebook_version"] = version
    return render(request, "settlements/policy.html", context)
