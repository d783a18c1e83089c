"""The second factor (django-allauth's MFA): who must have one, set up on first sign-in, proved
after the password, and bad codes refused without a server error."""

import pytest
from allauth.mfa.models import Authenticator
from django.test import Client
from django.urls import reverse

from settlements.access import roles, second_factor
from tests.conftest import DEMO_PASSWORD, TEST_TOTP_SECRET, make_user

pytestmark = pytest.mark.django_db


def password_sign_in(username: str) -> Client:
    client = Client()
    answer = client.post(reverse("login"), {"username": username, "password": DEMO_PASSWORD})
    assert answer.status_code == 302, answer
    return client


@pytest.mark.parametrize("role", [roles.TOURNAMENT_MANAGER, roles.AUDITOR])
def test_a_required_role_without_a_factor_is_sent_to_set_one_up(django_user_model, role):
    make_user(django_user_model, "someone", role)
    client = password_sign_in("someone")

    answer = client.get("/")

    assert answer.status_code == 302
    assert answer["Location"].startswith(reverse("mfa_activate_totp"))
    assert "next=%2F" in answer["Location"]


def test_a_superuser_without_a_factor_is_sent_to_set_one_up(django_user_model):
    make_user(django_user_model, "root", is_superuser=True, is_staff=True)
    client = password_sign_in("root")

    answer = client.get("/admin/")

    assert answer["Location"].startswith(reverse("mfa_activate_totp"))


def test_an_htmx_request_is_sent_on_by_a_client_redirect(django_user_model):
    make_user(django_user_model, "someone", roles.AUDITOR)
    client = password_sign_in("someone")

    answer = client.get("/", HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL="http://testserver/")

    assert answer["HX-Redirect"].startswith(reverse("mfa_activate_totp"))


def test_an_operator_without_a_factor_goes_straight_in(django_user_model):
    make_user(django_user_model, "op", roles.OPERATOR)
    client = password_sign_in("op")

    assert client.get("/").status_code == 200
    # Seen once to have no factor: later pages ask nothing more of the database.
    assert client.session[second_factor.NO_FACTOR_KEY] is True


def test_an_operator_who_set_up_a_factor_must_prove_it(django_user_model):
    user = make_user(django_user_model, "op", roles.OPERATOR)
    second_factor.set_totp_secret(user=user, secret=TEST_TOTP_SECRET)
    client = password_sign_in("op")

    answer = client.get("/")

    assert answer["Location"].startswith(reverse("mfa_reauthenticate"))


def test_the_right_code_lets_the_user_in_and_back_to_the_page(django_user_model):
    user = make_user(django_user_model, "boss", roles.TOURNAMENT_MANAGER)
    second_factor.set_totp_secret(user=user, secret=TEST_TOTP_SECRET)
    client = password_sign_in("boss")
    assert client.get("/policy/")["Location"].startswith(reverse("mfa_reauthenticate"))

    answer = client.post(
        f"{reverse('mfa_reauthenticate')}?next=/policy/",
        {"code": second_factor.totp_code(TEST_TOTP_SECRET)},
    )

    assert answer.status_code == 302
    assert answer["Location"] == "/policy/"
    assert client.get("/policy/").status_code == 200
    assert second_factor.proved_at(client.session) is not None


def test_a_wrong_code_is_refused_on_the_page(django_user_model):
    user = make_user(django_user_model, "boss", roles.TOURNAMENT_MANAGER)
    second_factor.set_totp_secret(user=user, secret=TEST_TOTP_SECRET)
    client = password_sign_in("boss")
    right = second_factor.totp_code(TEST_TOTP_SECRET)
    wrong = f"{(int(right) + 1) % 1_000_000:06d}"

    answer = client.post(reverse("mfa_reauthenticate"), {"code": wrong})

    assert answer.status_code == 200
    assert "Incorrect code" in answer.content.decode()
    assert client.get("/")["Location"].startswith(reverse("mfa_reauthenticate"))


@pytest.mark.parametrize("code", ["", "abc", "1" * 200, "12 34 56\x00"])
def test_garbage_codes_are_refused_without_a_server_error(django_user_model, code):
    user = make_user(django_user_model, "boss", roles.TOURNAMENT_MANAGER)
    second_factor.set_totp_secret(user=user, secret=TEST_TOTP_SECRET)
    client = password_sign_in("boss")

    answer = client.post(reverse("mfa_reauthenticate"), {"code": code})

    assert answer.status_code == 200
    assert second_factor.proved_at(client.session) is None


def test_a_replayed_code_is_refused(django_user_model):
    user = make_user(django_user_model, "boss", roles.TOURNAMENT_MANAGER)
    second_factor.set_totp_secret(user=user, secret=TEST_TOTP_SECRET)
    code = second_factor.totp_code(TEST_TOTP_SECRET)
    first = password_sign_in("boss")
    assert first.post(reverse("mfa_reauthenticate"), {"code": code}).status_code == 302

    # Someone who saw the code typed in uses it again, in their own session.
    second = password_sign_in("boss")
    answer = second.post(reverse("mfa_reauthenticate"), {"code": code})

    assert answer.status_code == 200
    assert second_factor.proved_at(second.session) is None


# allauth says a factor was added once its transaction commits, inside the request: a real
# commit, so that the session saved with the answer carries the proof.
@pytest.mark.django_db(transaction=True)
def test_first_sign_in_sets_up_totp_with_recovery_codes(django_user_model):
    make_user(django_user_model, "boss", roles.TOURNAMENT_MANAGER)
    client = password_sign_in("boss")
    setup = client.get("/", follow=True)
    # allauth asks for the password once more before a factor is added.
    assert setup.redirect_chain[-1][0].startswith(reverse("account_reauthenticate"))
    confirmed = client.post(setup.redirect_chain[-1][0], {"password": DEMO_PASSWORD}, follow=True)
    assert confirmed.status_code == 200
    secret = confirmed.context["form"].secret

    answer = client.post(reverse("mfa_activate_totp"), {"code": second_factor.totp_code(secret)})

    assert answer.status_code == 302
    kinds = set(Authenticator.objects.filter(user__username="boss").values_list("type", flat=True))
    assert kinds == {Authenticator.Type.TOTP, Authenticator.Type.RECOVERY_CODES}
    assert client.get("/").status_code == 200


def test_a_recovery_code_works_once(django_user_model):
    from allauth.mfa.recovery_codes.internal.auth import RecoveryCodes

    user = make_user(django_user_model, "boss", roles.TOURNAMENT_MANAGER)
    second_factor.set_totp_secret(user=user, secret=TEST_TOTP_SECRET)
    code = RecoveryCodes.activate(user).get_unused_codes()[0]

    first = password_sign_in("boss")
    assert first.post(reverse("mfa_reauthenticate"), {"code": code}).status_code == 302
    second = password_sign_in("boss")
    answer = second.post(reverse("mfa_reauthenticate"), {"code": code})

    assert answer.status_code == 200
    assert second_factor.proved_at(second.session) is None


def test_passkeys_are_offered(django_user_model):
    user = make_user(django_user_model, "boss", roles.TOURNAMENT_MANAGER)
    second_factor.set_totp_secret(user=user, secret=TEST_TOTP_SECRET)
    client = Client()
    client.force_login(user)

    answer = client.get(reverse("mfa_index"))

    assert answer.status_code == 200
    assert reverse("mfa_add_webauthn") in answer.content.decode()
