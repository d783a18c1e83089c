"""The crash policy page: what it shows is worked out in selectors.policy_page, for a
rulebook's version in force (the `default` rulebook's unless the page is asked for another)."""

from django.http import Http404
from django.shortcuts import render
from django.utils.timezone import now
from django.views.decorators.http import require_safe

from settlements.access import roles
from settlements.access.decorators import role_required
from settlements.rules import parse_policy
from settlements.selectors import policy_page
from settlements.selectors.rulebooks import versions_in_force
from settlements.services.snapshots import DEFAULT_RULEBOOK
from settlements.site_policy import icm_flag


@require_safe
@role_required(*roles.DESK_ROLES)
def crash_policy(request):
    """The policy of the rulebook ``?rulebook=`` names (``default`` when none), as its version
    in force now has it, with the other rulebooks in force to switch to."""
    in_force = {version.rulebook.key: version for version in versions_in_force(now())}
    key = request.GET.get("rulebook") or DEFAULT_RULEBOOK
    if key not in in_force:
        raise Http404("No rulebook with that key is in force.")
    # The migration made the default's first version in force from the start of time; none is
    # withdrawn once in force, so the default always has one.
    version = in_force[key]
    context = policy_page.policy_page(parse_policy(version.parameters), icm_on=icm_flag())
    context["rulebook_version"] = version
    context["rulebooks_in_force"] = list(in_force.values())
    return render(request, "settlements/policy.html", context)
