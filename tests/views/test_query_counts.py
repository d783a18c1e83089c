"""Every main page runs a fixed number of queries, whatever the size of the desk.

The same bound holds for a desk with one small incident and for one with more incidents than
a dashboard page shows, cases at every step, a settlement of several pages, an adjustment and
compensation, and the history all of that leaves behind. A page that loops over its rows with
a query each breaks the bound on the larger desk. Caches are cleared first, so the counts are
those of a first view.
"""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from settlements.access import roles
from settlements.services import compensation as compensation_services
from settlements.services import settlements as settlement_services
from settlements.services.decisions import decision_record
from settlements.services.incidents import incident_report
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create
from tests.api.conftest import bearer
from tests.conftest import clear_caches, make_user, snapshot_bytes
from tests.views.conftest import HTMX, signed_in

pytestmark = pytest.mark.django_db

# The most queries each page may run: the session, the user and their roles (three queries, see
# settlements.services.sessions), then the page's own reads. Pages keep their costly
# fragments in each process's memory ({% cache ... using="pages" %}: no query). The decision page
# stores its previews in Django's database cache: a first view looks them up (one query) and,
# missing them, computes and stores them (in a test's transaction: a savepoint, Django's count of
# the table, a look-up of the key, the write, the release).
# The history browser verifies the event log on a first view (a query per kind of record the
# chain seals, whatever their number: the records, the rows under them, their history versions,
# the batches of confirmations, a settlement's ICM figures, and the payment tallies counted
# afresh, one a kind of row no event may leave unaccounted for, and eight for who may act: the
# access events, memberships, users' flags, tokens issued, revoked and working, and their
# terms; and, per audited table, its versions no event sealed and its rows against their latest
# version) and stores the outcome; a later view reads the head and that outcome, then the page.
BOUNDS = {
    "dashboard": 37,
    "case page": 7,
    # The workbench: a page of cases, their count, the counts by status, the latest jobs,
    # the files its loads refused, and the payments of the incident (one query over its
    # releases and their tallies).
    "incident page": 10,
    # Three entries stored on a first view: the two previews and the per-player comparison.
    "decision page": 21,
    # The lists behind the dashboard's counts, and the approval of many settlements: the
    # incident, the ids of those waiting (the selection), their count and totals by the facts
    # the permission reads (one grouped query; a second reads those skipped, up to a limit),
    # and the page's rows.
    "case list": 6,
    "incident list": 5,
    "approve many": 7,
    # An approved settlement's review also shows its payments (one query, from the tallies).
    # A first view draws and stores two fragments: the chart and the page of payouts; a later
    # view reads both, in place of the payouts and their ranking. The desk's user is also a
    # Tournament Manager, so the page shows the ICM second opinion: its valuation, a page of its
    # rows and the count flagged, and its chart as a third fragment (on a first view: the
    # figures by chip rank, and the fragment stored).
    "settlement review": 30,
    "settlement review, a later view": 10,
    "settlement review, a later page": 30,
    "settlement review, searched": 31,
    "settlement review, htmx page": 13,
    "history browser": 107,
    "history browser, a later view": 7,
    "history browser, by player": 109,
    # A player's cases: the ids matching, a page of cases, what each owed and what followed,
    # where each line's payment stands (its lines, releases, answers, re-issues) and the
    # player's totals (settlements, compensation, prizes taken back).
    "players page": 30,
    "players page, by prefix": 13,
    # A statement reads where its lines' payments stand: the release, the answers, re-issues.
    "player statement": 21,
    "player statement, printable": 21,
    "explain panel": 14,
    # Nobody found: the entrants paid nothing are read instead, and stored with the page.
    "settlement review, nobody found": 31,
    "history browser, events": 106,
    "history of one record": 9,
    "API case list": 4,
    "API case detail": 9,
    # The token and its user, the settlement, then the page's entrants, payouts and lines; one
    # player's also reads what else is on record for them (adjustments, compensation, prizes).
    # Statements read their lines' payments too (three queries, see the statements above).
    "API statements": 10,
    "API statement of one player": 13,
}


def build_desk(
    users, django_user_model, *, prefix: str, incidents: int, cases: int, entrants: int
) -> dict:
    """A desk of `incidents` open incidents of `cases` cases each, at every workflow step;
    the first case's settlement pays about entrants / 2 players. Returns the pages' URLs."""
    operator, marketing = users[roles.OPERATOR], users[roles.MARKETING_MANAGER]
    manager, second_manager = users[roles.TOURNAMENT_MANAGER], users["second_manager"]
    steps = ("approved", "awaiting approval", "awaiting decision", "ready", "prepared")
    featured = undecided = None
    for number in range(incidents):
        incident = incident_report(
            actor=operator,
            title=f"Outage {number}",
            started_at=timezone.now() - timedelta(hours=number),
        )
        for index in range(cases):
            step = steps[index % len(steps)]
            kind = "satellite" if step in ("awaiting decision", "ready") else "regular"
            size = entrants if featured is None else 12
            case = case_load_snapshot(
                actor=operator,
                incident=incident,
                snapshot=snapshot_bytes(
                    type=kind,
                    stage="middle",
                    entrants=size,
                    tournament_id=f"{prefix}-{number}-{index}",
                ),
            )
            if step == "ready":
                decision_record(case=case, actor=marketing, option="chip_equity", reason="as usual")
            if step == "awaiting decision":
                undecided = undecided or case
            if step in ("awaiting decision", "ready"):
                continue
            settlement = settlement_services.settlement_prepare(case=case, actor=operator)
            if step == "prepared":
                continue
            settlement = settlement_services.settlement_submit(
                settlement=settlement, actor=operator
            )
            if step == "awaiting approval":
                continue
            settlement = settlement_services.settlement_approve(
                settlement=settlement, actor=manager
            )
            if featured is None:
                featured = settlement
                if incidents > 1:
                    _follow_ups(settlement, operator, second_manager)
    desk = make_user(django_user_model, "desk", *roles.DESK_ROLES)
    _, token = api_token_create(user=desk, name="query counts")
    review = f"/settlements/{featured.pk}/"
    pages = max(1, -(-featured.payout_count // 50))
    return {
        "client": signed_in(desk),
        "token": token,
        "urls": {
            "dashboard": "/",
            "case page": f"/cases/{featured.case_id}/",
            "incident page": f"/incidents/{featured.case.incident_id}/tournaments/",
            "decision page": f"/cases/{undecided.pk}/decision/",
            "case list": "/queues/cases/?status=awaiting_approval",
            "incident list": "/queues/incidents/",
            "approve many": f"/incidents/{featured.case.incident_id}/approve/",
            "settlement review": review,
            "settlement review, a later view": review,
            "settlement review, a later page": f"{review}?page={pages // 2 + 1}",
            "settlement review, searched": f"{review}?q=p0000",
            "settlement review, nobody found": f"{review}?q=nobody",
            "settlement review, htmx page": f"{review}?page={pages}",
            "history browser": "/history/",
            "history browser, by player": "/history/?player=p000002",
            "players page": "/players/?q=p000002",
            "players page, by prefix": "/players/?q=p0000",
            "player statement": f"/settlements/{featured.pk}/statement/?player=p000002",
            "player statement, printable": (
                f"/settlements/{featured.pk}/statement/print/?player=p000002"
            ),
            "explain panel": f"/settlements/{featured.pk}/player/?player=p000002",
            "history browser, a later view": "/history/",
            "history browser, events": "/history/?view=events",
            "history of one record": f"/history/settlement/{featured.pk}/",
            "API case list": "/api/v1/cases",
            "API case detail": f"/api/v1/cases/{featured.case_id}",
            "API statements": f"/api/v1/settlements/{featured.pk}/statements",
            "API statement of one player": (
                f"/api/v1/settlements/{featured.pk}/statements?player=p000002"
            ),
        },
    }


def _follow_ups(settlement, operator, manager) -> None:
    """An approved adjustment and an approved compensation on the featured case."""
    adjustment = settlement_services.settlement_adjust(
        settlement=settlement,
        actor=operator,
        reason="late chip count",
        entries=[settlement_services.AdjustmentEntry("p000002", "prize", "cash", -100, "pool")],
    )
    adjustment = settlement_services.settlement_submit(settlement=adjustment, actor=operator)
    settlement_services.settlement_approve(settlement=adjustment, actor=manager, reason="checked")
    compensation = compensation_services.compensation_propose(
        case=settlement.case,
        actor=operator,
        reason="disconnected at the crash",
        entries=[compensation_services.CompensationEntry("p000003", 500)],
    )
    compensation_services.compensation_approve(
        compensation=compensation, actor=manager, reason="fair"
    )


def _get(desk: dict, page: str):
    url = desk["urls"][page]
    if page.startswith("API"):
        return Client().get(url, **bearer(desk["token"]))
    extra = HTMX if page.endswith("htmx page") else {}
    return desk["client"].get(url, **extra)


def _counts(desk: dict, size: str, django_assert_max_num_queries) -> dict[str, int]:
    counts = {}
    for page, bound in BOUNDS.items():
        clear_caches()
        if page.endswith("a later view"):
            _get(desk, page)
        with django_assert_max_num_queries(bound, info=f"{page}, {size}") as queries:
            assert _get(desk, page).status_code == 200, f"{page}, {size}"
        counts[page] = len(queries)
    return counts


def test_every_page_runs_the_same_few_queries_on_a_small_and_a_busy_desk(
    users, django_user_model, django_assert_max_num_queries
):
    small = build_desk(users, django_user_model, prefix="S", incidents=1, cases=5, entrants=12)
    small_counts = _counts(small, "one small incident", django_assert_max_num_queries)

    # More incidents than a dashboard page shows, a settlement of 6 pages of payouts, an
    # adjustment and a compensation, and all the history they leave: on top of the first.
    busy = build_desk(users, django_user_model, prefix="B", incidents=12, cases=5, entrants=600)
    busy_counts = _counts(busy, "a busy desk", django_assert_max_num_queries)

    # The case page reads a case's compensation list only when it has one (most have none):
    # the busy desk's featured case has one, one query more however long the list. The
    # history browser's verification reads the versions of each kind of record the chain
    # seals: the busy desk's compensation is one kind more.
    verifying = ("history browser", "history browser, by player", "history browser, events")
    assert busy_counts == {
        **small_counts,
        "case page": small_counts["case page"] + 1,
        **{page: small_counts[page] + 1 for page in verifying},
    }
