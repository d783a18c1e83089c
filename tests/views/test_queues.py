"""The lists behind the dashboard's counts: each waiting list, every case, every incident."""

import re

import pytest
from django.urls import reverse

from settlements.services.incidents import incident_close, incident_report
from settlements.services.settlements import settlement_prepare
from settlements.services.snapshots import case_load_snapshot
from tests.views.conftest import HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


def test_a_queue_shows_everything_paged_and_by_incident(
    as_operator, as_marketing, operator, incident, load_case
):
    cases = [load_case(stage="late", tournament_id=f"Q{n:02}") for n in range(30)]
    other = incident_report(actor=operator, title="DC2", started_at=incident.started_at)
    case_load_snapshot(
        actor=operator,
        snapshot=__import__("settlements.demo").demo.snapshot_bytes(
            stage="late", tournament_id="OTHER"
        ),
        incident=other,
    )
    url = reverse("queue", args=["to_prepare"])
    html = assert_full_page(as_operator.get(url))
    assert "31 waiting" in html and "Page 1 of 2" in html
    dashboard = as_operator.get(reverse("dashboard")).content.decode()
    assert f'href="{url}"' in dashboard and "see all 31" in dashboard
    second = assert_partial(as_operator.get(url, {"page": 2}, **HTMX), "queue")
    assert second.count("Case #") == 6
    only = assert_partial(as_operator.get(url, {"incident": other.pk}, **HTMX), "queue")
    assert "OTHER" in only and cases[0].tournament.operator_id not in only
    assert as_marketing.get(url).status_code == 403
    assert as_operator.get(reverse("queue", args=["nothing"])).status_code == 404


STAT_LINK = re.compile(
    r'<a class="stat stat--link" href="([^"]+)"><span class="stat__label">[^<]+</span>'
    r'<span class="stat__value" data-count="(\w+)">(\d+)</span></a>'
)


LISTED = re.compile(r'id="queue-count">(\d+) ')


def test_every_dashboard_count_opens_the_list_it_counts(
    as_auditor, operator, marketing_manager, incident, late_cases, load_case
):
    load_case(type="satellite", stage="middle", tournament_id="S1")
    settlement_prepare(case=late_cases[0], actor=operator)
    closed = incident_report(actor=operator, title="Old", started_at=incident.started_at)
    incident_close(incident=closed, actor=operator, reason="nothing hit")
    dashboard = assert_full_page(as_auditor.get(reverse("dashboard")))
    stats = STAT_LINK.findall(dashboard)
    assert {key for _, key, _ in stats} == {
        "open_incidents",
        "awaiting_decision",
        "ready",
        "prepared",
        "awaiting_approval",
        "rejected",
        "approved",
    }
    shown = {key: int(count) for _, key, count in stats}
    assert (shown["open_incidents"], shown["ready"], shown["prepared"]) == (1, 2, 1)
    for href, key, count in stats:
        listed = assert_full_page(as_auditor.get(href.replace("&amp;", "&")))
        assert LISTED.search(listed).group(1) == count, key


def test_the_case_list_filters_by_status_and_incident_and_pages_keeping_them(
    as_marketing, operator, incident, load_case
):
    ready = [load_case(stage="late", tournament_id=f"R{n:02}") for n in range(27)]
    load_case(type="satellite", stage="middle", tournament_id="WAITS")
    other = incident_report(actor=operator, title="DC2", started_at=incident.started_at)
    case_load_snapshot(
        actor=operator,
        snapshot=__import__("settlements.demo").demo.snapshot_bytes(
            stage="late", tournament_id="ELSEWHERE"
        ),
        incident=other,
    )
    url = reverse("case_queue")
    html = assert_full_page(as_marketing.get(url, {"status": "ready"}))
    assert "28 cases" in html and "Page 1 of 2" in html and "WAITS" not in html
    assert "?status=ready&amp;page=2" in html
    second = assert_partial(as_marketing.get(url, {"status": "ready", "page": 2}, **HTMX), "queue")
    assert second.count("Case #") == 3 and "?status=ready&amp;page=1" in second
    # Oldest first: the first loaded leads page 1.
    assert html.index(f"Case #{ready[0].pk}<") < html.index(f"Case #{ready[1].pk}<")
    mine = assert_partial(
        as_marketing.get(url, {"status": "ready", "incident": incident.pk}, **HTMX), "queue"
    )
    assert "27 cases" in mine and "ELSEWHERE" not in mine
    everything = assert_full_page(as_marketing.get(url, {"status": "bogus"}))
    assert "29 cases" in everything and "Every case" in everything


def test_the_incident_list_shows_open_closed_or_all(as_operator, operator, incident):
    closed = incident_report(actor=operator, title="Gone", started_at=incident.started_at)
    incident_close(incident=closed, actor=operator, reason="nothing hit")
    url = reverse("incident_queue")
    html = assert_full_page(as_operator.get(url))
    assert "1 incident," in html and "Cluster B outage" in html and "Gone" not in html
    only_closed = assert_partial(as_operator.get(url, {"state": "closed"}, **HTMX), "queue")
    assert "Gone" in only_closed and "Cluster B outage" not in only_closed
    assert "2 incidents" in assert_partial(as_operator.get(url, {"state": "all"}, **HTMX), "queue")


def test_lists_sort_by_a_column_kept_in_the_url(as_operator, operator, incident, load_case):
    other = incident_report(
        actor=operator, title="AAA first", started_at=incident.started_at.replace(year=2020)
    )
    cases = [load_case(stage="late", tournament_id=f"Q{n}") for n in ("B", "C", "A")]
    case_load_snapshot(
        actor=operator,
        snapshot=__import__("settlements.demo").demo.snapshot_bytes(
            stage="late", tournament_id="QZ"
        ),
        incident=other,
    )

    def order(html: str) -> list[str]:
        return re.findall(r"<td>(Q[A-Z]) ", html)

    url = reverse("queue", args=["to_prepare"])
    html = assert_full_page(as_operator.get(url))
    assert order(html) == ["QB", "QC", "QA", "QZ"] and "oldest first" in html
    assert 'href="?sort=tournament"' in html
    by_tournament = assert_partial(as_operator.get(url, {"sort": "tournament"}, **HTMX), "queue")
    assert order(by_tournament) == ["QA", "QB", "QC", "QZ"]
    assert 'aria-sort="ascending"><a id="sort-tournament" href="?sort=-tournament"' in by_tournament
    assert order(as_operator.get(url, {"sort": "-tournament"}).content.decode()) == [
        "QZ",
        "QC",
        "QB",
        "QA",
    ]
    # The incident that started first comes first; the filter stays in the sort links.
    by_incident = as_operator.get(url, {"sort": "incident", "incident": incident.pk})
    assert f'href="?sort=-incident&amp;incident={incident.pk}"' in by_incident.content.decode()
    assert order(as_operator.get(url, {"sort": "incident"}).content.decode())[0] == "QZ"
    # Anything else is the usual order.
    assert order(as_operator.get(url, {"sort": "-nonsense"}).content.decode())[0] == "QB"

    cases_url = reverse("case_queue")
    listed = as_operator.get(cases_url, {"sort": "-case"}).content.decode()
    positions = [listed.index(f">Case #{case.pk}<") for case in cases]
    assert positions == sorted(positions, reverse=True)
    assert 'aria-sort="descending"' in listed
