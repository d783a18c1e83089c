"""Every write of the workflow: one function per business event, one module per part of the
business (incidents, snapshots, decisions, settlements, compensation, individual cases,
payments, tokens).

Each service is atomic, takes keyword-only arguments, locks the rows it moves in the one lock
order below, asks ``settlements.access.permissions`` whether the actor may act on them now
(roles, the four-eyes rule, the state machine of ``settlements.workflow``) and raises its
refusal, records the history user and reason on every versioned row it saves, and writes one
``Event`` row in the same transaction; the structured log line follows once the transaction
commits.

The lock order. Every service takes the locks it needs in this order, skipping those it does
not need, so that no two ever wait on each other in opposite order:

1. a job's items (``jobs.job_claim``, SKIP LOCKED: it never waits), then the business rows
   (a batch of items takes those of all its items first, ``batches.lock_batch``);
2. the incident: shared (FOR KEY SHARE) by whatever points at it, for update to close it;
3. the tournament, when a load registers or updates it;
4. the case: for update (``common.lock_case``, ``lock_case_of``, ``lock_settlement``), or
   shared where only a link to it is written (``common.hold_parents``, which shares the
   incident first);
5. the case's records: its settlements, compensation, prize withdrawals and re-issues;
6. the ledger rows: the payment tallies of releases, in release order;
7. the ledger feed's order (``payments.hold_feed_order``, taken by ``payments.release_lines``)
   held to the commit;
8. last, the event chain's lock (``audit_log.hold_chain``, taken by ``record_event``), held to
   the commit, when the foreign keys written are checked against the rows of 2 to 4, already
   held.

Services return fresh objects: an instance passed in may be stale after the call.
Refusals raise ``DomainError`` subclasses (see ``settlements.errors``); an invalid snapshot
raises the engine's ``InvalidInput`` with every problem and its path.

The public names are re-exported here, so callers write ``services.settlement_prepare``
whichever module holds it.
"""

from settlements.services.access_review import access_review_complete
from settlements.services.bases import (
    BasisCheck,
    settlement_basis_check,
    settlement_basis_restore,
    settlements_awaiting_basis,
    settlements_without_basis,
)
from settlements.services.checkpoints import checkpoint_record
from settlements.services.common import MAX_AMOUNT
from settlements.services.compensation import (
    CompensationEntry,
    compensation_approve,
    compensation_propose,
    compensation_reject,
)
from settlements.services.decisions import check_invitees, check_reschedule_date, decision_record
from settlements.services.history_sweep import history_sweep
from settlements.services.icm import icm_batch_add, icm_valuation_begin
from settlements.services.incidents import incident_close, incident_report, tournament_create
from settlements.services.individual_cases import (
    NewTournament,
    check_prize_amount,
    individual_case_open,
    individual_case_resolve,
    prize_withdrawal_approve,
    prize_withdrawal_decide,
    prize_withdrawal_reject,
)
from settlements.services.jobs import (
    NewItem,
    Progress,
    audit_verification_start,
    case_being_prepared,
    job_begin,
    job_finish,
    job_hand_over,
    job_progress,
    job_queued,
    job_retry,
    job_start,
    job_stop,
    job_work,
)
from settlements.services.payments import (
    ConfirmationAnswer,
    ConfirmationEntry,
    payment_confirm,
)
from settlements.services.profiles import (
    profile_set_digest,
    profile_set_time_zone,
    time_zone_names,
)
from settlements.services.reissues import reissue_approve, reissue_propose, reissue_reject
from settlements.services.rulebooks import (
    rulebook_version_approve,
    rulebook_version_propose,
    rulebook_version_withdraw,
    simulation_start,
)
from settlements.services.sessions import session_end, user_sessions_end
from settlements.services.settlements import (
    LINE_SHAPES,
    SETTLEMENT_PAYOUT_FIELDS,
    AdjustmentEntry,
    settlement_adjust,
    settlement_approve,
    settlement_prepare,
    settlement_reject,
    settlement_submit,
)
from settlements.services.sign_on import user_roles_follow_provider
from settlements.services.snapshots import case_load_snapshot, case_withdraw
from settlements.services.tokens import (
    TOKEN_USE_RESOLUTION,
    api_token_authenticate,
    api_token_create,
    api_token_revoke,
    api_token_rotate,
)

__all__ = [
    "history_sweep",
    "access_review_complete",
    "simulation_start",
    "rulebook_version_approve",
    "rulebook_version_propose",
    "rulebook_version_withdraw",
    "NewItem",
    "Progress",
    "audit_verification_start",
    "checkpoint_record",
    "case_being_prepared",
    "job_begin",
    "job_finish",
    "job_progress",
    "job_queued",
    "job_hand_over",
    "job_retry",
    "job_start",
    "job_stop",
    "job_work",
    "MAX_AMOUNT",
    "incident_report",
    "icm_batch_add",
    "icm_valuation_begin",
    "incident_close",
    "tournament_create",
    "case_load_snapshot",
    "case_withdraw",
    "check_reschedule_date",
    "check_invitees",
    "decision_record",
    "LINE_SHAPES",
    "AdjustmentEntry",
    "settlement_prepare",
    "settlement_submit",
    "settlement_approve",
    "settlement_reject",
    "settlement_adjust",
    "SETTLEMENT_PAYOUT_FIELDS",
    "BasisCheck",
    "settlement_basis_check",
    "settlement_basis_restore",
    "settlements_awaiting_basis",
    "settlements_without_basis",
    "CompensationEntry",
    "compensation_propose",
    "compensation_approve",
    "compensation_reject",
    "NewTournament",
    "individual_case_open",
    "individual_case_resolve",
    "prize_withdrawal_approve",
    "prize_withdrawal_decide",
    "prize_withdrawal_reject",
    "check_prize_amount",
    "ConfirmationEntry",
    "ConfirmationAnswer",
    "payment_confirm",
    "reissue_propose",
    "reissue_approve",
    "reissue_reject",
    "profile_set_digest",
    "profile_set_time_zone",
    "session_end",
    "user_sessions_end",
    "user_roles_follow_provider",
    "time_zone_names",
    "TOKEN_USE_RESOLUTION",
    "api_token_create",
    "api_token_revoke",
    "api_token_rotate",
    "api_token_authenticate",
]
