"""Single sign-on over OpenID Connect: django-allauth's ``openid_connect`` provider, fitted to
the desk.

GET  /accounts/oidc/sso/login/            allauth's page that starts a sign-on (POST to go)
GET  /accounts/oidc/sso/login/callback/   the provider sends the person back here

- The ID token's signature is always checked against the provider's published keys, even
  though it came straight from the token endpoint (OpenID Connect lets a client skip that over
  TLS; a proxy that terminates TLS wrongly, or a mistyped endpoint, should not be trusted with
  who signs in). Its issuer, audience and expiry are checked by allauth, the state against the
  session, and the code is bound to this browser by PKCE.
- An account is made at the first sign-on only for someone whose groups grant a desk role.
- At every sign-on the person's roles become those their groups grant
  (``services.user_roles_follow_provider``), before the session starts, so that a role taken
  away ends the sessions that relied on it but not the new one.
- The provider's ``amr`` claim stands in for the second factor where the operator says so.
- Every refusal is counted and logged (``access.refusals``); the person sees allauth's page
  that says the sign-on failed, never a server error.
"""

from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.models import SocialApp
from allauth.socialaccount.providers.oauth2.views import OAuth2CallbackView, OAuth2LoginView
from allauth.socialaccount.providers.openid_connect.views import OpenIDConnectOAuth2Adapter
from django.http import Http404
from django.shortcuts import render

from settlements.access import refusals, second_factor, sso
from settlements.services.sign_on import user_roles_follow_provider


class SignOnAdapter(DefaultSocialAccountAdapter):
    """allauth's hooks (``SOCIALACCOUNT_ADAPTER``)."""

    def is_open_for_signup(self, request, sociallogin) -> bool:
        # Nobody without a desk role gets an account, whatever the provider says of them.
        return bool(sso.roles_granted(sso.id_token_claims(sociallogin)))

    def pre_social_login(self, request, sociallogin) -> None:
        if sociallogin.is_existing:
            _follow_provider(request, sociallogin.user, sociallogin)

    def save_user(self, request, sociallogin, form=None):
        user = super().save_user(request, sociallogin, form)
        _follow_provider(request, user, sociallogin)
        return user

    def on_authentication_error(
        self, request, provider, error=None, exception=None, extra_context=None
    ) -> None:
        refusals.refused(
            refusals.SIGN_ON_REFUSED,
            provider=getattr(provider, "id", str(provider)),
            error=str(error),
            detail=str(exception) if exception else "",
        )
        raise ImmediateHttpResponse(render(request, "settlements/sign_on_failed.html", status=400))


def _follow_provider(request, user, sociallogin) -> None:
    claims = sso.id_token_claims(sociallogin)
    user_roles_follow_provider(user=user, granted=sso.roles_granted(claims), source=sso.source())
    if sso.second_factor_proved(claims):
        second_factor.stamp_proof(request.session)


class VerifyingAdapter(OpenIDConnectOAuth2Adapter):
    """allauth's OpenID Connect adapter, checking the ID token's signature every time."""

    def complete_login(self, request, app, token, **kwargs):
        # allauth skips the signature for a token it fetched itself (OIDC Core 3.1.3.7); saying
        # it did not fetch it makes allauth check it against the provider's keys.
        self.did_fetch_access_token = False
        return super().complete_login(request, app, token, **kwargs)


def login(request, provider_id):
    try:
        return OAuth2LoginView.adapter_view(VerifyingAdapter(request, provider_id))(request)
    except SocialApp.DoesNotExist as missing:
        raise Http404("No such sign-on.") from missing


def callback(request, provider_id):
    try:
        return OAuth2CallbackView.adapter_view(VerifyingAdapter(request, provider_id))(request)
    except SocialApp.DoesNotExist as missing:
        raise Http404("No such sign-on.") from missing
