"""Settlement review: payouts, totals, chart, per-player explanations, submit, approve or
reject with a confirmation (never one's own work), and the approved ledger."""

import csv
import io
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from settlements.models import SettlementPayout
from settlements.services import settlements as settlement_services
from settlements.services.decisions import decision_record
from settlements.workflow import CaseStatus, SettlementStatus
from tests.conftest import clear_caches, make_user
from tests.views.conftest import (
    HISTORY_RESTORE,
    HTMX,
    assert_full_page,
    assert_partial,
    signed_in,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def prepared(operator, load_case):
    """``prepared(**snapshot)``: a case loaded and its settlement prepared by the operator."""

    def make(**kwargs):
        case = load_case(**kwargs)
        return settlement_services.settlement_prepare(
            case=case, actor=operator, note="checked twice"
        )

    return make


@pytest.fixture
def submitted(operator, prepared):
    def make(**kwargs):
        return settlement_services.settlement_submit(settlement=prepared(**kwargs), actor=operator)

    return make


def squash(html: str) -> str:
    """The markup without the blank space between tags, for comparing table rows."""
    return re.sub(r">\s+<", "><", html)


def review(settlement, name="settlement_review"):
    return reverse(name, args=[settlement.pk])


def test_the_review_page_shows_payouts_totals_and_the_chart(as_operator, prepared):
    # Regular, middle stage: 20 entrants x 10.00, the 10 players left share 200.00 USD.
    settlement = prepared(type="regular", stage="middle", entrants=20, tournament_id="T-REV")
    html = squash(assert_full_page(as_operator.get(review(settlement))))
    assert f"Settlement #{settlement.pk}: T-REV" in html
    assert "Chip equity split" in html
    assert "<div><dt>Players paid</dt><dd>10</dd></div>" in html
    assert "<div><dt>Paid from the pool</dt><dd>200.00 USD</dd></div>" in html
    assert "“checked twice”" in html
    # The footer: all players, then by source.
    assert '<th scope="row" colspan="2">All 10 players</th><td class="num">200.00 USD</td>' in html
    assert '<th scope="row" colspan="2">From the prize pool</th><td class="num">200.00 USD' in html
    assert '<th scope="row" colspan="2">From the house</th><td class="num">—</td><td>' in html
    # The buy-in guaranteed first is shown apart from the share of the rest.
    assert (
        '<th scope="col" class="num">Buy-in back</th>'
        '<th scope="col" class="num">Share of the rest of the pool</th>'
    ) in html
    for payout in SettlementPayout.objects.filter(settlement=settlement):
        major, minor = divmod(payout.cash, 100)
        share_major, share_minor = divmod(payout.cash - 1000, 100)
        assert f'<span class="mono">{payout.player}</span>' in html
        assert (
            f'<td class="num">{major}.{minor:02d} USD</td>'
            '<td class="num" data-part="guaranteed">10.00 USD</td>'
            f'<td class="num" data-part="share">{share_major}.{share_minor:02d} USD</td>'
        ) in html
    # The chart is named by its title; its summary, once, is the figure's caption.
    assert 'role="img" aria-labelledby="payout-chart-title"' in html
    assert "<desc" not in html
    assert re.search(r"<figcaption>\d+ players: the most chips receive", html)
    assert "Chip rank (1 = most chips)" in html
    assert 'id="player-detail"' in html
    # Breadcrumbs lead back to the case and the incident.
    assert f'href="{reverse("case_detail", args=[settlement.case_id])}"' in html


def test_a_satellite_shows_seats_and_t_dollars_with_totals_by_unit(
    as_operator, marketing_manager, operator, load_case
):
    case = load_case(
        type="satellite", stage="middle", entrants=40, tournament_id="S-REV", seat_value=3000
    )
    decision_record(case=case, actor=marketing_manager, option="chip_proportional", reason="r")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    html = as_operator.get(review(settlement)).content.decode()
    assert '<th scope="col" class="num">Seats</th>' in html
    assert '<th scope="col" class="num">T$</th>' in html
    assert '<th scope="col" class="num">Cash</th>' not in html
    seats = sum(
        SettlementPayout.objects.filter(settlement=settlement).values_list("tickets", flat=True)
    )
    assert seats > 0
    assert f"{seats} seats" in html


def test_payouts_are_searched_and_paged_in_a_partial(as_operator, prepared):
    settlement = prepared(type="regular", stage="middle", entrants=240, tournament_id="T-PAGE")
    html = as_operator.get(review(settlement)).content.decode()
    assert "Page 1 of 3 · 120 players" in html
    assert "p000001" in html and "p000051" not in html

    page2 = assert_partial(
        as_operator.get(review(settlement) + "?page=2", **HTMX, HTTP_HX_TARGET="payouts"),
        "payouts",
    )
    assert "p000051" in page2 and "p000001" not in page2 and "Page 2 of 3" in page2
    assert "Payout by chip rank" not in page2

    found = assert_partial(
        as_operator.get(review(settlement) + "?q=00011", **HTMX, HTTP_HX_TARGET="payouts"),
        "payouts",
    )
    assert "p000011" in found and "p000110" in found and "p000012" not in found
    assert "Page 1 of" not in found  # 2 matches fit on one page
    none = as_operator.get(review(settlement) + "?q=zzz", **HTMX, HTTP_HX_TARGET="payouts")
    assert "No entrant’s id contains “zzz”." in none.content.decode()
    # A player knocked out is not paid, but is found, with the statement that says why.
    out = as_operator.get(review(settlement) + "?q=p000240", **HTMX, HTTP_HX_TARGET="payouts")
    html = squash(assert_partial(out, "payouts"))
    assert '<span class="mono">p000240</span>' in html
    assert "Knocked out" in html and "Paid nothing by this settlement" in html
    assert f'href="{review(settlement, "settlement_statement")}?player=p000240"' in html
    # A history restore gets the whole page.
    assert_full_page(as_operator.get(review(settlement) + "?page=2", **HISTORY_RESTORE))


def test_each_player_amount_is_explained(as_auditor, prepared):
    settlement = prepared(type="regular", stage="middle", entrants=20, tournament_id="T-WHY")
    payout = SettlementPayout.objects.get(settlement=settlement, player="p000001")
    url = review(settlement, "settlement_player") + "?player=p000001"
    html = squash(assert_full_page(as_auditor.get(url)))
    assert f"<dt>Chips at the crash</dt><dd>{payout.chips:,}</dd>" in html
    # The middle stage guarantees the buy-in first (10.00 USD), then splits the rest.
    assert '<dt>Guaranteed first: buy-in back</dt><dd data-part="guaranteed">10.00 USD</dd>' in html
    assert "<dt>Share of the rest of the pool</dt>" in html
    assert "<dt>Capped at the first prize</dt><dd>no</dd>" in html
    assert "<dt>Exact amount</dt>" in html
    assert "<dt>Rounding</dt>" in html
    # The arithmetic with its inputs: the pool, the players sharing, the player's chips.
    assert "The prize pool being shared" in html
    assert f"your {payout.chips:,} chips out of the" in html
    assert "Prize" in html and "From the prize pool" in html  # its ledger line
    assert f'href="{review(settlement, "settlement_statement")}?player=p000001"' in html

    partial = assert_partial(
        as_auditor.get(url, **HTMX, HTTP_HX_TARGET="player-detail"), "player-detail"
    )
    assert "Guaranteed first" in partial and "Dashboard" not in partial
    missing = as_auditor.get(review(settlement, "settlement_player") + "?player=nobody")
    assert missing.status_code == 404
    # A player knocked out gets an answer, not a 404.
    out = as_auditor.get(review(settlement, "settlement_player") + "?player=p000020")
    assert out.status_code == 200
    assert "knocked out before the crash" in out.content.decode()


def test_the_explain_panel_has_its_own_url_on_the_review_page(as_auditor, prepared):
    settlement = prepared(type="regular", stage="middle", entrants=200, tournament_id="T-URL")
    html = as_auditor.get(review(settlement) + "?q=p0000&page=2").content.decode()
    # Each "Explain" link keeps the search and the page, and pushes its URL so Back works.
    link = re.search(r'<a href="([^"]*player=p000060)" hx-get="([^"]*)"([^>]*)>Explain', html)
    assert link[1] == link[2] == "?q=p0000&amp;page=2&amp;player=p000060"
    assert 'hx-push-url="true"' in link[3]
    # The rows' links swap the panel named once on their parent (django-htmx's pattern).
    assert '<tbody hx-target="#player-detail" hx-swap="outerHTML">' in html
    url = review(settlement) + "?q=p0000&page=2&player=p000060"
    # The URL it pushes shows the whole page with the panel open: a reload, Back then Forward.
    page = squash(assert_full_page(as_auditor.get(url)))
    assert 'id="player-detail"' in page and "Why p000060 gets" in page
    assert "Guaranteed first" in page and "<dt>Players paid</dt>" in page
    assert 'aria-current="true">Explain<span class="visually-hidden"> the amount of p000060' in page
    # Under htmx only the panel is sent.
    panel = assert_partial(
        as_auditor.get(url, **HTMX, HTTP_HX_TARGET="player-detail"), "player-detail"
    )
    assert "Why p000060 gets" in panel and 'id="payouts"' not in panel
    # A player the settlement does not pay: the page without the panel; no panel under htmx.
    unknown = review(settlement) + "?player=nobody"
    assert "Choose “Explain”" in as_auditor.get(unknown).content.decode()
    assert as_auditor.get(unknown, **HTMX, HTTP_HX_TARGET="player-detail").status_code == 404


def test_a_capped_player_and_a_rounding_cent_are_named(as_operator, prepared):
    # A late regular: the leader is held at the first prize; cents go to the largest remainders.
    settlement = prepared(
        type="regular",
        stage="late",
        entrants=20,
        tournament_id="T-CAP",
        payouts=[19000, 500, 500],
        players=None,
    )
    rows = SettlementPayout.objects.filter(settlement=settlement)
    for row in rows:
        html = as_operator.get(
            review(settlement, "settlement_player") + f"?player={row.player}"
        ).content.decode()
        capped = "yes: held at the cap" in html
        assert capped == bool(row.capped)
        assert ("plus one of the cents left over" in html) == bool(row.rounding_cent)


def test_an_operator_submits_a_prepared_settlement(as_operator, as_marketing, prepared):
    settlement = prepared(type="regular", stage="middle", tournament_id="T-SUB")
    page = as_operator.get(review(settlement)).content.decode()
    assert "Submit for approval" in page
    assert as_marketing.post(review(settlement, "settlement_submit")).status_code == 403
    assert as_operator.get(review(settlement, "settlement_submit")).status_code == 405
    response = as_operator.post(review(settlement, "settlement_submit"), **HTMX)
    assert response.headers["HX-Redirect"] == review(settlement)
    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.AWAITING_APPROVAL
    again = as_operator.post(review(settlement, "settlement_submit"), **HTMX)
    assert again.status_code == 422
    assert "Cannot submit" in assert_partial(again, "settlement-actions")


def test_approval_restates_what_will_be_paid_then_approves(
    as_manager, tournament_manager, submitted
):
    # Pre stage: every entrant gets the buy-in from the pool and the fee from the house.
    settlement = submitted(type="regular", stage="pre", entrants=20, tournament_id="T-APP")
    page = as_manager.get(review(settlement)).content.decode()
    assert "Approve…" in page and "Reject…" in page
    confirm = assert_full_page(as_manager.get(review(settlement, "settlement_approve")))
    assert (
        f"Approve settlement #{settlement.pk}: 20 players, 200.00 USD from the pool, "
        "20.00 USD fees from the house." in confirm
    )
    assert "button button--danger" in confirm
    partial = assert_partial(
        as_manager.get(review(settlement, "settlement_approve"), **HTMX), "settlement-actions"
    )
    assert "Check before you approve" in partial

    empty = as_manager.post(review(settlement, "settlement_approve"), {"reason": ""}, **HTMX)
    assert empty.status_code == 422 and "This field is required." in empty.content.decode()
    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.AWAITING_APPROVAL

    done = as_manager.post(review(settlement, "settlement_approve"), {"reason": "Matches the log"})
    assert done.status_code == 302 and done.url == review(settlement)
    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.APPROVED
    assert settlement.approved_by == tournament_manager
    assert settlement.review_reason == "Matches the log"
    html = as_manager.get(done.url).content.decode()
    assert f'href="{review(settlement, "settlement_ledger")}"' in html
    assert "Approve…" not in html


def test_nobody_approves_their_own_work(django_user_model, operator, load_case):
    both = make_user(django_user_model, "both", "operator", "tournament_manager")
    client = signed_in(both)
    case = load_case(type="regular", stage="middle", tournament_id="T-OWN")
    settlement = settlement_services.settlement_prepare(case=case, actor=both)
    settlement_services.settlement_submit(settlement=settlement, actor=both)

    page = client.get(review(settlement)).content.decode()
    assert "Approve…" not in page
    assert "another Tournament Manager approves or rejects it" in page
    confirm = client.get(review(settlement, "settlement_approve"))
    assert confirm.status_code == 403
    html = confirm.content.decode()
    refusal = (
        f"You prepared Settlement #{settlement.pk}; another Tournament Manager must approve it."
    )
    assert refusal in html
    assert "button--danger" not in html
    for action in ("settlement_approve", "settlement_reject"):
        response = client.post(review(settlement, action), {"reason": "looks fine to me"})
        assert response.status_code == 403
        assert "another Tournament Manager must" in response.content.decode()
    # Under htmx the refusal is shown by loading the page (htmx does not swap a 403).
    response = client.post(review(settlement, "settlement_approve"), {"reason": "x"}, **HTMX)
    assert response.headers["HX-Redirect"] == review(settlement, "settlement_approve")
    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.AWAITING_APPROVAL


def test_rejection_needs_a_reason_and_reopens_the_case(as_manager, submitted):
    settlement = submitted(type="regular", stage="middle", tournament_id="T-REJ")
    page = as_manager.get(review(settlement, "settlement_reject")).content.decode()
    assert f"Reject settlement #{settlement.pk}: 10 players, 200.00 USD from the pool." in page
    assert as_manager.post(review(settlement, "settlement_reject"), {}).status_code == 422
    response = as_manager.post(
        review(settlement, "settlement_reject"), {"reason": "Wrong snapshot"}, **HTMX
    )
    assert response.headers["HX-Redirect"] == review(settlement)
    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.REJECTED
    assert settlement.case.status == CaseStatus.REJECTED
    html = as_manager.get(review(settlement)).content.decode()
    assert "“Wrong snapshot”" in html
    # Answering twice is refused in place.
    late = as_manager.get(review(settlement, "settlement_approve")).content.decode()
    assert f"Cannot approve Settlement #{settlement.pk}: it is rejected." in late


def test_only_managers_answer(as_operator, as_marketing, as_auditor, as_nobody, client, submitted):
    settlement = submitted(type="regular", stage="middle", tournament_id="T-WHO")
    for user_client in (as_operator, as_marketing, as_auditor, as_nobody):
        for action in ("settlement_approve", "settlement_reject"):
            assert user_client.get(review(settlement, action)).status_code == 403
            assert user_client.post(review(settlement, action), {"reason": "r"}).status_code == 403
    assert as_nobody.get(review(settlement)).status_code == 403
    anonymous = client.get(review(settlement))
    assert anonymous.status_code == 302 and anonymous.url.startswith(reverse("login"))
    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.AWAITING_APPROVAL


def test_the_approved_ledger_downloads_as_csv(
    as_operator, as_marketing, tournament_manager, submitted
):
    settlement = submitted(type="regular", stage="pre", entrants=20, tournament_id="T-CSV")
    assert as_operator.get(review(settlement, "settlement_ledger")).status_code == 404
    settlement_services.settlement_approve(
        settlement=settlement, actor=tournament_manager, reason="ok"
    )
    response = as_operator.get(review(settlement, "settlement_ledger"))
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert f"crashdesk-settlement-{settlement.pk}-T-CSV.csv" in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == 40  # a buy-in and a fee refund for each of the 20 entrants
    first = rows[0]
    assert first["idempotency_key"] == f"{settlement.pk}-1"
    assert (first["player"], first["kind"], first["amount"], first["currency"]) == (
        "p000001",
        "refund_buy_in",
        "10.00",
        "USD",
    )
    assert {row["source"] for row in rows if row["kind"] == "refund_fee"} == {"house"}
    # The review page shows every role each player's lines: the download answers the same.
    assert as_marketing.get(review(settlement, "settlement_ledger")).status_code == 200
    page = as_marketing.get(review(settlement)).content.decode()
    assert "Download the ledger (CSV)" in page


def test_an_adjustment_lists_its_corrections(as_manager, tournament_manager, operator, submitted):
    settlement = submitted(type="regular", stage="middle", tournament_id="T-ADJ")
    settlement_services.settlement_approve(
        settlement=settlement, actor=tournament_manager, reason="ok"
    )
    adjustment = settlement_services.settlement_adjust(
        settlement=settlement,
        actor=operator,
        reason="Late chip count correction",
        entries=[settlement_services.AdjustmentEntry("p000002", "prize", "cash", -150, "pool")],
    )
    html = assert_full_page(as_manager.get(review(adjustment)))
    assert f'Adjustment of <a href="{review(settlement)}">Settlement #{settlement.pk}</a>' in html
    assert "-1.50 USD" in html and "(taken back)" in html


def test_the_review_page_runs_as_many_queries_whatever_its_size(as_operator, prepared):
    small = prepared(type="regular", stage="middle", entrants=20, tournament_id="T-Q1")
    large = prepared(type="regular", stage="middle", entrants=400, tournament_id="T-Q2")
    counts = []
    for settlement in (small, large):
        for suffix in ("", "?page=2", "?q=p00001"):
            # A first view of each: the rows it draws are kept for the next.
            clear_caches()
            with CaptureQueriesContext(connection) as queries:
                assert as_operator.get(review(settlement) + suffix).status_code == 200
            counts.append(len(queries))
    assert counts[:3] == counts[3:]
    # The first view also computes the chart and stores it in the database cache, and each
    # stores the page's rows there.
    assert max(counts) <= 18


def test_large_counts_carry_thousands_separators(as_operator, prepared):
    # 4,000 entrants, 2,000 left: 40 pages of payouts.
    settlement = prepared(type="regular", stage="middle", entrants=4000, tournament_id="T-BIG")
    html = squash(as_operator.get(review(settlement)).content.decode())
    assert "<dt>Entrants (N)</dt><dd>4,000</dd>" in html
    assert "<dt>Players paid</dt><dd>2,000</dd>" in html
    assert "Page 1 of 40 · 2,000 players" in html
    case_page = as_operator.get(reverse("case_detail", args=[settlement.case_id])).content
    assert "<dt>Eliminated (E)</dt><dd>2,000</dd>" in case_page.decode()


def test_the_approver_reads_the_marketing_managers_reason(
    as_manager, operator, marketing_manager, load_case
):
    case = load_case(type="satellite", stage="middle", entrants=40, tournament_id="S-WHY")
    decision_record(
        case=case,
        actor=marketing_manager,
        option="chip_equity",
        reason="Flatter payouts after a long outage.",
    )
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    html = as_manager.get(review(settlement)).content.decode()
    assert "Split by chip equity, by marketing on" in html
    assert "“Flatter payouts after a long outage.”" in html
    confirm = as_manager.get(review(settlement, "settlement_approve")).content.decode()
    assert 'id="confirm-decision"' in confirm
    assert "<strong>Split by chip equity</strong>, was chosen by marketing" in confirm
    assert "“Flatter payouts after a long outage.”" in confirm


def test_payouts_list_the_largest_first_on_request_kept_in_the_url(as_manager, operator, load_case):
    # The later the id, the more chips: largest first is not the order of the ids.
    players = [{"id": f"p{i + 1:06d}", "chips": (i + 1) * 1000 if i < 10 else 0} for i in range(20)]
    case = load_case(type="regular", stage="middle", tournament_id="T-BIG", players=players)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    url = reverse("settlement_review", args=[settlement.pk])
    default = as_manager.get(url).content.decode()
    assert 'href="?sort=amount"' in default
    assert '<strong aria-current="true">Player</strong>' in default
    html = as_manager.get(url, {"sort": "amount"}).content.decode()
    assert '<strong aria-current="true">Largest first</strong>' in html
    table = html[html.index('id="payouts-table"') :]
    shown = re.findall(r'<span class="player-id"><span class="mono">([^<]+)</span>', table)
    largest = list(
        SettlementPayout.objects.filter(settlement=settlement)
        .order_by("-cash", "position")
        .values_list("player", flat=True)
    )
    assert len(shown) >= 3 and shown == largest[: len(shown)]
    assert shown[0] == "p000010" and shown != sorted(shown)
    # Each row's explanation and the search keep the order.
    assert "sort=amount&amp;page=1&amp;player=" in table
    assert 'name="sort" value="amount"' in html


def test_approving_a_rescheduled_freeroll_says_what_is_approved(
    as_manager, operator, marketing_manager, load_case
):
    from datetime import timedelta

    from django.utils import timezone

    case = load_case(type="freeroll", stage="middle", entrants=20, tournament_id="F-AGAIN")
    decision_record(
        case=case,
        actor=marketing_manager,
        option="reschedule",
        reason="Replay it",
        reschedule_at=timezone.now() + timedelta(days=3),
        invited_players=["p000004", "p000002"],
    )
    settlement = settlement_services.settlement_submit(
        settlement=settlement_services.settlement_prepare(case=case, actor=operator), actor=operator
    )
    html = assert_full_page(as_manager.get(review(settlement, "settlement_approve")))
    statement = re.search(r'id="confirm-statement">(.*?)</p>', html, re.S).group(1)
    assert "it pays nobody" in statement and "0 players" not in statement
    nobody = re.search(r'id="confirm-pays-nobody">(.*?)</p>', html, re.S).group(1)
    assert "played again on" in nobody and "(2 players)" in nobody
