"""Single sign-on over OpenID Connect: what the identity provider's ID token says about a person.

The sign-on itself is django-allauth's ``openid_connect`` provider, configured from the
environment (``settings.SSO``, ``SOCIALACCOUNT_PROVIDERS``); ``views.sign_on`` is where it meets
the desk. Here: the roles a token's groups grant (``OIDC_ROLE_GROUPS``), and whether its
``amr`` claim names a second factor the operator lets stand in for ours.
"""

from django.conf import settings

from settlements.access import roles

# allauth's name for the provider (its URLs are openid_connect_login and _callback).
PROVIDER = "openid_connect"


def enabled() -> bool:
    return bool(settings.SOCIALACCOUNT_PROVIDERS.get(PROVIDER, {}).get("APPS"))


def source() -> str:
    """How a change made by the provider is named in the record."""
    return f"identity provider {settings.SSO['provider_id']} ({settings.SSO['name']})"


def id_token_claims(sociallogin) -> dict:
    """The ID token's claims, as allauth checked and kept them."""
    claims = sociallogin.account.extra_data.get("id_token")
    return claims if isinstance(claims, dict) else {}


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


def roles_granted(claims: dict) -> set[str]:
    """The desk roles the token's groups map to; a group not mapped grants nothing, and a
    mapping to a role the desk does not know is refused at start (checks.E004)."""
    mapping = settings.SSO["roles"]
    groups = _strings(claims.get(settings.SSO["groups_claim"]))
    return {mapping[group] for group in groups if mapping.get(group) in roles.KNOWN_ROLES}


def second_factor_proved(claims: dict) -> bool:
    """Whether the provider says it checked a second factor, and the operator lets that count."""
    if not settings.SSO["amr_counts"]:
        return False
    return bool(set(_strings(claims.get("amr"))) & set(settings.SSO["amr_values"]))


def offered() -> dict | None:
    """What the sign-in page shows of the sign-on, or None when there is none."""
    if not enabled():
        return None
    return {"provider_id": settings.SSO["provider_id"], "name": settings.SSO["name"]}
