"""Proving who you are, in Chromium: setting up an authenticator app at the first sign-in,
adding a passkey through Chromium's virtual authenticator and signing in with it, the second
factor asked again before an approval when the last proof is old, and single sign-on through
the test provider (tests/sso/) as a browser goes through it."""

import re
import time

import pytest
from allauth.mfa.models import Authenticator
from django.contrib.auth import get_user_model
from django.core.cache import caches
from playwright.sync_api import expect

from settlements.access import roles, second_factor
from settlements.models import Settlement
from settlements.services.settlements import settlement_prepare, settlement_submit
from settlements.services.snapshots import case_load_snapshot
from settlements.workflow import SettlementStatus
from tests.conftest import DEMO_PASSWORD, TEST_TOTP_SECRET, make_user, snapshot_bytes
from tests.e2e import axe
from tests.e2e.conftest import fresh_totp_code
from tests.sso.conftest import PASSWORD, provider, provider_process  # noqa: F401  (fixtures)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def password_sign_in(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def no_axe_violations(page) -> None:
    found = axe.violations(page)
    assert not found, found


def test_an_authenticator_app_is_set_up_at_the_first_sign_in(new_page):
    page = new_page()
    make_user(get_user_model(), "boss", roles.TOURNAMENT_MANAGER)

    password_sign_in(page, "boss")
    # allauth asks for the password again before a factor is added.
    page.wait_for_url("**/accounts/reauthenticate/**")
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Confirm").click()
    page.wait_for_url("**/accounts/2fa/totp/activate/**")
    no_axe_violations(page)
    secret = page.get_by_label("Authenticator secret").input_value()
    page.get_by_label("Authenticator code").fill(fresh_totp_code(secret))
    page.get_by_role("button", name="Activate").click()

    page.wait_for_url(re.compile(r"/(accounts/2fa/recovery-codes/.*)?$"))
    kinds = set(Authenticator.objects.filter(user__username="boss").values_list("type", flat=True))
    assert Authenticator.Type.TOTP in kinds
    page.goto("/")
    expect(page.get_by_role("heading", name="Waiting for you")).to_be_visible()


def test_a_passkey_is_added_and_signs_in(new_page, settings):
    # Passkeys need a secure origin; the live server is plain http on localhost.
    settings.MFA_WEBAUTHN_ALLOW_INSECURE_ORIGIN = True
    user = make_user(get_user_model(), "boss", roles.TOURNAMENT_MANAGER)
    second_factor.set_totp_secret(user=user, secret=TEST_TOTP_SECRET)
    page = new_page()
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
            }
        },
    )
    password_sign_in(page, "boss")
    page.wait_for_url("**/accounts/2fa/reauthenticate/**")
    page.get_by_placeholder("Code").fill(fresh_totp_code(TEST_TOTP_SECRET))
    page.get_by_role("button", name="Confirm").click()
    page.wait_for_url(re.compile(r"://[^/]+/$"))

    page.goto("/accounts/2fa/webauthn/add/")
    if "/accounts/reauthenticate/" in page.url:
        page.get_by_label("Password").fill(DEMO_PASSWORD)
        page.get_by_role("button", name="Confirm").click()
        page.wait_for_url("**/accounts/2fa/webauthn/add/**")
    page.get_by_label("Name").fill("Laptop")
    page.get_by_role("button", name="Add", exact=True).click()
    # Anchored: the add page's own URL would match at once, before the passkey is saved.
    page.wait_for_url(re.compile(r"/accounts/2fa/(webauthn/|recovery-codes/)?$"))
    assert Authenticator.objects.filter(user=user, type=Authenticator.Type.WEBAUTHN).exists()

    # A new sign-in proves the factor with the passkey instead of a code.
    page.get_by_role("button", name="Sign out").click()
    password_sign_in(page, "boss")
    page.wait_for_url("**/accounts/2fa/reauthenticate/**")
    page.goto("/accounts/2fa/webauthn/reauthenticate/?next=/")
    page.get_by_role("button", name="Use a security key").click()
    page.wait_for_url(re.compile(r"/$"))
    expect(page.get_by_role("heading", name="Waiting for you")).to_be_visible()


def test_an_approval_asks_for_the_second_factor_again_when_the_proof_is_old(
    signed_in_page, settings
):
    operator = make_user(get_user_model(), "operator", roles.OPERATOR)
    case = case_load_snapshot(
        actor=operator, snapshot=snapshot_bytes(type="regular", stage="middle")
    )
    settlement = settlement_submit(
        settlement=settlement_prepare(case=case, actor=operator), actor=operator
    )
    settings.STEP_UP_MAX_AGE = 2
    page = signed_in_page(roles.TOURNAMENT_MANAGER)
    page.goto(f"/settlements/{settlement.pk}/approve/")
    time.sleep(2.5)

    page.get_by_label("Reason").fill("Checked the lines.")
    page.get_by_role("button", name=f"Approve settlement #{settlement.pk}").click()

    page.wait_for_url("**/accounts/2fa/reauthenticate/**")
    assert Settlement.objects.get(pk=settlement.pk).status == SettlementStatus.AWAITING_APPROVAL
    caches["default"].clear()  # the sign-in's code, used moments ago, would count as replayed
    page.get_by_placeholder("Code").fill(fresh_totp_code(TEST_TOTP_SECRET))
    page.get_by_role("button", name="Confirm").click()
    expect(page).to_have_url(re.compile(rf"/settlements/{settlement.pk}/approve/$"))
    settings.STEP_UP_MAX_AGE = 600
    page.get_by_label("Reason").fill("Checked the lines.")
    page.get_by_role("button", name=f"Approve settlement #{settlement.pk}").click()
    expect(page.get_by_text(f"Settlement #{settlement.pk} approved.")).to_be_visible()


def test_single_sign_on_through_the_test_provider(new_page, provider, live_server, settings):  # noqa: F811
    settings.SSO = {**settings.SSO, "amr_counts": True}
    # As settings.py adds the issuer's origin to form-action when OIDC_ISSUER is set.
    issuer_origin = provider.issuer.removesuffix("/o")
    settings.SECURE_CSP = {
        **settings.SECURE_CSP,
        "form-action": [*settings.SECURE_CSP["form-action"], issuer_origin],
    }
    provider.control("redirect", f"{live_server.url}/accounts/oidc/sso/login/callback/")
    provider.groups("ana", "desk-audit")
    page = new_page()

    page.goto("/accounts/login/")
    no_axe_violations(page)
    page.get_by_role("button", name="Sign in with Test provider").click()
    # allauth's page that starts the sign-on asks to go on (a GET alone never signs anyone in).
    if "/accounts/oidc/" in page.url:
        page.get_by_role("button", name=re.compile("continue", re.I)).click()
    page.wait_for_url(re.compile(r"127\.0\.0\.1:\d+/accounts/login/"))
    page.get_by_label("Username").fill("ana")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()

    page.wait_for_url(f"{live_server.url}/")
    expect(page.get_by_text("Access review due now")).to_be_visible()
    page.get_by_role("link", name="Access review").first.click()
    expect(page.get_by_role("heading", name="Who holds which access")).to_be_visible()
    expect(page.get_by_text("Single sign-on").first).to_be_visible()
