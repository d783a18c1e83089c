"""Re-issues: a line the cashier says failed, paid again under a new key, with four eyes.

A proposal names the failed line; its approval releases the new line into the ledger feed
(``payments.release_lines``) and counts the failed one as re-issued in its release's tally,
under the lock on that tally row, which ``payments.payment_confirm`` also takes.
"""

from django.db import transaction
from django.utils import timezone

from settlements.access import permissions
from settlements.errors import DomainError
from settlements.models import Event, LedgerRelease, PaymentTally, Reissue, idempotency_key
from settlements.selectors.payments.lines import lines_of
from settlements.services.common import hold_parents, record_event, required_text, save_with_history
from settlements.services.payments import (
    Record,
    line_states,
    move_tally,
    no_line_message,
    release_lines,
)
from settlements.workflow import ReissueStatus, reissue_next_status


@transaction.atomic
def reissue_propose(*, actor, idempotency_key: str, reason: str) -> Reissue:
    """Propose paying a failed line again, as a new line with its own key."""
    line = lines_of([idempotency_key]).get(idempotency_key)
    if line is None:
        permissions.enforce(
            permissions.reissue_propose(
                user=actor, key=idempotency_key, state="failed", reissued_as=None
            )
        )
        raise DomainError(no_line_message(idempotency_key), field="idempotency_key")
    release_id, line_no = line.release.id, line.line_no
    # The incident and case the re-issue will point at, then the line's tally (the one order).
    hold_parents(incidents=[line.release.incident_id], cases=[line.release.case_id])
    PaymentTally.objects.select_for_update().get(release_id=release_id)
    state = line_states([line])[release_id, line_no]
    permissions.enforce(
        permissions.reissue_propose(
            user=actor,
            key=idempotency_key,
            state=state.state,
            reissued_as=state.reissue[1] if state.reissue is not None else None,
        )
    )
    reason = required_text(reason, "reason")
    release = LedgerRelease.objects.select_related("case__incident", "case__tournament").get(
        pk=release_id
    )
    reissue = Reissue(
        original_release=release,
        original_line_no=line_no,
        original_key=idempotency_key,
        case=release.case,
        incident=release.incident,
        player=line.player,
        kind=line.kind,
        unit=line.unit,
        amount=line.amount,
        source=line.source,
        currency=release.currency,
        status=ReissueStatus.PROPOSED,
        reason=reason,
        proposed_by=actor,
    )
    save_with_history(reissue, actor=actor, reason=reason)
    record_event(
        Event.Type.REISSUE_PROPOSED,
        actor=actor,
        case=release.case,
        subject=reissue,
        reason=reason,
        data={"line": idempotency_key, "amount": line.amount, "unit": line.unit},
    )
    return reissue


@transaction.atomic
def reissue_approve(*, reissue: Reissue, actor, reason: str = "") -> Reissue:
    """Approve a re-issue: its line joins the feed under its own key, and the failed line
    counts as re-issued. Never the proposer's own."""
    reissue, release = _lock_reissue(reissue)
    line = lines_of([reissue.original_key])[reissue.original_key]
    state = line_states([line])[release.pk, reissue.original_line_no]
    permissions.enforce(
        permissions.reissue_approve(
            reissue=reissue, user=actor, paid_reference=state.paid_reference
        )
    )
    permissions.enforce(permissions.step_up(user=actor, action="approve re-issues"))
    reissue.status = reissue_next_status(reissue.status, "approve", label=str(reissue))
    reissue.approved_by = actor
    _finish_review(reissue, actor, reason)
    release_lines(
        actor=actor,
        case=reissue.case,
        currency=reissue.currency,
        line_count=1,
        totals={reissue.unit: reissue.amount},
        reissue=reissue,
    )
    tally = PaymentTally.objects.get(release=release)
    move_tally(tally, line.unit, "failed", "reissued", 1, line.amount)
    tally.save(update_fields=[*PaymentTally.FIELDS, "updated_at"])
    record_event(
        Event.Type.REISSUE_APPROVED,
        actor=actor,
        case=reissue.case,
        subject=reissue,
        reason=reissue.review_reason,
        data={
            "line": reissue.original_key,
            "new_line": idempotency_key(Record.REISSUE, reissue.pk, 1),
        },
    )
    return reissue


@transaction.atomic
def reissue_reject(*, reissue: Reissue, actor, reason: str) -> Reissue:
    reissue, _release = _lock_reissue(reissue)
    permissions.enforce(permissions.reissue_reject(reissue=reissue, user=actor))
    reason = required_text(reason, "reason")
    reissue.status = reissue_next_status(reissue.status, "reject", label=str(reissue))
    reissue.rejected_by = actor
    _finish_review(reissue, actor, reason)
    record_event(
        Event.Type.REISSUE_REJECTED,
        actor=actor,
        case=reissue.case,
        subject=reissue,
        reason=reason,
        data={"line": reissue.original_key},
    )
    return reissue


def _lock_reissue(reissue: Reissue) -> tuple[Reissue, LedgerRelease]:
    """In the one order (services/__init__.py): the incident and the case shared, then the
    re-issue, then the tally of the line it replaces, which payment_confirm also locks."""
    release_id, case_id, incident_id = Reissue.objects.values_list(
        "original_release_id", "case_id", "incident_id"
    ).get(pk=reissue.pk)
    hold_parents(incidents=[incident_id], cases=[case_id])
    reissue = (
        Reissue.objects.select_for_update(of=("self",))
        .select_related("case__incident", "case__tournament", "original_release")
        .get(pk=reissue.pk)
    )
    PaymentTally.objects.select_for_update().get(release_id=release_id)
    return reissue, reissue.original_release


def _finish_review(reissue: Reissue, actor, reason: str) -> None:
    reissue.reviewed_at = timezone.now()
    reissue.review_reason = reason.strip()
    verb = "Approved" if reissue.status == ReissueStatus.APPROVED else "Rejected"
    save_with_history(reissue, actor=actor, reason=reissue.review_reason or verb)
