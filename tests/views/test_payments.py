"""The pages after approval: the incident's payment batch, reconciliation, the payments queue,
re-issues with four eyes, and the auditor's "paid exactly once" answer."""

import csv
import io
import json
import re
from collections import defaultdict

import pytest
from django.urls import reverse
from django.utils import timezone

from settlements.models import LedgerRelease, Reissue
from settlements.selectors.payments import lines as payment_lines
from settlements.selectors.payments import reconciliation as payment_reconciliation
from settlements.services import payments as payment_services
from settlements.services import reissues as reissue_services
from settlements.services import settlements as settlement_services
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.individual_cases import prize_withdrawal_approve, prize_withdrawal_decide
from settlements.services.payments import ConfirmationEntry
from settlements.services.settlements import AdjustmentEntry
from settlements.services.snapshots import case_load_snapshot
from tests.views.conftest import HTMX, assert_full_page, assert_partial, signed_in

pytestmark = pytest.mark.django_db


def rows_of(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))


def dict_rows(response) -> list[dict]:
    rows = rows_of(response)
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]


def confirm(cashier, *lines, status="paid", reference="tx"):
    return payment_services.payment_confirm(
        actor=cashier,
        confirmations=[
            ConfirmationEntry(
                line.key, status, f"{reference}-{line.key}", timezone.now(), line.amount
            )
            for line in lines
        ],
    )


@pytest.fixture
def outage(load_case, operator, tournament_manager, second_manager, cashier, snapshot_factory):
    """An incident with two approved settlements (one adjusted), a compensation, a prize
    withdrawn and a re-issued line; and another incident whose lines must stay out."""

    def approve(case):
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        settlement_services.settlement_submit(settlement=settlement, actor=operator)
        return settlement_services.settlement_approve(
            settlement=settlement, actor=tournament_manager
        )

    early = approve(load_case(tournament_id="B-1", stage="early"))
    late = approve(load_case(tournament_id="B-2", type="satellite", stage="late"))
    adjustment = settlement_services.settlement_adjust(
        settlement=early,
        actor=operator,
        reason="a stack misread",
        entries=[AdjustmentEntry("p000001", "prize", "cash", 75, "pool")],
    )
    settlement_services.settlement_submit(settlement=adjustment, actor=operator)
    settlement_services.settlement_approve(settlement=adjustment, actor=second_manager)
    proposal = compensation_propose(
        case=early.case,
        actor=operator,
        reason="lag",
        entries=[CompensationEntry("p000002", 900), CompensationEntry("p000003", 60, "fpp")],
    )
    compensation = compensation_approve(compensation=proposal, actor=tournament_manager)
    withdrawal = prize_withdrawal_approve(
        withdrawal=prize_withdrawal_decide(
            case=late.case,
            actor=tournament_manager,
            player="p000004",
            prize="paid twice",
            outcome="withdraw",
            reason="duplicate",
            amount=250,
            unit="tdollars",
        ),
        actor=second_manager,
        reason="checked",
    )
    first = next(payment_lines.approved_lines(LedgerRelease.objects.filter(settlement=early)))
    confirm(cashier, first, status="failed", reference="closed")
    reissue = reissue_services.reissue_propose(
        actor=operator, idempotency_key=first.key, reason="fixed"
    )
    reissue_services.reissue_approve(reissue=reissue, actor=second_manager)
    elsewhere = case_load_snapshot(
        actor=operator, snapshot=snapshot_factory(tournament_id="ELSE", stage="late")
    )
    approve(elsewhere)
    return {
        "incident": early.case.incident,
        "settlements": [early, late, adjustment],
        "compensation": compensation,
        "withdrawal": withdrawal,
        "reissue": reissue,
    }


def test_the_batch_has_every_approved_line_of_the_incident_and_only_those(
    outage, as_operator, as_auditor
):
    incident = outage["incident"]
    csv_rows = rows_of(as_operator.get(reverse("incident_payments_csv", args=[incident.pk])))
    blank = csv_rows.index([])
    header, lines, summary = csv_rows[0], csv_rows[1:blank], csv_rows[blank + 1 :]
    lines = [dict(zip(header, row, strict=True)) for row in lines]

    # Each per-record ledger, downloaded on its own, adds up to the same lines.
    per_record = []
    for settlement in outage["settlements"]:
        per_record += dict_rows(as_operator.get(reverse("settlement_ledger", args=[settlement.pk])))
    compensation = outage["compensation"]
    per_record += dict_rows(as_operator.get(reverse("compensation_ledger", args=[compensation.pk])))
    keys = {row["idempotency_key"] for row in lines}
    assert {row["idempotency_key"] for row in per_record} < keys
    extra = sorted(keys - {row["idempotency_key"] for row in per_record})
    assert extra == sorted([f"W{outage['withdrawal'].pk}-1", f"R{outage['reissue'].pk}-1"])
    assert len(lines) == len(keys)  # no line twice
    assert "ELSE" not in {row["tournament"] for row in lines}
    assert [int(row["sequence"]) for row in lines] == sorted(int(row["sequence"]) for row in lines)

    # The summary: totals by currency and unit, equal to the sum of the record ledgers.
    expected = defaultdict(int)
    counted = defaultdict(int)
    for row in per_record + [row for row in lines if row["idempotency_key"] in extra]:
        expected[row["currency"], row["unit"]] += int(row["amount_minor"])
        counted[row["currency"], row["unit"]] += 1
    assert summary[0] == ["total", "currency", "unit", "lines", "amount_minor", "amount"]
    got = {(row[1], row[2]): (int(row[3]), int(row[4])) for row in summary[1:]}
    assert got == {key: (counted[key], amount) for key, amount in expected.items()}
    assert ("USD", "tdollars") in got and got["USD", "tdollars"][1] < 0  # the T$ taken back

    # The JSON batch: the same lines and the same summary, for machines.
    response = as_auditor.get(reverse("incident_payments_json", args=[incident.pk]))
    assert response["Content-Type"] == "application/json"
    document = json.loads(b"".join(response.streaming_content))
    assert document["format"] == "crashdesk-payment-batch/1"
    assert document["incident"]["id"] == incident.pk
    assert [line["idempotency_key"] for line in document["lines"]] == [
        row["idempotency_key"] for row in lines
    ]
    assert document["summary"]["lines"] == len(lines)
    assert {
        (total["currency"] or "", total["unit"]): (total["lines"], total["amount"])
        for total in document["summary"]["totals"]
    } == got
    reissued = next(line for line in document["lines"] if line["record"] == "reissue")
    assert reissued["reissue_of"] is not None and reissued["settlement"] is not None


def test_the_incident_page_shows_its_payments_and_the_batch(outage, as_manager, cashier):
    incident = outage["incident"]
    settlement = outage["settlements"][1]
    lines = list(payment_lines.approved_lines(LedgerRelease.objects.filter(settlement=settlement)))
    confirm(cashier, *lines)
    page = as_manager.get(reverse("incident_tournaments", args=[incident.pk])).content.decode()
    assert 'id="incident-payments"' in page
    assert reverse("incident_payments_csv", args=[incident.pk]) in page
    assert reverse("incident_payments_json", args=[incident.pk]) in page
    summary = payment_reconciliation.reconciliation(LedgerRelease.objects.filter(incident=incident))
    assert summary.paid_lines == len(lines) and summary.reissued_lines == 1
    assert f'<td class="num">{summary.lines}</td>' in page
    assert f'<td class="num">{summary.unconfirmed_lines}</td>' in page


def test_a_marketing_manager_sees_no_payments(outage, as_marketing):
    incident = outage["incident"]
    page = as_marketing.get(reverse("incident_tournaments", args=[incident.pk]))
    assert b'id="incident-payments"' not in page.content


def test_approved_records_show_their_payments(outage, as_auditor, cashier):
    settlement, compensation = outage["settlements"][0], outage["compensation"]
    lines = list(payment_lines.approved_lines(LedgerRelease.objects.filter(settlement=settlement)))
    confirm(cashier, lines[1])
    confirm(cashier, lines[2], status="failed")
    review = as_auditor.get(reverse("settlement_review", args=[settlement.pk]))
    payments = review.context["payments"]
    assert (payments.paid_lines, payments.failed_lines, payments.reissued_lines) == (1, 1, 1)
    assert payments.unconfirmed_lines == len(lines) - 3
    assert b"Not yet confirmed" in review.content
    # Units by their names, money units with their currency.
    units = re.findall(r'<th scope="row">([^<]*)</th>', review.content.decode())
    assert units[0] == "Lines" and f"Cash ({settlement.currency})" in units
    assert set(units[1:]) <= {
        f"Cash ({settlement.currency})",
        f"T$ ({settlement.currency})",
        "Tickets",
        "FPP",
    }
    detail = as_auditor.get(reverse("compensation_detail", args=[compensation.pk]))
    assert detail.context["payments"].unconfirmed_lines == 2


# --- The payments queue ------------------------------------------------------------------------


def test_failed_lines_wait_for_a_reissue(outage, as_operator, cashier):
    settlement = outage["settlements"][1]
    lines = list(payment_lines.approved_lines(LedgerRelease.objects.filter(settlement=settlement)))
    confirm(cashier, lines[0], status="failed", reference="first try")
    confirm(cashier, lines[0], status="failed", reference="second try")
    confirm(cashier, lines[1], status="failed")
    confirm(cashier, lines[1])  # paid after all
    response = as_operator.get(reverse("payments"))
    failures = list(response.context["page"])
    assert [(f.idempotency_key, f.external_reference) for f in failures] == [
        (lines[0].key, f"second try-{lines[0].key}")
    ]
    assert reverse("reissue_new", args=[lines[0].key]).encode() in response.content
    partial = as_operator.get(reverse("payments") + "?tab=failed", **HTMX)
    assert b"<html" not in partial.content and b'id="payments-queue"' in partial.content


def test_lines_not_confirmed_in_time_are_overdue(outage, as_manager, cashier, settings):
    incident = outage["incident"]
    releases = LedgerRelease.objects.filter(incident=incident)
    everything = list(payment_lines.approved_lines(releases))
    confirm(cashier, *everything[:5])
    url = reverse("payments") + f"?tab=overdue&incident={incident.pk}"
    assert as_manager.get(url).context["lines"] == []  # all approved just now

    # Once the window has passed (a window of 0 hours: a release is write-once, so its time
    # cannot be moved back), every unconfirmed line is overdue.
    settings.PAYMENT_CONFIRMATION_HOURS = 0
    first = as_manager.get(url).context
    unconfirmed = [line.key for line in everything[5:]]
    waiting = [
        p.line.key
        for p in payment_reconciliation.with_payments(everything)
        if p.state == "unconfirmed"
    ]
    assert unconfirmed == waiting
    assert first["overdue_count"] == len(unconfirmed)
    shown = [line.key for line in first["lines"]]
    page, after = first, None
    while page["next_after"]:
        after = page["next_after"]
        page = as_manager.get(f"{url}&after={after}").context
        shown += [line.key for line in page["lines"]]
    assert shown == unconfirmed


def test_a_reissue_is_proposed_then_approved_by_another_manager(
    outage, as_operator, as_manager, cashier, second_manager
):
    settlement = outage["settlements"][1]
    line = next(payment_lines.approved_lines(LedgerRelease.objects.filter(settlement=settlement)))
    confirm(cashier, line, status="failed")
    url = reverse("reissue_new", args=[line.key])
    page = as_operator.get(url)
    assert page.status_code == 200 and line.player.encode() in page.content
    assert as_operator.post(url, {"reason": ""}).status_code == 422
    response = as_operator.post(url, {"reason": "bank details corrected"})
    assert response.status_code == 302
    reissue = Reissue.objects.get(original_key=line.key)
    assert reissue.status == "proposed" and reissue.proposed_by.username == "operator"

    queue = as_manager.get(reverse("payments") + "?tab=reissues")
    assert reverse("reissue_approve", args=[reissue.pk]).encode() in queue.content
    approve = reverse("reissue_approve", args=[reissue.pk])
    confirm_page = as_manager.get(approve)
    assert b"in place of the failed line" in confirm_page.content
    as_manager.post(approve, {"reason": "checked the new account"})
    reissue.refresh_from_db()
    assert (reissue.status, reissue.approved_by.username) == ("approved", "manager")
    last = list(payment_lines.approved_lines())[-1]
    assert (last.key, last.release.reissue_of) == (f"R{reissue.pk}-1", line.key)


def test_a_reissue_is_not_approved_by_its_proposer(outage, tournament_manager, cashier):
    settlement = outage["settlements"][1]
    line = next(payment_lines.approved_lines(LedgerRelease.objects.filter(settlement=settlement)))
    confirm(cashier, line, status="failed")
    reissue = reissue_services.reissue_propose(
        actor=tournament_manager, idempotency_key=line.key, reason="r"
    )
    client = signed_in(tournament_manager)
    url = reverse("reissue_approve", args=[reissue.pk])
    assert client.get(url).status_code == 403
    assert client.post(url, {"reason": "mine"}).status_code == 403
    reissue.refresh_from_db()
    assert reissue.status == "proposed"


@pytest.mark.parametrize(
    "key", ["999-1", f"{2**64}-1", f"C{2**64}-1", "1-١", "x" * 5000, "%00", "R-1", "1-"]
)
def test_an_unknown_key_has_no_reissue_page(as_operator, key):
    assert as_operator.get(reverse("reissue_new", args=[key])).status_code == 404


@pytest.mark.parametrize(
    ("reason", "message"),
    [
        ("x" * 1_000_000, "at most 5000 characters"),
        ("fixed\x00", "Null characters are not allowed"),
        ("  ", "This field is required"),
    ],
)
def test_a_reissue_reason_that_cannot_be_kept_is_refused_at_its_field(
    outage, as_operator, cashier, reason, message
):
    line = next(
        payment_lines.approved_lines(
            LedgerRelease.objects.filter(settlement=outage["settlements"][1])
        )
    )
    confirm(cashier, line, status="failed")
    response = as_operator.post(reverse("reissue_new", args=[line.key]), {"reason": reason}, **HTMX)
    assert response.status_code == 422
    assert message in response.context["form"].errors["reason"][0]
    assert not Reissue.objects.filter(original_key=line.key).exists()


# --- The auditor's answer ----------------------------------------------------------------------


def test_the_auditor_answers_paid_exactly_once_from_one_page_and_one_export(
    outage, as_auditor, cashier
):
    incident = outage["incident"]
    releases = LedgerRelease.objects.filter(incident=incident)
    everything = list(payment_lines.approved_lines(releases))
    url = reverse("payments_audit") + f"?incident={incident.pk}"
    answer = as_auditor.get(url).context["answer"]
    assert not answer.settled and answer.paid_twice == 0 and answer.tallies_wrong == []

    waiting = [
        p.line for p in payment_reconciliation.with_payments(everything) if p.state == "unconfirmed"
    ]
    confirm(cashier, *waiting)
    page = as_auditor.get(url)
    assert page.context["answer"].settled
    assert b"Yes: every approved line was paid once" in page.content

    export = dict_rows(
        as_auditor.get(reverse("payments_audit_export") + f"?incident={incident.pk}")
    )
    assert [row["idempotency_key"] for row in export] == [line.key for line in everything]
    states = {row["state"] for row in export}
    assert states == {"paid", "reissued"}
    reissued = next(row for row in export if row["state"] == "reissued")
    assert reissued["reissued_as"] == f"R{outage['reissue'].pk}-1"
    paid = next(row for row in export if row["state"] == "paid")
    assert paid["external_reference"] == f"tx-{paid['idempotency_key']}" and paid["confirmed_at"]


def test_a_prize_the_cashier_could_not_take_back_shows_as_such(outage, as_manager, cashier):
    withdrawal = outage["withdrawal"]
    url = reverse("case_detail", args=[withdrawal.case_id])
    assert "Not yet confirmed" in as_manager.get(url).content.decode()
    (line,) = payment_lines.approved_lines(
        LedgerRelease.objects.filter(prize_withdrawal=withdrawal)
    )
    assert (line.kind, line.amount) == ("prize_withdrawal", -250)
    confirm(cashier, line, status="failed", reference="balance too low")
    page = as_manager.get(url).content.decode()
    assert "Could not be collected" in page
    failed = as_manager.get(reverse("payments")).context["page"]
    assert [f.idempotency_key for f in failed] == [line.key]


def test_a_reissue_has_its_history_for_the_auditor(outage, as_auditor):
    reissue = outage["reissue"]
    url = reverse("history_record", args=["reissue", reissue.pk])
    page = as_auditor.get(url)
    assert page.status_code == 200
    assert b"approved" in page.content.lower()
    listing = as_auditor.get(reverse("history") + "?model=reissue")
    assert listing.status_code == 200


def test_waiting_reissues_sort_by_a_column_kept_in_the_url(outage, as_manager, operator, cashier):
    # The early settlement's refunds: buy-ins and fees, two amounts (its first line is re-issued).
    early = outage["settlements"][0]
    lines = list(payment_lines.approved_lines(LedgerRelease.objects.filter(settlement=early)))[1:]
    small, large = sorted(
        {line.amount: line for line in lines if line.amount > 0}.values(),
        key=lambda line: line.amount,
    )[:2]
    confirm(cashier, large, small, status="failed", reference="closed")
    for line in (large, small):
        reissue_services.reissue_propose(
            actor=operator, idempotency_key=line.key, reason="new account"
        )
    url = reverse("payments")

    def order(html: str) -> list[str]:
        return sorted([small.key, large.key], key=lambda key: html.index(f"of {key}<"))

    oldest_first = assert_full_page(as_manager.get(url, {"tab": "reissues"}))
    assert 'aria-sort="ascending"><a id="sort-proposed"' in oldest_first
    assert order(oldest_first) == [large.key, small.key]
    by_amount = assert_partial(
        as_manager.get(url, {"tab": "reissues", "sort": "amount"}, **HTMX), "payments-queue"
    )
    assert order(by_amount) == [small.key, large.key]
    assert 'href="?tab=reissues&amp;sort=-amount"' in by_amount
    largest = assert_full_page(as_manager.get(url, {"tab": "reissues", "sort": "-amount"}))
    assert order(largest) == [large.key, small.key]
