"""The one pagination include every paged list uses: its links and the htmx attributes its
links inherit from the nav."""

from html.parser import HTMLParser

from django.core.paginator import Paginator
from django.template.loader import render_to_string
from django.test import RequestFactory

from settlements.views.paging import PeekPage


class _Nav(HTMLParser):
    def __init__(self):
        super().__init__()
        self.nav: dict[str, str | None] = {}
        self.links: list[dict[str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "nav":
            self.nav = dict(attrs)
        elif tag == "a":
            self.links.append(dict(attrs))

    def handle_data(self, data):
        if data.strip():
            self.text.append(data.strip())


def render(query: str = "", **context) -> _Nav:
    request = RequestFactory().get("/list/" + query)
    nav = _Nav()
    nav.feed(render_to_string("settlements/includes/pagination.html", context, request=request))
    return nav


def test_links_change_only_the_page_and_inherit_htmx_from_the_nav():
    page = Paginator(range(50), 10).page(3)
    nav = render("?status=open&q=a+b&page=3", page=page, label="Case pages", target="#cases")

    assert nav.nav["aria-label"] == "Case pages"
    assert (nav.nav["hx-target"], nav.nav["hx-swap"], nav.nav["hx-push-url"]) == (
        "#cases",
        "outerHTML",
        "true",
    )
    assert [link["href"] for link in nav.links] == [
        "?status=open&q=a+b&page=2",
        "?status=open&q=a+b&page=4",
    ]
    for link in nav.links:
        assert link["hx-get"] == link["href"]
        assert not {"hx-target", "hx-swap", "hx-push-url"} & set(link)
    assert nav.text == ["Previous", "Page 3 of 5", "Next"]


def test_a_page_without_a_count_and_its_own_words():
    page = PeekPage(items=[1, 2], number=1, has_next=True, per_page=2)
    nav = render(
        page=page, label="History pages", target="#history", previous="Newer", next="Older"
    )
    assert nav.text == ["Page 1", "Older"]
    assert [link["href"] for link in nav.links] == ["?page=2"]


def test_options_a_form_and_a_long_list_use():
    page = Paginator(range(120), 50).page(1)
    inside_a_form = render(
        page=page, label="Invited", target="#invitees", param="invite_page", no_push=True
    )
    assert "hx-push-url" not in inside_a_form.nav
    assert [link["href"] for link in inside_a_form.links] == ["?invite_page=2"]

    counted = render(page=page, label="Payouts", target="#p", noun="player", indicator="#busy")
    assert counted.nav["hx-indicator"] == "#busy"
    assert counted.text[0] == "Page 1 of 3 · 120 players"


def test_one_page_shows_no_navigation():
    page = Paginator(range(5), 10).page(1)
    html = render_to_string(
        "settlements/includes/pagination.html",
        {"page": page, "label": "x", "target": "#x"},
        request=RequestFactory().get("/"),
    )
    assert html.strip() == ""
