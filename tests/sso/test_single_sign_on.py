"""Single sign-on over OpenID Connect, end to end against a real provider in its own process
(django-oauth-toolkit, tests/sso/provider/): the account and its roles from the provider's
groups, roles that follow the groups at every sign-in (recorded with the provider as source),
the provider's second factor standing in where allowed, and every kind of bad answer refused,
logged, counted and never a server error. Local passwords keep working beside it."""

import logging
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from allauth.socialaccount.models import SocialAccount
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from settlements.access import refusals, roles, second_factor
from settlements.models import Event
from tests.conftest import DEMO_PASSWORD, make_user
from tests.sso.conftest import local, through_provider
from tests.test_access_refusals import counted  # noqa: F401  (fixture)

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

User = get_user_model()


def signed_on(provider, username: str, *groups: str) -> Client:
    provider.groups(username, *groups)
    client = Client()
    answer = client.get(local(through_provider(client, username)))
    assert answer.status_code == 302, answer.content.decode()
    return client


def user_of(username: str):
    return SocialAccount.objects.get(
        provider="sso", extra_data__id_token__preferred_username=username
    ).user


def held(user) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


def test_the_sign_in_page_offers_the_sign_on(provider, client):
    page = client.get(reverse("login")).content.decode()
    assert "Sign in with Test provider" in page
    assert reverse("openid_connect_login", args=["sso"]) in page


def test_a_first_sign_on_makes_the_account_with_the_roles_its_groups_grant(provider):
    client = signed_on(provider, "ana", "desk-approvers", "canteen")

    user = user_of("ana")
    assert held(user) == {roles.TOURNAMENT_MANAGER}
    assert not user.has_usable_password()
    event = Event.objects.get(type=Event.Type.USER_ACCESS_CHANGED, subject_id=user.pk)
    assert event.data["groups_added"] == [roles.TOURNAMENT_MANAGER]
    assert event.data["source"].startswith("identity provider sso")
    assert event.actor is None
    assert "as the identity provider sso" in event.reason
    # A Tournament Manager owes a second factor; the provider's amr does not count by default.
    assert client.get("/")["Location"].startswith(reverse("mfa_activate_totp"))


# allauth says a factor was added once its transaction commits, inside the request: a real
# commit, so that the session saved with the answer carries the proof.
@pytest.mark.django_db(transaction=True)
def test_a_signed_on_approver_sets_up_totp_without_a_password_to_give(provider):
    """Someone who signs on has no password at the desk: adding the second factor the desk
    asks of them must not ask for one."""
    client = signed_on(provider, "ana", "desk-approvers")
    setup = client.get("/", follow=True)
    assert setup.redirect_chain[-1][0].startswith(reverse("mfa_activate_totp"))
    assert "password" not in setup.content.decode().lower()
    secret = setup.context["form"].secret

    answer = client.post(reverse("mfa_activate_totp"), {"code": second_factor.totp_code(secret)})

    assert answer.status_code == 302
    assert second_factor.has_second_factor(user_of("ana"))
    assert client.get("/").status_code == 200


def test_the_providers_second_factor_counts_where_the_operator_says_so(provider, settings):
    settings.SSO = {**settings.SSO, "amr_counts": True}

    client = signed_on(provider, "ana", "desk-approvers")

    assert client.get("/").status_code == 200
    assert second_factor.proved_at(client.session) is not None


def test_roles_follow_the_groups_at_every_sign_in(provider, settings):
    settings.SSO = {**settings.SSO, "amr_counts": True}
    first = signed_on(provider, "ana", "desk-approvers", "desk-audit")
    assert held(user_of("ana")) == {roles.TOURNAMENT_MANAGER, roles.AUDITOR}
    assert first.get("/").status_code == 200

    # Taken out of the approvers' group at the provider: the next sign-in takes the role away.
    second = signed_on(provider, "ana", "desk-audit")

    user = user_of("ana")
    assert held(user) == {roles.AUDITOR}
    removal = Event.objects.filter(
        type=Event.Type.USER_ACCESS_CHANGED, subject_id=user.pk, data__has_key="groups_removed"
    ).get()
    assert removal.data["groups_removed"] == [roles.TOURNAMENT_MANAGER]
    assert removal.data["source"].startswith("identity provider sso")
    # The session that relied on the role is over; the new one goes on.
    assert first.get("/")["Location"].startswith(reverse("login"))
    assert second.get("/").status_code == 200


def test_someone_whose_groups_grant_no_role_gets_no_account(provider):
    provider.groups("cy", "canteen")
    client = Client()

    answer = client.get(local(through_provider(client, "cy")), follow=True)

    assert answer.status_code < 500
    assert not User.objects.filter(socialaccount__isnull=False).exists()
    assert not answer.context["user"].is_authenticated


@pytest.mark.parametrize("mode", ["expired", "audience", "tampered"])
def test_a_bad_id_token_is_refused_logged_and_counted(provider, mode, counted, caplog):  # noqa: F811
    provider.groups("bo", "desk-audit")
    provider.misbehave(mode)
    before = counted()[refusals.SIGN_ON_REFUSED]
    client = Client()

    with caplog.at_level(logging.WARNING, logger="crashdesk.access"):
        answer = client.get(local(through_provider(client, "bo")))

    assert answer.status_code == 400
    assert "did not work" in answer.content.decode()
    assert not User.objects.filter(socialaccount__isnull=False).exists()
    lines = [record for record in caplog.records if record.name == "crashdesk.access"]
    assert [line.refusal for line in lines] == [refusals.SIGN_ON_REFUSED]
    assert counted()[refusals.SIGN_ON_REFUSED] == before + 1


def test_a_forged_state_is_refused(provider, counted):  # noqa: F811
    provider.groups("bo", "desk-audit")
    before = counted()[refusals.SIGN_ON_REFUSED]
    client = Client()
    callback = urlsplit(through_provider(client, "bo"))
    query = parse_qs(callback.query)

    answer = client.get(
        f"{callback.path}?{urlencode({'code': query['code'][0], 'state': 'forged-state'})}"
    )

    assert answer.status_code == 400
    assert not answer.wsgi_request.user.is_authenticated
    assert counted()[refusals.SIGN_ON_REFUSED] == before + 1


def test_a_code_from_another_sign_in_is_worthless(provider):
    """What a nonce would guard against: a code (here the victim's) carried into another
    browser's sign-on. That browser's own state and PKCE verifier do not go with it."""
    provider.groups("bo", "desk-audit")
    victim = Client()
    stolen = parse_qs(urlsplit(through_provider(victim, "bo")).query)["code"][0]
    attacker = Client()
    own = urlsplit(through_provider(attacker, "ana"))
    state = parse_qs(own.query)["state"][0]

    answer = attacker.get(f"{own.path}?{urlencode({'code': stolen, 'state': state})}")

    assert answer.status_code == 400
    assert not User.objects.filter(socialaccount__isnull=False).exists()


def test_a_local_password_still_signs_in(provider, django_user_model):
    make_user(django_user_model, "breakglass", roles.OPERATOR)
    answer = Client().post(reverse("login"), {"username": "breakglass", "password": DEMO_PASSWORD})
    assert answer.status_code == 302
    assert answer["Location"] == reverse("dashboard")
