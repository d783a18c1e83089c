"""Payments: approved lines handed to the cashier, its confirmations, re-issues of failed lines.

``release_lines`` runs inside every service that approves money (a settlement or adjustment,
compensation, a prize withdrawal, a re-issue): it gives the record's lines their places in
the ledger feed. ``payment_confirm`` records what the cashier says about a batch of lines;
``reissue_*`` (``reissues``) pay a failed line again under a new key, with four eyes.

Each line is in one state, kept as a running tally per release (``PaymentTally``), changed
only here and in ``reissues``, under a lock on that tally row::

    unconfirmed --paid--> paid (final)
    unconfirmed --failed--> failed --paid--> paid      (the cashier retried on its own)
    failed --re-issue approved--> reissued (final: the new line is paid instead)

By layer: ``models.payments``, writes here, reads in ``selectors.payments``, pages in
``views.payments``, the cashier's feed in the API's ledger, downloads in ``ledger``.
"""

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NamedTuple

from django.db import connection, transaction
from django.utils import timezone

from settlements import player_ids, seals
from settlements.access import permissions
from settlements.models import (
    Case,
    Compensation,
    Event,
    Incident,
    LedgerRelease,
    PaymentConfirmation,
    PaymentTally,
    PrizeWithdrawal,
    Reissue,
    Settlement,
    idempotency_key,
)
from settlements.selectors.payments import lines as payment_lines
from settlements.selectors.payments.lines import LedgerLine
from settlements.services import staging
from settlements.services.common import (
    hold_parents,
    insert_rows,
    record_event,
)
from settlements.workflow import ReissueStatus

log = logging.getLogger("crashdesk.payments")

Record = LedgerRelease.Record
PAID = PaymentConfirmation.Status.PAID
FAILED = PaymentConfirmation.Status.FAILED
# A cashier's clock may run a little ahead of ours; a time further ahead is a mistake.
CLOCK_SKEW = timedelta(minutes=5)
MAX_REFERENCE_LENGTH = 200
# How much of an unknown key a refusal quotes.
KEY_SHOWN_LENGTH = 60


# --- Releasing approved lines --------------------------------------------------------------


def release_lines(
    *,
    actor,
    case,
    currency: str,
    line_count: int,
    totals: dict[str, int],
    settlement: Settlement | None = None,
    compensation: Compensation | None = None,
    prize_withdrawal: PrizeWithdrawal | None = None,
    reissue: Reissue | None = None,
) -> LedgerRelease | None:
    """Give an approved record's lines their places in the feed; inside the approving
    service's transaction. A record without lines (a reschedule) is not released."""
    if line_count == 0:
        return None
    if settlement is not None:
        record = Record.ADJUSTMENT if settlement.is_adjustment else Record.SETTLEMENT
    elif compensation is not None:
        record = Record.COMPENSATION
    elif prize_withdrawal is not None:
        record = Record.PRIZE_WITHDRAWAL
    else:
        record = Record.REISSUE
    # The caller holds the case (and so its incident) already, as every approving service
    # locks it first.
    release = LedgerRelease(
        record=record,
        line_count=line_count,
        settlement=settlement,
        compensation=compensation,
        prize_withdrawal=prize_withdrawal,
        reissue=reissue,
        case=case,
        incident_id=case.incident_id,
        currency=currency,
        totals={unit: amount for unit, amount in totals.items() if amount},
        released_by=actor,
        released_at=timezone.now(),
    )
    stage = staging.current()
    if stage is not None and settlement is not None and staging.held(Settlement, settlement.pk):
        stage.releases.append(release)  # given its places with the batch's others, at its end
    else:
        write_releases([release])
    return release


FEED_LOCK = 7_310_003  # unique among the site's advisory locks (audit_log has the other)


def hold_feed_order() -> None:
    """Held to the commit, so that a reader past place 101 never misses a 100 committed later."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [FEED_LOCK])


def write_releases(releases: Sequence[LedgerRelease]) -> None:
    """Give the releases their places in the feed, one after another, and write them with
    their tallies."""
    hold_feed_order()
    first = payment_lines.last_position() + 1
    for release in releases:
        release.first_position, release.last_position = first, first + release.line_count - 1
        first = release.last_position + 1
    LedgerRelease.objects.bulk_create(releases)
    PaymentTally.objects.bulk_create(PaymentTally(release=release) for release in releases)


def unit_totals(by_unit_and_source: dict[str, dict[str, int]]) -> dict[str, int]:
    """A settlement's {unit: {source: amount}} totals as {unit: amount}."""
    return {unit: sum(sources.values()) for unit, sources in by_unit_and_source.items()}


# --- Confirmations ---------------------------------------------------------------------------


# One of each per confirmation, a thousand per batch: tuples, cheaper to make than dataclasses.
class ConfirmationEntry(NamedTuple):
    """What the cashier says about one line (checked for shape by the caller)."""

    idempotency_key: str
    status: str
    external_reference: str
    at: datetime
    amount: int


class ConfirmationAnswer(NamedTuple):
    """The answer for one confirmation: recorded, already recorded (a repeat: nothing
    written), or refused with the reason."""

    idempotency_key: str
    outcome: str
    message: str = ""
    # The confirmation's field a refusal is about.
    field: str = ""

    RECORDED = "recorded"
    ALREADY_RECORDED = "already_recorded"
    REFUSED = "refused"


@dataclass(slots=True)
class LineState:
    line: LedgerLine
    paid_reference: str | None = None
    # A tuple until the line fails: most lines of a batch never have.
    failed_references: tuple[str, ...] | set[str] = ()
    reissue: tuple[str, str] | None = None  # (status, key) of a live re-issue

    @property
    def state(self) -> str:
        if self.paid_reference is not None:
            return "paid"
        if self.reissue is not None and self.reissue[0] == ReissueStatus.APPROVED:
            return "reissued"
        return "failed" if self.failed_references else "unconfirmed"


@transaction.atomic
def payment_confirm(
    *, actor, confirmations: Sequence[ConfirmationEntry]
) -> list[ConfirmationAnswer]:
    """Record what the cashier says about a batch of lines, each answered on its own: a
    refused line never stops the others. A repeat of something already recorded is answered
    the same and writes nothing; so is a batch sent twice."""
    permissions.enforce(permissions.payment_confirm(user=actor))
    lines = payment_lines.lines_of({item.idempotency_key for item in confirmations})
    # The lines' incidents and cases before their tallies, as every service locks
    # (services/__init__.py): the batch's event may point at them.
    hold_parents(
        incidents=[line.release.incident_id for line in lines.values()],
        cases=[line.release.case_id for line in lines.values()],
    )
    # Then the tallies: two batches about the same lines answer one after the other, and the
    # second sees what the first wrote.
    tallies = {
        tally.release_id: tally
        for tally in PaymentTally.objects.select_for_update()
        .filter(release_id__in={line.release.id for line in lines.values()})
        .order_by("release_id")
    }
    now = timezone.now()
    batch = _judge_batch(confirmations, lines, line_states(lines.values()), latest=now + CLOCK_SKEW)
    if batch.rows:
        _record_batch(batch, actor=actor, tallies=tallies, now=now)
    refused = [answer for answer in batch.answers if answer.outcome == ConfirmationAnswer.REFUSED]
    if refused:
        log.warning(
            "cashier confirmations refused",
            extra={
                "actor": actor.get_username(),
                "refused": len(refused),
                "first": [(a.idempotency_key, a.message) for a in refused[:5]],
            },
        )
    return batch.answers


@dataclass
class _JudgedBatch:
    """A batch of confirmations answered: the answers in the batch's order, the confirmations
    to record with their lines, and how they move the tallies: {(release id, unit, state
    before, state after): [lines, amount]}."""

    answers: list[ConfirmationAnswer] = field(default_factory=list)
    rows: list[tuple[LineState, ConfirmationEntry]] = field(default_factory=list)
    moves: defaultdict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))


def _judge_batch(
    confirmations: Sequence[ConfirmationEntry],
    lines: dict[str, LedgerLine],
    states: dict[tuple[int, int], LineState],
    *,
    latest: datetime,
) -> _JudgedBatch:
    batch = _JudgedBatch()
    for item in confirmations:
        line = lines.get(item.idempotency_key)
        if line is None:
            batch.answers.append(
                _refused(item, "idempotency_key", no_line_message(item.idempotency_key))
            )
            continue
        state = states[line.release.id, line.line_no]
        answer, changed = _judge(item, state, latest)
        batch.answers.append(answer)
        if changed is not None:
            batch.rows.append((state, item))
            if changed[0] != changed[1]:
                move = batch.moves[line.release.id, line.unit, *changed]
                move[0] += 1
                move[1] += line.amount
    return batch


def _record_batch(
    batch: _JudgedBatch, *, actor, tallies: dict[int, PaymentTally], now: datetime
) -> None:
    """The batch's event, its confirmations (linked to the event) and the tallies moved."""
    # Its case or incident is share-locked already (payment_confirm).
    subject = _common_subject([state.line for state, _ in batch.rows])
    recorder = actor.pk
    rows = [
        (
            state.line.release.id,
            state.line.line_no,
            item.idempotency_key,
            state.line.player,
            state.line.unit,
            item.amount,
            item.status,
            item.external_reference,
            item.at,
            now,
            recorder,
        )
        for state, item in batch.rows
    ]
    # The event seals the rows in the order they are written, which their ids keep.
    sealed = seals.rows_digest(seals.CONFIRMATIONS)
    for row in rows:
        sealed.add(row)
    event = record_event(
        Event.Type.PAYMENTS_CONFIRMED,
        actor=actor,
        **subject,
        facts={"confirmations": sealed.hexdigest(), "confirmation_count": sealed.count},
        data=_batch_summary(batch.answers, [item for _, item in batch.rows]),
    )
    insert_rows(
        PaymentConfirmation,
        (*seals.CONFIRMATION_FIELDS, "event"),
        ((*row, event.pk) for row in rows),
    )
    changed = set()
    for (release_id, unit, before, after), (count, amount) in batch.moves.items():
        move_tally(tallies[release_id], unit, before, after, count, amount)
        changed.add(release_id)
    for release_id in sorted(changed):
        tallies[release_id].save(update_fields=[*PaymentTally.FIELDS, "updated_at"])


def _judge(item: ConfirmationEntry, line: LineState, latest: datetime):
    """The answer for one confirmation and, when it is recorded, the line's state before
    and after; ``line`` is updated, so a later item of the same batch sees this one.
    ``latest``: the latest time a cashier may give (our clock and the skew allowed)."""
    key = item.idempotency_key
    if item.status not in (PAID, FAILED):
        return _refused(item, "status", "The status must be paid or failed."), None
    if item.amount != line.line.amount:
        return _refused(
            item,
            "amount",
            f"The amount differs from the line's: {item.amount} given, "
            f"{line.line.amount} approved ({line.line.unit}).",
        ), None
    reference = item.external_reference
    if not reference or len(reference) > MAX_REFERENCE_LENGTH:
        return _refused(
            item,
            "external_reference",
            f"Give the external reference (1 to {MAX_REFERENCE_LENGTH} characters).",
        ), None
    # Shown on the payments pages and in the audit CSV, and matched on a repeat: a control or
    # invisible character (a NUL was a database error) would make two references look alike.
    if problem := player_ids.id_problem(reference):
        return _refused(item, "external_reference", f"The external reference {problem}."), None
    if item.at > latest:
        return _refused(item, "at", "The time is in the future."), None
    if item.status == PAID and line.paid_reference == reference:
        return ConfirmationAnswer(key, ConfirmationAnswer.ALREADY_RECORDED), None
    if item.status == FAILED and reference in line.failed_references:
        return ConfirmationAnswer(key, ConfirmationAnswer.ALREADY_RECORDED), None
    if line.paid_reference is not None:
        return _refused(
            item, "status", f"This line was already paid, with reference {line.paid_reference}."
        ), None
    if line.state == "reissued":
        return _refused(
            item,
            "idempotency_key",
            f"This line failed and was re-issued as {line.reissue[1]}; confirm that one.",
        ), None
    before = line.state
    if item.status == PAID:
        line.paid_reference = reference
    else:
        line.failed_references = {*line.failed_references, reference}
    after = line.state
    return ConfirmationAnswer(key, ConfirmationAnswer.RECORDED), (before, after)


def no_line_message(key: str) -> str:
    """The refusal of a key no approved line has, naming the key as sent: escaped, so a
    control character shows, and cut short, so a batch of huge keys stays readable."""
    shown = player_ids.escaped(key) or key
    if len(shown) > KEY_SHOWN_LENGTH:
        shown = f"{shown[:KEY_SHOWN_LENGTH]}… ({len(key):,} characters)"
    return (
        f'No approved line has the key "{shown}": a key is taken only exactly as the feed wrote it.'
    )


def _refused(item: ConfirmationEntry, field: str, message: str) -> ConfirmationAnswer:
    return ConfirmationAnswer(item.idempotency_key, ConfirmationAnswer.REFUSED, message, field)


def line_states(lines: Iterable[LedgerLine]) -> dict[tuple[int, int], LineState]:
    """What the cashier said about each line and its live re-issue, by (release id, line
    number): one query per release, and one more per release with failed lines among them."""
    states = {(line.release.id, line.line_no): LineState(line) for line in lines}
    by_release: dict[int, list[int]] = defaultdict(list)
    for release_id, line_no in states:
        by_release[release_id].append(line_no)
    failed: dict[int, list[int]] = defaultdict(list)
    for release_id, line_nos in by_release.items():
        said = PaymentConfirmation.objects.filter(
            release_id=release_id, **payment_lines.line_numbers("line_no", line_nos)
        ).values_list("line_no", "status", "external_reference")
        for line_no, status, reference in said:
            state = states.get((release_id, line_no))
            if state is None:
                continue
            if status == PAID:
                state.paid_reference = reference
            else:
                state.failed_references = {*state.failed_references, reference}
                failed[release_id].append(line_no)
    # Only a failed line is ever re-issued (permissions.reissue_propose), and confirmations
    # are never removed: lines that never failed need no look-up, nor does a batch of new ones.
    for release_id, line_nos in failed.items():
        live = Reissue.objects.filter(
            original_release_id=release_id,
            status__in=[ReissueStatus.PROPOSED, ReissueStatus.APPROVED],
            **payment_lines.line_numbers("original_line_no", line_nos),
        ).values_list("original_line_no", "status", "pk")
        for line_no, status, pk in live:
            if (release_id, line_no) in states:
                states[release_id, line_no].reissue = (
                    status,
                    idempotency_key(Record.REISSUE, pk, 1),
                )
    return states


def move_tally(
    tally: PaymentTally, unit: str, before: str, after: str, count: int, amount: int
) -> None:
    """Move ``count`` lines of ``unit`` worth ``amount`` together from one state to another."""
    for state, sign in ((before, -1), (after, 1)):
        if state == "unconfirmed":
            continue
        setattr(tally, f"{state}_lines", getattr(tally, f"{state}_lines") + sign * count)
        amounts = getattr(tally, state)
        amounts[unit] = amounts.get(unit, 0) + sign * amount
        if amounts[unit] == 0:
            del amounts[unit]


def _common_subject(lines: list[LedgerLine]) -> dict:
    """The event's case (or incident) when every line of the batch belongs to it."""
    cases = {line.release.case_id for line in lines}
    incidents = {line.release.incident_id for line in lines}
    if len(cases) == 1:
        # The event and its log line need the case's links, not its big JSON fields.
        case = (
            Case.objects.select_related("incident", "tournament")
            .only("incident", "tournament__operator_id", "incident__title")
            .get(pk=cases.pop())
        )
        return {"case": case}
    if len(incidents) == 1 and None not in incidents:
        return {"incident": Incident.objects.get(pk=incidents.pop())}
    return {}


def _batch_summary(answers: list[ConfirmationAnswer], recorded: list[ConfirmationEntry]) -> dict:
    counts = defaultdict(int)
    for answer in answers:
        counts[answer.outcome] += 1
    return {
        "items": len(answers),
        "recorded": counts[ConfirmationAnswer.RECORDED],
        "already_recorded": counts[ConfirmationAnswer.ALREADY_RECORDED],
        "refused": counts[ConfirmationAnswer.REFUSED],
        "paid": sum(1 for item in recorded if item.status == PAID),
        "failed": sum(1 for item in recorded if item.status == FAILED),
        "first_key": recorded[0].idempotency_key,
        "last_key": recorded[-1].idempotency_key,
    }
