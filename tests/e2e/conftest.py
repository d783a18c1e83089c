"""End-to-end fixtures: Debian's Chromium driven by Playwright against pytest-django's live
server, a page signed in as a given role, and screenshots under test-output/screenshots/.

Every page a test opens is watched for Content-Security-Policy violations and script
errors; a test fails if any occurred, so the strict CSP is checked in a real browser.
"""

import os
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

# Playwright's sync API runs an event loop in this thread; Django's ORM calls made by the test
# itself (fixtures, assertions on stored rows) are still plain synchronous calls.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

from django.core.cache import caches  # noqa: E402
from playwright.sync_api import Page, sync_playwright  # noqa: E402

from settlements.access import second_factor  # noqa: E402
from tests.conftest import DEMO_PASSWORD, TEST_TOTP_SECRET, make_user  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(os.environ.get("TEST_OUTPUT", "test-output")) / "screenshots"
TIMEOUT_MS = 15_000


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def new_page(browser, live_server):
    """``new_page()`` -> a fresh page (own cookies) with the live server as base URL."""
    contexts = []
    problems: list[str] = []

    def open_page() -> Page:
        context = browser.new_context(
            base_url=live_server.url, viewport={"width": 1280, "height": 900}
        )
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("console", lambda message: _watch_console(message, problems))
        page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
        return page

    yield open_page
    for context in contexts:
        context.close()
    assert not problems, "browser reported problems:\n" + "\n".join(problems)


def _watch_console(message, problems: list[str]) -> None:
    text = message.text
    # A 422 with a form's errors is expected; the browser logs every 4xx it receives.
    if message.type == "error" and "status of 422" not in text:
        problems.append(f"console error: {text}")
    elif "Content Security Policy" in text or "Content-Security-Policy" in text:
        problems.append(f"CSP: {text}")


@pytest.fixture
def signed_in_page(new_page, django_user_model):
    """``signed_in_page(role, username=...)`` -> a page signed in through the login form."""

    def sign_in(role: str, username: str | None = None) -> Page:
        username = username or role
        user = make_user(django_user_model, username, role)
        needs_code = second_factor.second_factor_required(user)
        if needs_code:
            second_factor.set_totp_secret(user=user, secret=TEST_TOTP_SECRET)
        page = new_page()
        page.goto("/accounts/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(DEMO_PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        if needs_code:
            page.wait_for_url("**/accounts/2fa/reauthenticate/**")
            # allauth refuses a code used before (for 30 s); these journeys may sign the same
            # user in again within one step, which is not what they test.
            caches["default"].clear()
            page.get_by_placeholder("Code").fill(fresh_totp_code(TEST_TOTP_SECRET))
            page.get_by_role("button", name="Confirm").click()
        # The dashboard itself: "**/" would match the code page too, before the code is taken.
        page.wait_for_url(lambda url: urlsplit(url).path == "/")
        return page

    return sign_in


def fresh_totp_code(secret: str) -> str:
    """A code that stays valid until the server reads it: the desk accepts the current
    30-second window only, so a code taken at its last moment could arrive in the next."""
    left = 30 - time.time() % 30
    if left < 3:
        time.sleep(left + 0.1)
    return second_factor.totp_code(secret)


@pytest.fixture
def screenshot():
    """``screenshot(page, name)`` saves test-output/screenshots/<name>.png (whole page)."""

    def shoot(page: Page, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        # Hiding the text caret (Playwright's default) injects a style element, which the
        # strict CSP reports as a violation whenever a field has the focus.
        page.screenshot(path=str(path), full_page=True, caret="initial")
        return path

    return shoot
