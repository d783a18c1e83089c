"""Sign-in, the layout, role-aware navigation and the permission checks of every view."""

import pytest
from django.urls import reverse

from tests.views.conftest import HTMX, assert_csp_clean, assert_full_page, signed_in

pytestmark = pytest.mark.django_db


def test_login_page_is_a_plain_form_without_navigation(client):
    response = client.get(reverse("login"))
    html = assert_full_page(response)
    assert "Sign in to CrashDesk" in html
    assert 'name="username"' in html and 'name="password"' in html
    assert 'class="sidenav"' not in html
    assert response.headers["Content-Security-Policy"].startswith("default-src 'self'")


def test_signing_in_lands_on_the_dashboard(client, operator):
    response = client.post(reverse("login"), {"username": "operator", "password": "crashdesk-test"})
    assert response.status_code == 302
    assert response.url == reverse("dashboard")


def test_a_wrong_password_is_refused_with_a_message(client, operator):
    response = client.post(reverse("login"), {"username": "operator", "password": "nope"})
    assert response.status_code == 200
    assert "enter a correct username and password" in response.content.decode()


def test_sign_out_is_a_post_and_get_is_refused(as_operator):
    assert as_operator.get(reverse("logout")).status_code == 405
    response = as_operator.post(reverse("logout"))
    assert response.status_code == 302 and response.url == reverse("login")
    assert as_operator.get(reverse("dashboard")).status_code == 302


def test_top_bar_shows_user_role_and_sign_out_form(as_marketing):
    html = assert_full_page(as_marketing.get(reverse("dashboard")))
    assert "marketing" in html
    assert '<span class="topbar__role">Marketing Manager</span>' in html
    assert f'action="{reverse("logout")}"' in html
    assert "Sign out" in html
    # CSRF token travels with every htmx request.
    assert 'hx-headers=\'{"X-CSRFToken": "' in html
    assert '"includeIndicatorStyles": false' in html


def test_navigation_shows_only_what_the_role_may_use(as_operator, as_marketing):
    operator_html = as_operator.get(reverse("dashboard")).content.decode()
    marketing_html = as_marketing.get(reverse("dashboard")).content.decode()
    assert f'href="{reverse("incident_new")}"' in operator_html
    assert f'href="{reverse("incident_new")}"' not in marketing_html
    assert 'aria-current="page">Dashboard' in operator_html


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("dashboard", {}),
        ("incident_new", {}),
        ("incident_tournaments", {"incident_id": 1}),
        ("incident_upload", {"incident_id": 1}),
        ("case_detail", {"case_id": 1}),
    ],
)
def test_anonymous_visitors_are_sent_to_sign_in(client, name, kwargs):
    url = reverse(name, kwargs=kwargs)
    response = client.get(url)
    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next={url}"


def test_an_expired_session_under_htmx_navigates_to_sign_in(client):
    response = client.get(
        reverse("dashboard"), **HTMX, HTTP_HX_CURRENT_URL="http://testserver/?page=2"
    )
    assert response.status_code == 200
    assert response.headers["HX-Redirect"] == f"{reverse('login')}?next=%2F%3Fpage%3D2"


@pytest.mark.parametrize(
    ("client_fixture", "method", "name"),
    [
        ("as_nobody", "get", "dashboard"),
        ("as_marketing", "get", "incident_new"),
        ("as_manager", "post", "incident_new"),
        ("as_auditor", "get", "incident_upload"),
        ("as_manager", "post", "incident_upload"),
        ("as_auditor", "post", "case_prepare"),
        ("as_marketing", "post", "case_prepare"),
    ],
)
def test_roles_without_the_right_are_refused(request, incident, client_fixture, method, name):
    client = request.getfixturevalue(client_fixture)
    kwargs = {}
    if name.startswith("incident_") and name != "incident_new":
        kwargs = {"incident_id": incident.pk}
    if name == "case_prepare":
        kwargs = {"case_id": 1}
    response = getattr(client, method)(reverse(name, kwargs=kwargs))
    assert response.status_code == 403
    assert "This page is not for your role" in response.content.decode()


def test_superuser_without_a_role_has_no_business_pages(django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "x")
    assert signed_in(admin).get(reverse("dashboard")).status_code == 403


def test_forbidden_page_is_csp_clean(as_nobody):
    assert_csp_clean(as_nobody.get(reverse("dashboard")).content.decode())


@pytest.mark.parametrize("account", ["cashier", "no_role_user"])
def test_an_account_without_a_desk_role_is_told_why_not_sent_back_to_the_dashboard(
    request, account
):
    response = signed_in(request.getfixturevalue(account)).get(reverse("dashboard"))
    page = response.content.decode()
    assert response.status_code == 403
    assert "has no role on the desk" in page and "through the API with a token" in page
    assert "Back to the dashboard" not in page  # it would refuse them again
    assert reverse("user_settings") not in page  # so would their settings
