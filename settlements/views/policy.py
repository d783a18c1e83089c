"""The crash policy page: what it shows is worked out in selectors.policy_page."""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from settlements.access import roles
from settlements.access.decorators import role_required
from settlements.selectors import policy_page
from settlements.site_policy import icm_flag, site_policy


@require_safe
@role_required(*roles.DESK_ROLES)
def crash_policy(request):
    context = policy_page.policy_page(site_policy(), icm_on=icm_flag())
    return render(request, "settlements/policy.html", context)
