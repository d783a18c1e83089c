"""Support can say whether a player was paid: the players page, the statement, its printable
page and the statements' exports say where each line's payment stands, and the players page
what approved records owe the player in all."""

import csv
import io
import json

import pytest
from django.urls import reverse

from settlements.access import roles
from settlements.money import format_in_unit
from settlements.selectors.payments import lines as payment_lines
from settlements.selectors.payments import states as payment_states
from settlements.services import compensation
from settlements.services import settlements as settlement_services
from settlements.services.individual_cases import prize_withdrawal_approve, prize_withdrawal_decide
from settlements.services.tokens import api_token_create
from tests.payment_helpers import answer, paid_out
from tests.views.conftest import HTMX, assert_csp_clean, assert_full_page, assert_partial, signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def out(users, load_case):
    case = load_case(stage="middle", tournament_id="PAY-1")
    settlement = settlement_services.settlement_prepare(case=case, actor=users[roles.OPERATOR])
    settlement_services.settlement_submit(settlement=settlement, actor=users[roles.OPERATOR])
    settlement_services.settlement_approve(
        settlement=settlement, actor=users[roles.TOURNAMENT_MANAGER], reason="checked"
    )
    return paid_out(settlement, users)


def test_the_players_page_says_what_became_of_each_line_and_the_totals(out, as_auditor):
    player = out.reissued.player
    html = assert_full_page(as_auditor.get(reverse("players"), {"q": player}))
    assert 'data-payment="reissued"' in html
    assert f"The wallet could not pay {out.reissued.key}; paid again as {out.reissue_key}" in html
    assert "wallet reference TX-AGAIN" in html
    assert 'id="player-totals"' in html and "Owed in all by approved records" in html
    partial = assert_partial(
        as_auditor.get(reverse("players"), {"q": out.failed.player}, **HTMX), "player-results"
    )
    assert 'data-payment="failed"' in partial and "wallet reference LIMIT; not paid yet" in partial


def test_the_statement_and_its_printable_page_say_where_the_payment_stands(out, as_auditor):
    settlement = out.settlement
    query = {"player": out.paid.player}
    page = as_auditor.get(reverse("settlement_statement", args=[settlement.pk]), query)
    html = assert_full_page(page)
    assert 'data-payment="paid"' in html and "wallet reference TX-PAID" in html
    printable = as_auditor.get(reverse("settlement_statement_print", args=[settlement.pk]), query)
    printed = printable.content.decode()
    assert "wallet reference TX-PAID" in printed
    # A way to print it and a way back, in a block the printer leaves out (.form-actions).
    assert '<button class="button button--primary" type="button" data-print>Print</button>' in (
        printed
    )
    back = f"{reverse('settlement_statement', args=[settlement.pk])}?player={out.paid.player}"
    assert f'href="{back}">Back to the statement</a>' in printed
    assert_csp_clean(printed)
    unpaid = as_auditor.get(
        reverse("settlement_statement", args=[settlement.pk]), {"player": out.unconfirmed.player}
    ).content.decode()
    # A statement is for the player: the ledger's line keys mean nothing to them.
    assert "Sent to the wallet, not yet confirmed." in unpaid
    assert out.unconfirmed.key not in unpaid.split('id="statement"')[-1]


def test_a_statement_before_approval_says_nothing_was_sent(users, load_case, as_auditor):
    case = load_case(stage="middle", tournament_id="PAY-2")
    settlement = settlement_services.settlement_prepare(case=case, actor=users[roles.OPERATOR])
    player = settlement.lines.order_by("line_no").first().player
    html = as_auditor.get(
        reverse("settlement_statement", args=[settlement.pk]), {"player": player}
    ).content.decode()
    assert 'data-payment="not_sent"' in html and "not sent to the wallet yet" in html


def test_the_statements_exports_carry_each_lines_payment(out, as_auditor):
    settlement = out.settlement
    jsonl = as_auditor.get(reverse("settlement_statements_jsonl", args=[settlement.pk]))
    documents = {
        document["player"]: document
        for document in map(json.loads, b"".join(jsonl.streaming_content).splitlines())
    }
    payment = documents[out.reissued.player]["lines"][0]["payment"]
    assert payment["state"] == "reissued" and payment["reissued_as"] == out.reissue_key
    assert payment["reissue"]["state"] == "paid" and payment["reissue"]["reference"] == "TX-AGAIN"
    assert documents[out.paid.player]["lines"][0]["payment"]["at"].endswith("Z")
    assert "wallet reference TX-PAID" in documents[out.paid.player]["text"]

    response = as_auditor.get(reverse("settlement_statements_csv", args=[settlement.pk]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    by_player = {row["player"]: row for row in rows}
    assert "wallet reference LIMIT" in by_player[out.failed.player]["payment"]


def test_the_statements_api_carries_each_lines_payment(out, users):
    client = signed_in(users[roles.AUDITOR])
    raw = api_token_create(user=users[roles.AUDITOR], name="crm")[1]
    response = client.get(
        f"/api/v1/settlements/{out.settlement.pk}/statements",
        {"player": out.failed.player},
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 200, response.content
    (statement,) = response.json()["statements"]
    assert statement["lines"][0]["payment"]["state"] == "failed"
    assert statement["lines"][0]["payment"]["key"] == out.failed.key


def test_failed_payments_sort_by_a_column_kept_in_the_url(out, users, as_auditor):
    answer(users[roles.CASHIER], out.unconfirmed, "failed", "BANK-DOWN")
    url = reverse("payments")
    keys = sorted([out.failed.key, out.unconfirmed.key], key=lambda key: int(key.split("-")[1]))
    players = sorted([out.failed.player, out.unconfirmed.player])

    def listed(html: str, among: list[str]) -> list[str]:
        return sorted(among, key=html.index)

    html = assert_full_page(as_auditor.get(url))
    assert listed(html, keys) == keys
    assert 'aria-sort="ascending"><a id="sort-key" href="?sort=-key"' in html
    newest = assert_partial(as_auditor.get(url, {"sort": "-player"}, **HTMX), "payments-queue")
    assert listed(newest, players) == players[::-1]
    assert 'aria-sort="descending"><a id="sort-player" href="?sort=player"' in newest


def test_the_players_page_says_where_compensation_payments_stand(out, users, as_auditor):
    player = out.paid.player
    manager, operator = users[roles.TOURNAMENT_MANAGER], users[roles.OPERATOR]
    case = out.settlement.case

    def propose(amount):
        return compensation.compensation_propose(
            case=case,
            actor=operator,
            reason="lag",
            entries=[compensation.CompensationEntry(player, amount)],
        )

    waiting, paid = propose(100), propose(200)
    compensation.compensation_approve(compensation=paid, actor=manager, reason="fair")
    line = payment_lines.lines_of([f"C{paid.pk}-1"])[f"C{paid.pk}-1"]
    answer(users[roles.CASHIER], line, "paid", "TX-COMP")
    html = as_auditor.get(reverse("players"), {"q": player}).content.decode()
    also = html[html.index(f"Compensation #{waiting.pk}") :]
    assert "Not sent to the wallet yet: it is not approved." in also
    assert "wallet reference TX-COMP" in also[also.index(f"Compensation #{paid.pk}") :]
    # Approved compensation counts in the player's totals; the proposal does not yet.
    totals = html[html.index('id="player-totals"') :]
    assert f"{(out.paid.amount + 200) / 100:.2f} USD" in totals


def test_an_adjustments_lines_say_where_their_payment_stands_too(out, users, as_auditor):
    player = out.paid.player
    adjustment = settlement_services.settlement_adjust(
        settlement=out.settlement,
        actor=users[roles.OPERATOR],
        reason="a stack misread",
        entries=[settlement_services.AdjustmentEntry(player, "prize", "cash", 75, "pool")],
    )
    settlement_services.settlement_submit(settlement=adjustment, actor=users[roles.OPERATOR])
    before = assert_full_page(as_auditor.get(reverse("players"), {"q": player}))
    assert before.count('data-payment="not_sent"') == 1  # submitted, not approved yet
    settlement_services.settlement_approve(
        settlement=adjustment, actor=users["second_manager"], reason="checked"
    )
    line = next(payment_lines.approved_lines(payment_lines.releases_of(settlement=adjustment.pk)))
    answer(users[roles.CASHIER], line, "paid", "TX-ADJ")
    html = assert_full_page(as_auditor.get(reverse("players"), {"q": player}))
    assert "wallet reference TX-ADJ" in html and 'data-payment="not_sent"' not in html


def test_an_approved_prize_withdrawal_is_taken_off_what_the_player_is_owed(out, users, as_auditor):
    player, case = out.failed.player, out.settlement.case
    currency = case.tournament.currency
    owed_before = dict(((c, u), a) for c, u, a in payment_states.player_totals(player))
    proposal = prize_withdrawal_decide(
        case=case,
        actor=users[roles.TOURNAMENT_MANAGER],
        player=player,
        prize="A bounty paid twice",
        outcome="withdraw",
        reason="the wallet paid it twice",
        amount=300,
        unit="cash",
    )
    # A proposal may still be rejected: nothing is taken off yet.
    assert dict(((c, u), a) for c, u, a in payment_states.player_totals(player)) == owed_before
    prize_withdrawal_approve(withdrawal=proposal, actor=users["second_manager"], reason="checked")
    owed = owed_before[currency, "cash"] - 300
    html = as_auditor.get(reverse("players"), {"q": player}).content.decode()
    totals = html[html.index('id="player-totals"') :].split("</dl>")[0]
    assert format_in_unit(owed, "cash", currency) in totals

    statement = as_auditor.get(
        reverse("settlement_statement", args=[out.settlement.pk]), {"player": player}
    ).content.decode()
    also = statement[statement.index("Also on record") :]
    assert f"{format_in_unit(300, 'cash', currency)} is taken back" in also

    reissue = signed_in(users[roles.TOURNAMENT_MANAGER]).get(
        reverse("reissue_new", args=[out.failed.key])
    )
    page = assert_full_page(reissue)
    taken = page[page.index('id="taken-back"') :].split("</dd>")[0]
    assert format_in_unit(300, "cash", currency) in taken and "A bounty paid twice" in taken
