"""The layout's pieces: the role-aware left navigation, the roles shown in the top bar, and
the addresses of a list's other pages."""

from django import template
from django.template.defaulttags import querystring
from django.urls import reverse

from settlements import desk_roles
from settlements.access import roles

register = template.Library()

# (label, URL name, roles that may use it). Only entries the user's roles allow are shown;
# every view still checks the role itself.
NAVIGATION = (
    ("Dashboard", "dashboard", desk_roles.DESK_ROLES),
    ("Report a crash", "incident_new", desk_roles.INCIDENT_REPORTERS),
    ("Players", "players", desk_roles.AMOUNT_READERS),
    ("Compensation", "compensation_list", desk_roles.COMPENSATION_READERS),
    ("Individual cases", "individual_case_list", desk_roles.INDIVIDUAL_CASE_READERS),
    ("Payments", "payments", desk_roles.PAYMENT_READERS),
    ("History", "history", desk_roles.HISTORY_READERS),
    ("Access review", "access_review", desk_roles.ACCESS_REVIEWERS),
    ("Crash policy", "policy", desk_roles.DESK_ROLES),
)


@register.simple_tag(takes_context=True)
def navigation(context) -> list[dict]:
    request = context["request"]
    items = []
    for label, url_name, allowed in NAVIGATION:
        if not roles.has_role(request.user, *allowed):
            continue
        url = reverse(url_name)
        current = request.path == url or (url != "/" and request.path.startswith(url))
        items.append({"label": label, "url": url, "current": current})
    return items


@register.simple_tag
def role_labels(user) -> list[str]:
    return roles.role_labels(user)


@register.filter(name="has_role")
def has_role_filter(user, role: str) -> bool:
    """{% if user|has_role:"operator" %}: for showing a control; the view still checks."""
    return roles.has_role(user, role)


@register.filter
def has_desk_role(user) -> bool:
    return roles.has_desk_role(user)


@register.simple_tag(takes_context=True)
def page_url(context, number: int, param: str = "page") -> str:
    """This address with only its page changed, so a list's filters and search stay put."""
    return querystring(context, **{param: number})
