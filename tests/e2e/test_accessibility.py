"""Every page of every role, in Chromium: axe-core's WCAG 2.1 A and AA rules, headings in order,
a focus ring of 3:1 or more against what is behind it, and no sideways scroll at the widths
people use, from a phone (320 and 390 px) to a laptop (1024, 1280, 1440 px).

The pages are the permission matrix's (every URL a role may open, with a real object of each
kind from its seeded workflow), each visited once per role in one reused browser context.
"""

import re
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.urls import get_resolver, reverse
from django.utils import timezone

from settlements.access import roles
from settlements.demo import snapshot_bytes
from settlements.services.snapshots import case_load_snapshot
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
  let checked = 0;
  let controls = 0;
  for (const element of document.querySelectorAll(selector)) {
    if (!element.getClientRects().length || element.closest(".visually-hidden")) continue;
    element.focus();
    if (document.activeElement !== element) continue;
    controls += 1;
    const style = getComputedStyle(element);
    const words = element.textContent || element.getAttribute("aria-label") || "";
    const name = element.tagName.toLowerCase() + (element.id ? "#" + element.id : "") +
      " “" + words.trim().slice(0, 30) + "”";
    if (!element.matches(":focus-visible")) continue;
    checked += 1;
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
  return { controls, checked, problems };
}
"""

# What sticks out of the page at this width: the page's own overflow, a scroll box that the
# keyboard cannot reach, and the controls of the top bar that end past its right edge.
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
  // A box that scrolls sideways at this width is reachable by keyboard, and named.
  for (const box of document.querySelectorAll("main *")) {
    if (box.scrollWidth <= box.clientWidth + 1 || getComputedStyle(box).overflowX === "visible") {
      continue;
    }
    if (box.closest(".visually-hidden")) continue;
    const labelledBy = document.getElementById(box.getAttribute("aria-labelledby") || "");
    const named = box.getAttribute("aria-label") || (labelledBy && labelledBy.textContent.trim());
    if (box.tabIndex < 0 || !named) {
      problems.push(`${box.tagName.toLowerCase()}.${box.className}: scrolls, no focus or name`);
    }
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
    rings = page.evaluate(FOCUS_RING_PROBLEMS)
    # Controls were focused but none matched :focus-visible: the measure would be empty.
    if rings["controls"] and not rings["checked"]:
        problems[where].append("no control showed a focus ring")
    problems[where].extend(rings["problems"])


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


def after(page, action) -> None:
    """Take ``action`` (a click or a submit, swapped in by htmx or a new page) and let it settle."""
    with page.expect_response(lambda response: response.request.resource_type != "image"):
        action()
    page.wait_for_load_state()
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-settling')")


def refuse(page, form: str) -> None:
    """Send the form as it stands, past the browser's own checks, so the server refuses it."""
    after(
        page,
        lambda: page.locator(form).evaluate(
            "form => { form.noValidate = true; form.requestSubmit(); }"
        ),
    )


def test_the_states_after_each_swap_and_each_refused_form(browsing, users, world):  # noqa: F811
    page, sign_in = browsing
    problems: dict[str, list[str]] = {}

    def state(where: str) -> None:
        problems[where] = []
        check(page, where, problems)
        fits(page, where, problems)

    sign_in(users[roles.TOURNAMENT_MANAGER])
    page.goto(reverse("settlement_review", args=[world.settlement.pk]))
    after(page, lambda: page.get_by_role("link", name="Explain").first.click())
    state("a player explained")
    after(page, lambda: page.get_by_role("link", name="Reject…").click())
    state("reject, to confirm")
    refuse(page, "#settlement-actions form")
    state("reject refused without a reason")
    page.goto(reverse("incident_approve", args=[world.incident.pk]))
    after(page, lambda: page.get_by_role("link", name=re.compile("^Leave out")).first.click())
    state("bulk approval with one left out")
    for name, args, form in (
        ("individual_case_new", [], "main form[method=post]"),
        ("prize_withdrawal_new", [world.case.pk], "main form[method=post]"),
        ("reissue_new", [world.failed_key], "main form[method=post]"),
        ("case_withdraw", [world.ready_case.pk], "main form[method=post]"),
        ("user_settings", [], "#settings-form"),
    ):
        page.goto(reverse(name, args=args))
        refuse(page, form)
        state(f"{name} refused")

    sign_in(users[roles.OPERATOR])
    page.goto(reverse("incident_tournaments", args=[world.incident.pk]))
    after(page, lambda: page.get_by_role("link", name="Stage", exact=True).click())
    state("workbench sorted")
    knock_out = case_load_snapshot(
        actor=users[roles.OPERATOR],
        snapshot=snapshot_bytes(stage="middle", entrants=120, tournament_id="KO-A11Y", rebuys=True),
        incident=world.incident,
    )
    page.goto(reverse("case_detail", args=[knock_out.pk]))
    after(page, lambda: page.locator("#sort-bounty").click())
    state("each player's entries, sorted by bounty")
    after(page, lambda: page.locator("#case-entrants-next").click())
    state("each player's entries, page 2")
    for name, args in (("incident_new", []), ("compensation_new", [world.case.pk])):
        page.goto(reverse(name, args=args))
        refuse(page, "main form[method=post]")
        state(f"{name} refused")

    sign_in(users[roles.MARKETING_MANAGER])
    page.goto(reverse("case_decision", args=[world.deciding_case.pk]))
    refuse(page, "#decision-form")
    state("decision refused")
    page.get_by_role("radio", name="Reschedule").check()
    page.get_by_label("New date").fill(
        (timezone.localtime() + timedelta(days=7)).strftime("%Y-%m-%dT20:00")
    )
    page.get_by_label("Why this option").fill("Players asked for a rerun.")
    after(page, lambda: page.get_by_role("button", name="Review the decision").click())
    state("decision, to confirm")

    problems = {where: found for where, found in problems.items() if found}
    assert not problems, report(problems)


def test_axe_reports_what_it_finds(browsing):
    # The check above passes on silence; this makes sure the silence is axe's.
    page, _ = browsing
    page.goto("/accounts/login/")
    assert axe.violations(page) == []
    page.evaluate("document.querySelector('main').append(document.createElement('img'))")
    assert [found["id"] for found in axe.violations(page)] == ["image-alt"]
