"""The ledger feed and confirmations under concurrent writers, on PostgreSQL.

A feed ordered by anything handed out at insert time (an id, a timestamp) loses lines: an
approval that took its number first but commits second is behind the cursor of a reader that
already saw the later one. Places are therefore handed out under the feed's own lock. These
tests read the feed over HTTP while approvals commit in other threads, and hold each approval
open a while after it took its places, which is when a feed ordered by insertion would skip.
"""

import threading
import time

import pytest
from django.test import Client
from django.utils import timezone

from settlements.access import roles
from settlements.models import PaymentConfirmation, PaymentTally
from settlements.selectors.payments.lines import approved_lines
from settlements.services import payments as payment_services
from settlements.services import settlements as settlement_services
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.payments import ConfirmationEntry
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create
from tests.api.conftest import bearer
from tests.conftest import make_user
from tests.races import RACES, TIMEOUT, run_together, start_thread

pytestmark = [*RACES, pytest.mark.slow]  # threads reading and writing for a few seconds

APPROVERS = 4
SETTLEMENTS = 12
COMPENSATIONS = 8


@pytest.fixture
def slow_commits(monkeypatch):
    """Each approval stays open 50 ms after taking its places, before it commits."""
    original = payment_services.release_lines

    def release_then_wait(**kwargs):
        release = original(**kwargs)
        time.sleep(0.05)
        return release

    for module in ("settlements.services.settlements", "settlements.services.compensation"):
        monkeypatch.setattr(f"{module}.release_lines", release_then_wait)


def test_a_reader_racing_approvals_sees_every_line_once(
    django_user_model, snapshot_factory, slow_commits
):
    operator = make_user(django_user_model, "op", roles.OPERATOR)
    managers = [
        make_user(django_user_model, f"tm{i}", roles.TOURNAMENT_MANAGER) for i in range(APPROVERS)
    ]
    cashier = make_user(django_user_model, "wallet", roles.CASHIER)
    _, raw = api_token_create(user=cashier, name="wallet")

    work = []
    for number in range(SETTLEMENTS):
        case = case_load_snapshot(
            actor=operator,
            snapshot=snapshot_factory(tournament_id=f"R-{number}", stage="early", entrants=30),
        )
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        work.append(settlement_services.settlement_submit(settlement=settlement, actor=operator))
        if number < COMPENSATIONS:
            work.append(
                compensation_propose(
                    case=case,
                    actor=operator,
                    reason="lag",
                    entries=[CompensationEntry("p000001", 100 + number)],
                )
            )

    approving, reading = threading.Event(), threading.Event()
    approving.set()

    def approve(index: int, _prepared) -> None:
        for record in work[index::APPROVERS]:
            if hasattr(record, "line_count"):
                settlement_services.settlement_approve(settlement=record, actor=managers[index])
            else:
                compensation_approve(compensation=record, actor=managers[index])

    seen: list[dict] = []
    at_the_head = 0  # pages that ended at the last committed line while approvals went on

    def read() -> None:
        nonlocal at_the_head
        client, cursor = Client(), None
        while True:
            still_approving = approving.is_set()
            query = "?limit=40" + (f"&after={cursor}" if cursor else "")
            body = client.get(f"/api/v1/ledger{query}", **bearer(raw)).json()
            seen.extend(body["lines"])
            cursor = body["cursor"]
            reading.set()
            if not body["more"] and still_approving:
                at_the_head += 1
            if not body["more"] and not still_approving:
                return

    reader = start_thread(read)
    assert reading.wait(timeout=TIMEOUT)
    try:
        outcomes = run_together(APPROVERS, approve)
    finally:
        approving.clear()
    reader.join(timeout=TIMEOUT)
    assert outcomes == [None] * APPROVERS

    expected = [line.key for line in approved_lines()]
    keys = [line["idempotency_key"] for line in seen]
    assert len(expected) == sum(getattr(r, "line_count", 1) for r in work)
    assert keys == expected
    assert [line["sequence"] for line in seen] == list(range(1, len(expected) + 1))
    # The reader caught up with the approvals again and again, so it raced them.
    assert at_the_head >= 2


def test_two_cashiers_confirming_one_line_record_one_payment(django_user_model, snapshot_factory):
    operator = make_user(django_user_model, "op", roles.OPERATOR)
    manager = make_user(django_user_model, "tm", roles.TOURNAMENT_MANAGER)
    cashiers = [make_user(django_user_model, f"wallet{i}", roles.CASHIER) for i in range(8)]
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory(stage="late"))
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=manager)
    line = next(approved_lines())

    def confirm(index: int, _prepared):
        entry = ConfirmationEntry(line.key, "paid", f"tx-{index % 2}", timezone.now(), line.amount)
        return payment_services.payment_confirm(actor=cashiers[index], confirmations=[entry])[0]

    answers = run_together(len(cashiers), confirm)

    recorded = [answer for answer in answers if answer.outcome == "recorded"]
    assert len(recorded) == 1
    stored = PaymentConfirmation.objects.get()
    same = [a for i, a in enumerate(answers) if f"tx-{i % 2}" == stored.external_reference]
    other = [a for i, a in enumerate(answers) if f"tx-{i % 2}" != stored.external_reference]
    assert sorted(a.outcome for a in same) == ["already_recorded"] * 3 + ["recorded"]
    assert {a.outcome for a in other} == {"refused"}
    tally = PaymentTally.objects.get(release__settlement=settlement)
    assert (tally.paid_lines, tally.paid) == (1, {line.unit: line.amount})
