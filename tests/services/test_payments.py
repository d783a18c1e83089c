"""Approved lines handed to the cashier (releases), its confirmations, and re-issues."""

import importlib
import random
from datetime import timedelta

import pytest
from django.apps import apps
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone

from settlements.errors import DomainError, InvalidTransition, NotAllowed
from settlements.models import (
    Event,
    LedgerRelease,
    PaymentConfirmation,
    PaymentTally,
)
from settlements.selectors.payments import lines as payment_lines
from settlements.selectors.payments import reconciliation as payment_reconciliation
from settlements.services import payments, reissues
from settlements.services import settlements as settlement_services
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
)
from settlements.services.decisions import decision_record
from settlements.services.individual_cases import prize_withdrawal_approve, prize_withdrawal_decide
from settlements.services.payments import ConfirmationEntry
from settlements.services.settlements import AdjustmentEntry
from tests.services.helpers import approved, load, row_counts

pytestmark = pytest.mark.django_db


def lines(releases=None, **kwargs):
    return list(payment_lines.approved_lines(releases, **kwargs))


def confirmation(line, status="paid", reference="tx-1", **changes) -> ConfirmationEntry:
    fields = {
        "idempotency_key": line.key,
        "status": status,
        "external_reference": reference,
        "at": timezone.now(),
        "amount": line.amount,
        **changes,
    }
    return ConfirmationEntry(**fields)


def outcomes(answers) -> list[str]:
    return [answer.outcome for answer in answers]


def compensation(case, operator, manager, *entries):
    proposal = compensation_propose(
        case=case,
        actor=operator,
        reason="lag at the final table",
        entries=[CompensationEntry(*entry) for entry in entries],
    )
    return compensation_approve(compensation=proposal, actor=manager)


def withdrawal(
    case, manager, approver=None, *, amount=700, unit="cash", outcome="withdraw", player="p000003"
):
    """A prize given in error, proposed by ``manager`` and, if given, approved by ``approver``."""
    decided = prize_withdrawal_decide(
        case=case,
        actor=manager,
        player=player,
        prize="Cash paid twice",
        outcome=outcome,
        reason="paid by mistake",
        amount=amount,
        unit=unit,
    )
    if approver is None:
        return decided
    return prize_withdrawal_approve(withdrawal=decided, actor=approver, reason="checked")


@pytest.fixture
def desk(operator, tournament_manager, second_manager, snapshot_factory):
    """A settlement, a compensation and a prize withdrawal approved, in that order."""
    settlement = approved(
        operator, tournament_manager, snapshot_factory, tournament_id="T-1", stage="late"
    )
    paid = compensation(
        settlement.case, operator, second_manager, ("p000001", 500), ("p000002", 40, "fpp")
    )
    taken = withdrawal(settlement.case, tournament_manager, second_manager)
    return settlement, paid, taken


# --- Releases: what the cashier is handed --------------------------------------------------


def test_every_approved_record_is_released_in_approval_order(desk):
    settlement, paid, taken = desk
    got = lines()
    count = settlement.line_count
    assert [line.position for line in got] == list(range(1, count + 4))
    assert [line.key for line in got] == [
        *(f"{settlement.pk}-{n}" for n in range(1, count + 1)),
        f"C{paid.pk}-1",
        f"C{paid.pk}-2",
        f"W{taken.pk}-1",
    ]
    stored = list(settlement.lines.order_by("line_no"))
    assert [(ln.player, ln.kind, ln.unit, ln.amount, ln.source) for ln in got[:count]] == [
        (ln.player, ln.kind, ln.unit, ln.amount, ln.source) for ln in stored
    ]
    assert [(ln.player, ln.kind, ln.unit, ln.amount, ln.source) for ln in got[count:]] == [
        ("p000001", "compensation", "cash", 500, "house"),
        ("p000002", "compensation", "fpp", 40, "house"),
        ("p000003", "prize_withdrawal", "cash", -700, "house"),
    ]
    release = LedgerRelease.objects.get(prize_withdrawal=taken)
    assert (release.record, release.totals, release.case_id) == (
        "prize_withdrawal",
        {"cash": -700},
        settlement.case_id,
    )
    assert got[-1].currency == "USD" and got[-2].currency == ""


def test_nothing_unapproved_is_released(operator, tournament_manager, snapshot_factory):
    case = load(operator, snapshot_factory, stage="late")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    compensation_propose(
        case=case, actor=operator, reason="lag", entries=[CompensationEntry("p000001", 5)]
    )
    withdrawal(case, tournament_manager, outcome="leave", amount=None, unit="")
    # Taking a prize back is a debit: proposed, it waits for a second Tournament Manager.
    withdrawal(case, tournament_manager)
    assert lines() == [] and not LedgerRelease.objects.exists()


def test_a_reschedule_pays_nothing_and_releases_nothing(
    operator, marketing_manager, tournament_manager, snapshot_factory
):
    case = load(operator, snapshot_factory, type="freeroll", stage="middle")
    decision_record(
        case=case,
        actor=marketing_manager,
        option="reschedule",
        reason="players asked",
        reschedule_at=timezone.now() + timedelta(days=2),
    )
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    settlement_services.settlement_approve(settlement=settlement, actor=tournament_manager)
    assert not LedgerRelease.objects.exists()


def test_an_adjustments_reversals_are_debits(operator, tournament_manager, snapshot_factory):
    settlement = approved(operator, tournament_manager, snapshot_factory, stage="late")
    first = settlement.lines.order_by("line_no").first()
    adjustment = settlement_services.settlement_adjust(
        settlement=settlement,
        actor=operator,
        reason="chips miscounted",
        entries=[
            AdjustmentEntry(first.player, first.kind, first.unit, -100, first.source),
            AdjustmentEntry("p000002", "prize", "cash", 100, "pool"),
        ],
    )
    settlement_services.settlement_submit(settlement=adjustment, actor=operator)
    settlement_services.settlement_approve(settlement=adjustment, actor=tournament_manager)
    added = lines(LedgerRelease.objects.filter(settlement=adjustment))
    assert [(line.key, line.amount) for line in added] == [
        (f"{adjustment.pk}-1", -100),
        (f"{adjustment.pk}-2", 100),
    ]
    assert added[0].release.record == "adjustment"


def test_a_prize_withdrawn_must_say_what_to_take_back(
    operator, tournament_manager, snapshot_factory
):
    case = load(operator, snapshot_factory)
    with pytest.raises(DomainError, match="amount to take back"):
        withdrawal(case, tournament_manager, amount=None, unit="")
    with pytest.raises(DomainError, match="amount to take back"):
        withdrawal(case, tournament_manager, amount=0)


def test_the_history_migration_releases_what_was_approved_before(
    operator, tournament_manager, second_manager, snapshot_factory, monkeypatch
):
    # Records approved before the feed existed: the services then released nothing.
    for module in ("settlements", "compensation", "individual_cases"):
        monkeypatch.setattr(f"settlements.services.{module}.release_lines", lambda **kw: None)
    settlement = approved(operator, tournament_manager, snapshot_factory, stage="late")
    paid = compensation(settlement.case, operator, second_manager, ("p000001", 500))
    taken = withdrawal(settlement.case, tournament_manager, second_manager)
    withdrawal(settlement.case, tournament_manager, outcome="leave", amount=None, unit="")
    assert not LedgerRelease.objects.exists()

    migration = importlib.import_module(
        "settlements.migrations.0011_release_records_approved_before_the_feed"
    )
    migration.release_history(apps, None)

    got = lines()
    stored = list(settlement.lines.order_by("line_no"))
    assert [line.key for line in got] == [
        *(f"{settlement.pk}-{line.line_no}" for line in stored),
        f"C{paid.pk}-1",
        f"W{taken.pk}-1",
    ]
    assert [line.position for line in got] == list(range(1, len(got) + 1))
    assert [line.amount for line in got] == [line.amount for line in stored] + [500, -700]
    assert PaymentTally.objects.count() == 3


def test_a_release_is_never_changed_and_its_places_never_shared(desk, operator):
    settlement, _, _ = desk
    release = LedgerRelease.objects.get(settlement=settlement)
    unpaid = compensation_propose(
        case=settlement.case, actor=operator, reason="r", entries=[CompensationEntry("p000001", 5)]
    )
    copy = {
        field.attname: getattr(release, field.attname)
        for field in LedgerRelease._meta.concrete_fields
        if not field.primary_key
    }
    # A record without a release of its own, given the settlement's places.
    copy.update(record="compensation", settlement_id=None, compensation_id=unpaid.pk)
    with pytest.raises(IntegrityError, match="first_position|last_position"), transaction.atomic():
        LedgerRelease.objects.create(**copy)
    if connection.vendor == "postgresql":
        with pytest.raises(DatabaseError, match="Cannot update or delete"), transaction.atomic():
            LedgerRelease.objects.filter(pk=release.pk).update(line_count=release.line_count + 1)


# --- Confirmations -------------------------------------------------------------------------


def test_a_batch_is_answered_line_by_line(desk, cashier):
    settlement, _, taken = desk
    got = lines()
    batch = [
        confirmation(got[0]),
        confirmation(got[1], status="failed", reference="declined: account closed"),
        ConfirmationEntry("999999-1", "paid", "tx-9", timezone.now(), 5),
        confirmation(got[2], amount=got[2].amount + 1),
        confirmation(got[-1], reference="collected-1"),
    ]
    answers = payments.payment_confirm(actor=cashier, confirmations=batch)
    assert outcomes(answers) == ["recorded", "recorded", "refused", "refused", "recorded"]
    assert "No approved line" in answers[2].message
    assert "amount differs" in answers[3].message
    stored = PaymentConfirmation.objects.order_by("id")
    assert [(c.idempotency_key, c.status, c.amount) for c in stored] == [
        (got[0].key, "paid", got[0].amount),
        (got[1].key, "failed", got[1].amount),
        (f"W{taken.pk}-1", "paid", -700),
    ]
    event = Event.objects.get(type="payments_confirmed")
    assert event.actor == cashier
    assert (event.data["recorded"], event.data["refused"], event.data["paid"]) == (3, 2, 2)
    assert {c.event_id for c in stored} == {event.pk}
    assert event.case_id == settlement.case_id


def test_repeating_a_batch_writes_nothing(desk, cashier):
    got = lines()
    batch = [confirmation(got[0]), confirmation(got[1], status="failed", reference="no")]
    payments.payment_confirm(actor=cashier, confirmations=batch)
    counts = row_counts(), PaymentConfirmation.objects.count(), Event.objects.count()
    again = payments.payment_confirm(actor=cashier, confirmations=batch)
    assert outcomes(again) == ["already_recorded", "already_recorded"]
    assert (row_counts(), PaymentConfirmation.objects.count(), Event.objects.count()) == counts


def test_a_line_is_paid_once_only(desk, cashier):
    line = lines()[0]
    payments.payment_confirm(actor=cashier, confirmations=[confirmation(line, reference="A")])
    answers = payments.payment_confirm(
        actor=cashier,
        confirmations=[
            confirmation(line, reference="B"),
            confirmation(line, status="failed", reference="C"),
        ],
    )
    assert outcomes(answers) == ["refused", "refused"]
    assert "already paid, with reference A" in answers[0].message
    assert PaymentConfirmation.objects.count() == 1
    # And the database refuses a second payment whatever the code does.
    first = PaymentConfirmation.objects.get()
    first.pk, first.external_reference = None, "B"
    with pytest.raises(IntegrityError), transaction.atomic():
        first.save()


def test_the_same_line_twice_in_one_batch(desk, cashier):
    line = lines()[0]
    answers = payments.payment_confirm(
        actor=cashier,
        confirmations=[confirmation(line, reference="A"), confirmation(line, reference="A")],
    )
    assert outcomes(answers) == ["recorded", "already_recorded"]
    answers = payments.payment_confirm(
        actor=cashier,
        confirmations=[
            confirmation(lines()[1], reference="A"),
            confirmation(lines()[1], reference="B"),
        ],
    )
    assert outcomes(answers) == ["recorded", "refused"]


def test_a_failed_line_may_be_paid_later(desk, cashier):
    line = lines()[0]
    payments.payment_confirm(
        actor=cashier, confirmations=[confirmation(line, status="failed", reference="busy")]
    )
    answers = payments.payment_confirm(
        actor=cashier, confirmations=[confirmation(line, reference="tx-7")]
    )
    assert outcomes(answers) == ["recorded"]
    tally = PaymentTally.objects.get(release=line.release.id)
    assert (tally.paid_lines, tally.failed_lines, tally.paid, tally.failed) == (
        1,
        0,
        {line.unit: line.amount},
        {},
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"status": "lost"}, "paid or failed"),
        ({"external_reference": ""}, "external reference"),
        ({"external_reference": "x" * 201}, "external reference"),
        ({"at": timezone.now() + timedelta(hours=1)}, "future"),
    ],
)
def test_malformed_confirmations_are_refused(desk, cashier, changes, message):
    answers = payments.payment_confirm(
        actor=cashier, confirmations=[confirmation(lines()[0], **changes)]
    )
    assert outcomes(answers) == ["refused"] and message in answers[0].message
    assert not PaymentConfirmation.objects.exists()
    assert not Event.objects.filter(type="payments_confirmed").exists()


@pytest.mark.parametrize("who", ["operator", "tournament_manager", "auditor"])
def test_only_the_cashier_confirms(desk, users, who):
    with pytest.raises(NotAllowed):
        payments.payment_confirm(actor=users[who], confirmations=[confirmation(lines()[0])])


# --- Tallies and re-issues ---------------------------------------------------------------------


def test_tallies_follow_every_answer(desk, cashier, operator, second_manager):
    got = lines()
    generator = random.Random(7)
    for line in got:
        draw = generator.random()
        if draw < 0.5:
            batch = [confirmation(line, reference=f"tx-{line.key}")]
        elif draw < 0.8:
            batch = [confirmation(line, status="failed", reference=f"no-{line.key}")]
        else:
            continue
        payments.payment_confirm(actor=cashier, confirmations=batch)
    failed = [p for p in payment_reconciliation.with_payments(got) if p.state == "failed"]
    assert failed
    reissue = reissues.reissue_propose(
        actor=operator, idempotency_key=failed[0].line.key, reason="account fixed"
    )
    reissues.reissue_approve(reissue=reissue, actor=second_manager)

    releases = LedgerRelease.objects.all()
    assert payment_reconciliation.tallies_agree(releases) == []
    summary = payment_reconciliation.reconciliation(releases)
    states = [p.state for p in payment_reconciliation.with_payments(lines())]
    assert summary.lines == len(states)
    assert (summary.paid_lines, summary.failed_lines, summary.reissued_lines) == (
        states.count("paid"),
        states.count("failed"),
        states.count("reissued"),
    )
    assert summary.unconfirmed_lines == states.count("unconfirmed")
    for row in summary.rows():
        assert row["approved"] == row["paid"] + row["failed"] + row["reissued"] + row["unconfirmed"]


def test_a_failed_line_is_reissued_with_four_eyes(
    desk, cashier, operator, tournament_manager, second_manager
):
    line = lines()[0]
    payments.payment_confirm(
        actor=cashier, confirmations=[confirmation(line, status="failed", reference="closed")]
    )
    reissue = reissues.reissue_propose(
        actor=tournament_manager, idempotency_key=line.key, reason="new account"
    )
    with pytest.raises(NotAllowed, match="another Tournament Manager"):
        reissues.reissue_approve(reissue=reissue, actor=tournament_manager)
    with pytest.raises(NotAllowed):
        reissues.reissue_approve(reissue=reissue, actor=operator)
    assert lines()[-1].key != f"R{reissue.pk}-1"  # nothing released before the approval

    reissue = reissues.reissue_approve(reissue=reissue, actor=second_manager, reason="checked")
    new = lines()[-1]
    assert new.key == f"R{reissue.pk}-1"
    assert (new.player, new.kind, new.unit, new.amount, new.source) == (
        line.player,
        line.kind,
        line.unit,
        line.amount,
        line.source,
    )
    assert new.release.reissue_of == line.key
    assert new.release.settlement_id == line.release.settlement_id
    assert reissue.history.first().history_user == second_manager
    assert Event.objects.filter(type="reissue_approved", subject_id=reissue.pk).exists()

    # The failed line is now replaced: a late "paid" for it is refused, the new one is paid.
    answers = payments.payment_confirm(
        actor=cashier, confirmations=[confirmation(line, reference="late"), confirmation(new)]
    )
    assert outcomes(answers) == ["refused", "recorded"]
    assert f"re-issued as R{reissue.pk}-1" in answers[0].message
    tally = PaymentTally.objects.get(release=line.release.id)
    assert (tally.failed_lines, tally.reissued_lines) == (0, 1)


def test_only_a_failed_line_is_reissued_and_only_once(desk, cashier, operator):
    got = lines()
    with pytest.raises(InvalidTransition, match="unconfirmed"):
        reissues.reissue_propose(actor=operator, idempotency_key=got[0].key, reason="r")
    payments.payment_confirm(actor=cashier, confirmations=[confirmation(got[0])])
    with pytest.raises(InvalidTransition, match="paid"):
        reissues.reissue_propose(actor=operator, idempotency_key=got[0].key, reason="r")
    payments.payment_confirm(
        actor=cashier, confirmations=[confirmation(got[1], status="failed", reference="x")]
    )
    with pytest.raises(DomainError, match="reason"):
        reissues.reissue_propose(actor=operator, idempotency_key=got[1].key, reason=" ")
    reissues.reissue_propose(actor=operator, idempotency_key=got[1].key, reason="r")
    with pytest.raises(InvalidTransition, match="already has a re-issue"):
        reissues.reissue_propose(actor=operator, idempotency_key=got[1].key, reason="r")
    with pytest.raises(DomainError, match="No approved line"):
        reissues.reissue_propose(actor=operator, idempotency_key="77-1", reason="r")


def test_a_line_paid_after_all_cannot_be_reissued(desk, cashier, operator, second_manager):
    line = lines()[0]
    payments.payment_confirm(
        actor=cashier, confirmations=[confirmation(line, status="failed", reference="busy")]
    )
    reissue = reissues.reissue_propose(actor=operator, idempotency_key=line.key, reason="r")
    payments.payment_confirm(actor=cashier, confirmations=[confirmation(line, reference="ok")])
    with pytest.raises(InvalidTransition, match="paid after all"):
        reissues.reissue_approve(reissue=reissue, actor=second_manager)
    rejected = reissues.reissue_reject(reissue=reissue, actor=second_manager, reason="paid")
    assert rejected.status == "rejected"
    assert payment_reconciliation.tallies_agree(LedgerRelease.objects.all()) == []
