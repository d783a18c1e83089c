"""Browser-facing hardening: the Content-Security-Policy header and login throttling."""

from html.parser import HTMLParser

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.urls import reverse

PASSWORD = "correct horse battery staple"


class _Inventory(HTMLParser):
    """Collects what a strict CSP would block: scripts and styles not allowed by the policy."""

    def __init__(self):
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.inline_styles: list[str] = []
        self.inline_handlers: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "script":
            self.scripts.append(attributes)
        if tag == "style" or "style" in attributes:
            self.inline_styles.append(tag)
        self.inline_handlers += [name for name in attributes if name.startswith("on")]


def _directives(header: str) -> dict[str, list[str]]:
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


@pytest.mark.django_db
def test_login_page_carries_a_strict_content_security_policy(client):
    response = client.get(reverse("login"))

    assert response.status_code == 200
    header = response["Content-Security-Policy"]
    assert "unsafe-inline" not in header
    assert "unsafe-eval" not in header
    directives = _directives(header)
    assert directives["default-src"] == ["'self'"]
    assert directives["script-src"][0] == "'self'"
    assert all(s == "'self'" or s.startswith("'nonce-") for s in directives["script-src"])
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["object-src"] == ["'none'"]


@pytest.mark.django_db
def test_login_page_has_nothing_the_policy_would_block(client):
    response = client.get(reverse("login"))
    directives = _directives(response["Content-Security-Policy"])
    allowed_nonces = {s[len("'nonce-") : -1] for s in directives["script-src"] if "nonce" in s}
    page = _Inventory()
    page.feed(response.content.decode())

    assert page.scripts, "expected the page to load its scripts"
    for script in page.scripts:
        assert script.get("src") or script.get("nonce") in allowed_nonces, script
    assert page.inline_styles == []
    assert page.inline_handlers == []


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [False, True])
def test_htmx_is_django_htmxs_copy_carrying_the_responses_nonce(client, settings, debug):
    settings.DEBUG = debug
    response = client.get(reverse("login"))
    directives = _directives(response["Content-Security-Policy"])
    allowed_nonces = {s[len("'nonce-") : -1] for s in directives["script-src"] if "nonce" in s}
    page = _Inventory()
    page.feed(response.content.decode())

    sources = [script["src"] for script in page.scripts]
    htmx = [s for s in page.scripts if s["src"].endswith("/django_htmx/htmx-2.min.js")]
    assert len(htmx) == 1, sources
    assert htmx[0]["nonce"] in allowed_nonces
    assert finders.find("django_htmx/htmx-2.min.js")
    assert not any("vendor" in source for source in sources)
    # django-htmx adds its debug helper in development only, under the same nonce.
    helpers = [s for s in page.scripts if s["src"].endswith("/django_htmx/django-htmx.js")]
    assert [s["nonce"] in allowed_nonces for s in helpers] == ([True] if debug else [])


def _attempt(client, username: str, password: str):
    return client.post(reverse("login"), {"username": username, "password": password})


def _signed_in(client) -> bool:
    return "_auth_user_id" in client.session


@pytest.fixture
def operator(django_user_model):
    return django_user_model.objects.create_user(username="olivia", password=PASSWORD)


@pytest.mark.django_db
def test_right_password_still_works_below_the_failure_limit(client, operator):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert _attempt(client, "olivia", "wrong guess").status_code == 200

    response = _attempt(client, "olivia", PASSWORD)

    assert response.status_code == 302
    assert _signed_in(client)


@pytest.mark.django_db
def test_right_password_is_refused_once_the_account_is_locked(client, operator):
    assert settings.AXES_FAILURE_LIMIT == 5
    for _ in range(5):
        _attempt(client, "olivia", "wrong guess")

    response = _attempt(client, "olivia", PASSWORD)

    assert response.status_code == 429
    assert not _signed_in(client)


@pytest.mark.django_db
def test_a_lockout_does_not_spill_over_to_other_users(client, operator, django_user_model):
    # Locking by username and address together: one person guessing at an account must not be
    # able to lock every colleague behind the same office address out of their own.
    django_user_model.objects.create_user(username="mark", password=PASSWORD)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        _attempt(client, "olivia", "wrong guess")

    response = _attempt(client, "mark", PASSWORD)

    assert response.status_code == 302
    assert _signed_in(client)
