"""A real OpenID Connect provider for the tests of single sign-on: django-oauth-toolkit in
OIDC mode (tests/sso/provider/), started in a process of its own for the test session, on a
free port of the loopback address. The desk's tests reach it over HTTP as allauth would reach
an operator's provider: discovery, the authorization page, the token endpoint, the keys."""

import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from django.test import Client
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
CLIENT_ID = "crashdesk"
CLIENT_SECRET = "crashdesk-test-secret"
CALLBACK = "http://testserver/accounts/oidc/sso/login/callback/"
PASSWORD = "provider-password"
ROLE_GROUPS = {"desk-approvers": "tournament_manager", "desk-audit": "auditor"}


@dataclass
class Provider:
    issuer: str
    environment: dict
    mode_file: Path

    def control(self, *args: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "tests.sso.provider.control", *args],
            cwd=ROOT,
            env=self.environment,
            check=True,
            timeout=60,
        )

    def groups(self, username: str, *names: str) -> None:
        self.control("groups", username, *names)

    def misbehave(self, mode: str) -> None:
        self.mode_file.write_text(mode)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def provider_process(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sso-provider")
    port = _free_port()
    issuer = f"http://127.0.0.1:{port}/o"
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.sso.provider.settings",
        "SSO_PROVIDER_DB": str(folder / "provider.sqlite3"),
        "SSO_PROVIDER_ISSUER": issuer,
        "SSO_PROVIDER_MODE_FILE": str(folder / "mode"),
    }
    # The desk (allauth's requests) and the tests reach the provider directly, never through
    # a proxy the environment may name for the outside world.
    for name in ("NO_PROXY", "no_proxy"):
        os.environ[name] = ",".join(filter(None, [os.environ.get(name), "127.0.0.1", "localhost"]))
    provider = Provider(issuer, environment, folder / "mode")
    provider.control("setup", CLIENT_ID, CLIENT_SECRET, CALLBACK, PASSWORD)
    log = (folder / "server.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "django", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(f"{issuer}/.well-known/openid-configuration", timeout=2)
                break
            except requests.ConnectionError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((folder / "server.log").read_text()) from None
                time.sleep(0.2)
        yield provider
    finally:
        server.terminate()
        server.wait(timeout=10)
        log.close()


@pytest.fixture
def provider(provider_process, settings):
    """The provider, behaving, with the desk set up to sign on through it."""
    provider_process.misbehave("")
    settings.SSO = {
        **settings.SSO,
        "name": "Test provider",
        "roles": ROLE_GROUPS,
        "amr_counts": False,
    }
    settings.SOCIALACCOUNT_PROVIDERS = {
        "openid_connect": {
            **settings.SOCIALACCOUNT_PROVIDERS["openid_connect"],
            "APPS": [
                {
                    "provider_id": "sso",
                    "name": "Test provider",
                    "client_id": CLIENT_ID,
                    "secret": CLIENT_SECRET,
                    "settings": {"server_url": provider_process.issuer, "fetch_userinfo": False},
                }
            ],
        }
    }
    return provider_process


def through_provider(client: Client, username: str) -> str:
    """Start a sign-on from ``client`` and sign in at the provider as ``username``, as a browser
    would; the address the provider sends the browser back to (the desk's callback)."""
    start = client.post(reverse("openid_connect_login", args=["sso"]))
    assert start.status_code == 302, start
    browser = requests.Session()
    step = browser.get(start["Location"], allow_redirects=False)
    login_page = urljoin(start["Location"], step.headers["Location"])
    form = browser.get(login_page)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)[1]
    signed_in = browser.post(
        login_page,
        data={"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD},
        allow_redirects=False,
    )
    assert signed_in.status_code == 302, signed_in.text
    back = browser.get(urljoin(login_page, signed_in.headers["Location"]), allow_redirects=False)
    assert back.headers["Location"].startswith(CALLBACK), back.headers
    return back.headers["Location"]


def local(url: str) -> str:
    """The desk's address without scheme and host, for the test client."""
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"
