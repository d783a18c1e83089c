"""Every page of every role, in Chromium: axe-core's WCAG 2.1 A and AA rules, headings in order,
a focus ring of 3:1 or more against what is behind it, and no sideways scroll at the widths
people use, from a phone (320 and 390 px) to a laptop (1024, 1280, 1440 px).

The pages are the permission matrix's (every URL a role may open, with a real object of each
kind from its seeded workflow), each visited once per role in one reused browser context.
"""

import re

import pytest
from django.conf import settings
from django.test import Client
from django.urls import get_resolver

from tests.e2e import axe
from tests.e2e.conftest import TIMEOUT_MS
from tests.test_permission_matrix import ALL, MATRIX, url_of, walk, world  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDTHS = (320, 390, 1024, 1280, 1440)

# The views of the same pages that their URL patterns alone do not reach.
MORE_VIEWS = {
    "history": "?view=events",
    "compensation_list": "?status=all",
    "individual_case_list": "?status=all",
}

# Headings that skip a level going down (an h2 followed by an h4), or a page without its h1.
HEADING_PROBLEMS = """
() => {
  const levels = Array.from(document.querySelectorAll("h1, h2, h3, h4, h5, h6"))
    .filter((h) => h.getClientRects().length || h.closest(".visually-hidden"))
    .map((h) => Number(h.tagName[1]));
  const problems = [];
  if (levels[0] !== 1) problems.push("the first heading is an h" + levels[0]);
  levels.forEach((level, i) => {
    if (i && level > levels[i - 1] + 1) problems.push(`h${levels[i - 1]} then h${level}`);
  });
  return problems;
}
"""

# Each focusable control is focused (after a Tab, so that Chromium draws :focus-visible), and
# its outline's colour is compared with what is painted just outside it on each side, where
# the ring is drawn (3 px wide, 2 px out): the nearest opaque background there, with any
# translucent layers above it blended in.
FOCUS_RING_PROBLEMS = """
() => {
  const rgba = (text) => {
    const n = text.match(/[\\d.]+/g).map(Number);
    return n.length === 3 ? [...n, 1] : n;
  };
  const channel = (c) => {
    c /= 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const contrast = (a, b) => {
    const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  const behind = (x, y, self) => {
    const layers = [];
    for (const element of document.elementsFromPoint(x, y)) {
      if (element === self || self.contains(element)) continue;
      const colour = rgba(getComputedStyle(element).backgroundColor);
      if (colour[3] === 0) continue;
      layers.push(colour);
      if (colour[3] === 1) break;
    }
    let colour = [255, 255, 255];
    for (const [r, g, b, a] of layers.reverse()) {
      colour = [r, g, b].map((c, i) => c * a + colour[i] * (1 - a));
    }
    return colour;
  };
  const selector = "a[href], button:not([disabled]), input:not([type=hidden]):not([disabled]), " +
    "select:not([disabled]), textarea:not([disabled]), [tabindex]";
  const problems = [];
  for (const element of document.querySelectorAll(selector)) {
    if (!element.getClientRects().length || element.closest(".visually-hidden")) continue;
    element.focus();
    if (document.activeElement !== element) continue;
    const style = getComputedStyle(element);
    const words = element.textContent || element.getAttribute("aria-label") || "";
    const name = element.tagName.toLowerCase() + (element.id ? "#" + element.id : "") +
      " “" + words.trim().slice(0, 30) + "”";
    if (!element.matches(":focus-visible")) continue;
    if (style.outlineStyle === "none" || parseFloat(style.outlineWidth) < 2) {
      problems.push(name + ": no focus ring");
      continue;
    }
    const ring = rgba(style.outlineColor);
    const box = element.getBoundingClientRect();
    const gap = parseFloat(style.outlineOffset) + parseFloat(style.outlineWidth) / 2;
    // A ring drawn inside the control lies on the control's own background.
    const own = rgba(style.backgroundColor);
    if (gap < 0 && own[3] === 1) {
      const ratio = contrast(ring, own);
      if (ratio < 3) problems.push(`${name}: ${ratio.toFixed(2)}:1 against its own background`);
      continue;
    }
    const points = [
      [box.left - gap, box.top + box.height / 2], [box.right + gap, box.top + box.height / 2],
      [box.left + box.width / 2, box.top - gap], [box.left + box.width / 2, box.bottom + gap],
    ].filter(([x, y]) => x >= 0 && y >= 0 && x < innerWidth && y < innerHeight);
    for (const [x, y] of points) {
      const ratio = contrast(ring, behind(x, y, element));
      if (ratio < 3) {
        const colour = behind(x, y, element).map(Math.round);
        problems.push(`${name}: ${ratio.toFixed(2)}:1 against rgb(${colour})`);
        break;
      }
    }
  }
  document.activeElement.blur();
  return problems;
}
"""

# What sticks out of the page at this width: the page's own overflow, and the controls of the
# top bar that end past its right edge.
FIT_PROBLEMS = """
() => {
  const problems = [];
  const page = document.documentElement;
  if (page.scrollWidth > innerWidth) {
    // Named by the first elements that stick out while their parent does not.
    const out = (e) => e.getBoundingClientRect().right > innerWidth + 1;
    const clipped = (e) => {
      for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
        if (getComputedStyle(a).overflowX !== "visible") return true;
      }
      return false;
    };
    const culprits = Array.from(document.body.querySelectorAll("*"))
      .filter((e) => out(e) && !out(e.parentElement) && e.getClientRects().length && !clipped(e))
      .slice(0, 3)
      .map((e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
        (typeof e.className === "string" && e.className ? "." + e.className : ""));
    problems.push(`page ${page.scrollWidth} px wide: ${culprits.join(", ")}`);
  }
  for (const control of document.querySelectorAll(".topbar a, .topbar button")) {
    if (control.getBoundingClientRect().right > innerWidth) {
      problems.push(`“${control.textContent.trim()}” ends past the edge`);
    }
  }
  return problems;
}
"""


def pages_of(role: str, world) -> list[str]:  # noqa: F811
    """The HTML pages ``role`` may open (downloads and the API left out)."""
    patterns = dict(walk(get_resolver().url_patterns))
    urls = []
    for name, entry in MATRIX.items():
        if entry.api or entry.get.get(role) != 200 or name in ("healthz",):
            continue
        urls.append(url_of(name, patterns[name], entry, world))
        if name in MORE_VIEWS:
            urls.append(urls[-1] + MORE_VIEWS[name])
    return urls


def html_only(client: Client, urls: list[str]) -> list[str]:
    return [url for url in urls if client.get(url)["Content-Type"].startswith("text/html")]


@pytest.fixture
def browsing(browser, live_server):
    """One browser context for the whole run; ``sign_in(user)`` swaps its session cookie."""
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"script error: {error}"))
    page.on(
        "console",
        lambda message: "Content Security Policy" in message.text and errors.append(message.text),
    )

    def sign_in(user) -> Client:
        client = Client()
        client.force_login(user)
        context.clear_cookies()
        context.add_cookies(
            [
                {
                    "name": settings.SESSION_COOKIE_NAME,
                    "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                    "url": live_server.url,
                }
            ]
        )
        return client

    yield page, sign_in
    context.close()
    assert not errors, "\n".join(errors)


def check(page, where: str, problems: dict[str, list[str]]) -> None:
    """axe, the headings and the focus ring on the page as it is now, at 1280 px."""
    found = axe.violations(page)
    if found:
        problems[where].append("axe:\n" + axe.describe(found))
    problems[where].extend(page.evaluate(HEADING_PROBLEMS))
    page.keyboard.press("Tab")
    problems[where].extend(page.evaluate(FOCUS_RING_PROBLEMS))


def fits(page, where: str, problems: dict[str, list[str]]) -> None:
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        problems[where].extend(f"at {width} px: {p}" for p in page.evaluate(FIT_PROBLEMS))
    page.set_viewport_size({"width": 1280, "height": 900})


def report(problems: dict[str, list[str]]) -> str:
    return "\n".join(f"{where}:\n  " + "\n  ".join(found) for where, found in problems.items())


@pytest.mark.parametrize("role", ALL)
def test_every_page_of_every_role(role, browsing, users, world):  # noqa: F811
    page, sign_in = browsing
    client = sign_in(users[role])
    problems: dict[str, list[str]] = {}
    for url in html_only(client, pages_of(role, world)):
        response = page.goto(url)
        assert response.ok, f"{url}: {response.status}"
        problems[url] = []
        check(page, url, problems)
        fits(page, url, problems)
    problems = {where: found for where, found in problems.items() if found}
    assert not problems, report(problems)


def test_the_sign_in_page_and_its_refusal(browsing):
    page, _ = browsing
    problems: dict[str, list[str]] = {"sign-in": [], "sign-in refused": []}
    page.goto("/accounts/login/")
    check(page, "sign-in", problems)
    fits(page, "sign-in", problems)
    page.get_by_label("Username").fill("nobody")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_load_state()
    check(page, "sign-in refused", problems)
    problems = {where: found for where, found in problems.items() if found}
    assert not problems, report(problems)


def swapped(page, action, where: str, problems: dict[str, list[str]]) -> None:
    """Take ``action`` (a click or a submit that htmx swaps in), then check the new state."""
    with page.expect_response(re.compile(".*")):
        action()
    page.wait_for_function("!document.querySelector('.htmx-request, .htmx-settling')")
    problems[where] = []
    check(page, where, problems)
    fits(page, where, problems)


def refuse(page, selector: str) -> None:
    """Send the form as it stands, past the browser's own checks, so the server refuses it."""
    page.locator(selector).evaluate("form => { form.noValidate = true; form.requestSubmit(); }")
