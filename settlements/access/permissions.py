"""May this user do this, now? One pure function per action, and the only place that answers.

Each function returns None when the user may act, or a ``Refusal``: the sentence the pages show
(a refusal is a ``str``), and which rule refused. Services ``enforce`` it on the rows they have
locked, so a refusal and the error it raises (``NotAllowed`` for who the user is,
``InvalidTransition`` for the state of the record) come from here; views compute their buttons
and their messages from the same call.

Nothing here reads the database: whatever a rule needs beyond the records passed in (the
compensation still waiting on a case, whether a crash case has a settlement) is an argument.
"""

import time
from collections.abc import Sequence

from django.conf import settings

from settlements import desk_roles
from settlements.access import roles
from settlements.errors import DomainError, InvalidTransition, NotAllowed, SecondFactorStale
from settlements.models import (
    ApiToken,
    Case,
    Compensation,
    Incident,
    PrizeWithdrawal,
    Reissue,
    RulebookVersion,
    Settlement,
)
from settlements.workflow import (
    CaseStatus,
    SettlementStatus,
    case_refusal,
    compensation_refusal,
    prize_withdrawal_refusal,
    reissue_refusal,
    rulebook_version_refusal,
    settlement_refusal,
)

# Which rule refused: the user's roles, the four-eyes rule, the state of the record, or a
# second factor proved too long ago for what moves money.
ROLE = "role"
OWN_WORK = "own_work"
STATE = "state"
STEP_UP = "step_up"

# Who may do what: the sets live in desk_roles, the one place they are written; named here too
# because the views' role_required decorators name them through this module.
COMPENSATION_PROPOSERS = desk_roles.COMPENSATION_PROPOSERS
LEDGER_READERS = desk_roles.LEDGER_READERS
CASE_WITHDRAWERS = desk_roles.CASE_WITHDRAWERS
CASHIERS = desk_roles.CASHIERS
PAYMENT_READERS = desk_roles.PAYMENT_READERS
REISSUE_PROPOSERS = desk_roles.REISSUE_PROPOSERS
AMOUNT_READERS = desk_roles.AMOUNT_READERS
ICM_READERS = desk_roles.ICM_READERS
RULEBOOK_READERS = desk_roles.RULEBOOK_READERS
RULEBOOK_WRITERS = desk_roles.RULEBOOK_WRITERS
ACCESS_REVIEWERS = desk_roles.ACCESS_REVIEWERS
CASE_HISTORY_READERS = desk_roles.CASE_HISTORY_READERS
HISTORY_READERS = desk_roles.HISTORY_READERS
INCIDENT_REPORTERS = desk_roles.INCIDENT_REPORTERS
SNAPSHOT_LOADERS = desk_roles.SNAPSHOT_LOADERS
SETTLEMENT_PREPARERS = desk_roles.SETTLEMENT_PREPARERS
SETTLEMENT_SUBMITTERS = desk_roles.SETTLEMENT_SUBMITTERS
TOURNAMENT_REGISTRARS = desk_roles.TOURNAMENT_REGISTRARS
INCIDENT_CLOSERS = desk_roles.INCIDENT_CLOSERS
ADJUSTERS = desk_roles.ADJUSTERS
DECISION_MAKERS = desk_roles.DECISION_MAKERS
APPROVERS = desk_roles.APPROVERS
PRIZE_WITHDRAWAL_DECIDERS = desk_roles.PRIZE_WITHDRAWAL_DECIDERS
INDIVIDUAL_CASE_HANDLERS = desk_roles.INDIVIDUAL_CASE_HANDLERS


class Refusal(str):
    """Why the user may not act now, worded for them; ``kind`` is ROLE, OWN_WORK, STATE or
    STEP_UP."""

    kind: str

    def __new__(cls, text: str, kind: str) -> "Refusal":
        refusal = super().__new__(cls, text)
        refusal.kind = kind
        return refusal

    @property
    def error(self) -> DomainError:
        """The error a service raises for it."""
        if self.kind == STEP_UP:
            return SecondFactorStale(str(self))
        return (InvalidTransition if self.kind == STATE else NotAllowed)(str(self))


def enforce(refusal: Refusal | None) -> None:
    """Raise ``refusal`` as its error; do nothing when there is none."""
    if refusal is not None:
        raise refusal.error


# --- Step-up: a fresh second factor before what moves money ------------------------------------

# What the request's user carries when it is a person at a browser: the Unix time they last
# proved their second factor, or None (``access.second_factor.SecondFactorMiddleware``).
PROVED_AT = "second_factor_at"


def step_up(*, user, action: str) -> Refusal | None:
    """A fresh proof of the second factor (within ``STEP_UP_MAX_AGE`` seconds) before ``action``.

    The services that move money enforce it after their own answer: approving a settlement
    (one or in bulk), compensation, a prize withdrawal, resolving an individual case with a
    payment, issuing an API token; any new such action calls it too (rulebook versions).

    Only people signed in at a browser carry ``PROVED_AT``; an API token's user carries None,
    so a token never makes such a change. Work that no request makes (a management command,
    a background job started by a request that passed this check) carries nothing and is let
    through: the check was made where a person asked for it.
    """
    if user is None or not hasattr(user, PROVED_AT):
        return None
    proved = getattr(user, PROVED_AT)
    if proved is not None and time.time() - proved <= settings.STEP_UP_MAX_AGE:
        return None
    minutes = max(1, settings.STEP_UP_MAX_AGE // 60)
    return Refusal(
        f"To {action}, confirm your second factor again: the last time was more than "
        f"{minutes} minute{'' if minutes == 1 else 's'} ago.",
        STEP_UP,
    )


# --- Incidents, tournaments, snapshots ----------------------------------------------------------


def incident_report(*, user) -> Refusal | None:
    return _role(user, *INCIDENT_REPORTERS, action="report incidents")


def incident_close(*, incident: Incident, user, unfinished: Sequence[int]) -> Refusal | None:
    """``unfinished``: ids of the incident's cases still in progress."""
    refusal = _role(user, *INCIDENT_CLOSERS, action="close incidents")
    if refusal is None and not incident.is_open:
        refusal = _state(f"{incident} is already closed.")
    if refusal is None and unfinished:
        listed = ", ".join(f"#{pk}" for pk in unfinished)
        refusal = _state(
            f"{incident} still has cases in progress ({listed}); finish them before closing it."
        )
    return refusal


def tournament_create(*, user) -> Refusal | None:
    return _role(user, *TOURNAMENT_REGISTRARS, action="register tournaments")


def case_load_snapshot(*, user, incident: Incident | None = None) -> Refusal | None:
    refusal = _role(user, *SNAPSHOT_LOADERS, action="load snapshots")
    if refusal is None and incident is not None and not incident.is_open:
        refusal = _state(f"{incident} is closed; report a new incident instead.")
    return refusal


def case_withdraw(*, case: Case, user, approved_compensations: Sequence[int]) -> Refusal | None:
    """``approved_compensations``: ids of the case's approved compensation. Proposals still
    waiting do not hold a withdrawal back: they are withdrawn with the case."""
    refusal = _role(user, *CASE_WITHDRAWERS, action="withdraw cases")
    if refusal is None and not case.is_crash:
        refusal = _state(f"{case} is an individual case; it ends when it is resolved.")
    if refusal is None and case.status == CaseStatus.APPROVED:
        refusal = _state(
            f"{case} has an approved settlement, so it stays; correct that settlement with an "
            "adjustment instead."
        )
    refusal = refusal or _case_state(case, "withdraw")
    if refusal is None and approved_compensations:
        listed = ", ".join(f"#{pk}" for pk in approved_compensations)
        refusal = _state(
            f"Compensation {listed} of {case} has been approved and is to be paid, so the case "
            "stays; a case loaded in error cannot have paid anyone."
        )
    return refusal


def ledger_read(*, user) -> Refusal | None:
    """Reading players' ledger lines: on the pages, in the downloads, in the statements and in
    the API's case documents alike, so that a token shows its user what the pages show them.
    The views and the API let through ``LEDGER_READERS``, the roles this allows."""
    return _role(user, *LEDGER_READERS, action="read the ledger of what is paid")


def icm_read(*, user) -> Refusal | None:
    """The second opinion: each remaining player's ICM value beside the policy's amount."""
    return _role(user, *ICM_READERS, action="compare the policy's amounts with ICM values")


# --- Decisions and settlements ------------------------------------------------------------------


def decision_record(*, case: Case, user) -> Refusal | None:
    refusal = _role(user, *DECISION_MAKERS, action="record decisions")
    if refusal is None and (not case.is_crash or not case.decision_options):
        refusal = _state(f"{case} needs no decision: the rules settle it without one.")
    return refusal or _case_state(case, "decide")


def settlement_prepare(*, case: Case, user) -> Refusal | None:
    refusal = _role(user, *SETTLEMENT_PREPARERS, action="prepare settlements")
    if refusal is None and not case.is_crash:
        refusal = _state(f"{case} is an individual case; it has no crash settlement.")
    return refusal or _case_state(case, "prepare")


def settlement_submit(*, settlement: Settlement, user) -> Refusal | None:
    """An adjustment may also be sent by a Tournament Manager; a settlement only by an
    operator."""
    action = "submit settlements"
    refusal = _role(user, *ADJUSTERS, action=action)
    if refusal is None and not settlement.is_adjustment:
        refusal = _role(user, *SETTLEMENT_SUBMITTERS, action=action)
    return refusal or _settlement_state(settlement, "submit")


def settlement_approve(*, settlement: Settlement, user) -> Refusal | None:
    return _settlement_answer(settlement, user, "approve")


def settlement_reject(*, settlement: Settlement, user) -> Refusal | None:
    return _settlement_answer(settlement, user, "reject")


def settlement_adjust(*, settlement: Settlement, user) -> Refusal | None:
    """``settlement`` is the approved settlement, or one of its adjustments."""
    refusal = _role(user, *ADJUSTERS, action="prepare adjustments")
    original = settlement.corrects if settlement.is_adjustment else settlement
    if refusal is None and original.status != SettlementStatus.APPROVED:
        refusal = _state(
            f"Only an approved settlement can be adjusted; {original} is "
            f"{original.get_status_display().lower()}."
        )
    return refusal


# --- Compensation, prizes given in error, individual cases -------------------------------------


def compensation_propose(*, case: Case, user, has_settlement: bool) -> Refusal | None:
    """``has_settlement``: whether the (crash) case has had a settlement prepared."""
    refusal = _role(user, *COMPENSATION_PROPOSERS, action="propose compensation")
    refusal = refusal or _withdrawn(case, "propose compensation for")
    # Compensation answers a computed settlement (RULES.md §6), so a crash case needs one first.
    if refusal is None and case.is_crash and not has_settlement:
        refusal = _state(
            f"Compensation for {case} can be proposed once its settlement has been prepared."
        )
    if refusal is None and not case.is_crash and case.status != CaseStatus.OPEN:
        refusal = _state(f"{case} is resolved; open a new case for further compensation.")
    return refusal


def compensation_approve(*, compensation: Compensation, user) -> Refusal | None:
    return _compensation_answer(compensation, user, "approve")


def compensation_reject(*, compensation: Compensation, user) -> Refusal | None:
    return _compensation_answer(compensation, user, "reject")


def prize_withdrawal_decide(*, case: Case, user) -> Refusal | None:
    """Proposing to take a prize back (another Tournament Manager approves it), or leaving it."""
    refusal = _role(user, *PRIZE_WITHDRAWAL_DECIDERS, action="decide on prizes given in error")
    return refusal or _withdrawn(case, "record a prize given in error on")


def prize_withdrawal_approve(*, withdrawal: PrizeWithdrawal, user) -> Refusal | None:
    return _prize_withdrawal_answer(withdrawal, user, "approve")


def prize_withdrawal_reject(*, withdrawal: PrizeWithdrawal, user) -> Refusal | None:
    return _prize_withdrawal_answer(withdrawal, user, "reject")


def individual_case_open(*, user, incident: Incident | None = None) -> Refusal | None:
    refusal = _role(user, *INDIVIDUAL_CASE_HANDLERS, action="open individual cases")
    if refusal is None and incident is not None and not incident.is_open:
        refusal = _state(f"{incident} is closed.")
    return refusal


def individual_case_resolve(*, case: Case, user) -> Refusal | None:
    refusal = _role(user, *INDIVIDUAL_CASE_HANDLERS, action="resolve individual cases")
    if refusal is None and case.is_crash:
        refusal = _state(f"{case} is a crash case; it ends with its settlement.")
    return refusal or _case_state(case, "resolve")


# --- Payments ------------------------------------------------------------------------------------


def payment_confirm(*, user) -> Refusal | None:
    return _role(user, *CASHIERS, action="confirm payments")


def reissue_propose(*, user, key: str, state: str, reissued_as: str | None) -> Refusal | None:
    """``state``: the line's payment state (unconfirmed, paid, failed, reissued);
    ``reissued_as``: the key of a re-issue of it proposed or approved already."""
    refusal = _role(user, *REISSUE_PROPOSERS, action="propose re-issues")
    if refusal is None and reissued_as is not None:
        refusal = _state(f"Line {key} already has a re-issue ({reissued_as}).")
    if refusal is None and state != "failed":
        refusal = _state(f"Only a failed line is re-issued; line {key} is {state}.")
    return refusal


def reissue_approve(*, reissue: Reissue, user, paid_reference: str | None) -> Refusal | None:
    """``paid_reference``: the cashier's reference if it paid the failed line after all."""
    refusal = _reissue_answer(reissue, user, "approve")
    if refusal is None and paid_reference is not None:
        refusal = _state(
            f"Line {reissue.original_key} was paid after all (reference {paid_reference}); "
            "reject this re-issue."
        )
    return refusal


def reissue_reject(*, reissue: Reissue, user) -> Refusal | None:
    return _reissue_answer(reissue, user, "reject")


# --- API tokens ---------------------------------------------------------------------------------


def api_token_manage(*, owner, user) -> Refusal | None:
    """Issuing or revoking a token of ``owner``; ``user`` is None for an administrator on the
    server (the management command)."""
    if user is not None and user.pk != owner.pk:
        return Refusal(
            "Tokens are issued to their own user, or by an administrator on the server.", ROLE
        )
    return None


def api_token_revoke(*, token: ApiToken, user) -> Refusal | None:
    refusal = api_token_manage(owner=token.user, user=user)
    if refusal is None and token.revoked_at is not None:
        refusal = _state(f"{token} was already revoked.")
    return refusal


def settlement_basis_restore(*, settlement: Settlement, user) -> Refusal | None:
    """Putting back the figures behind a settlement's statements (services.bases): only an
    administrator on the server (``user`` None, the management command), since it writes
    past the guard that keeps an approved settlement final; and only once, on a settlement
    proper that has none."""
    if user is not None:
        return Refusal(
            "Only an administrator on the server restores a settlement's statement figures.", ROLE
        )
    if settlement.is_adjustment:
        return _state(f"{settlement} is an adjustment: its statements are its settlement's.")
    if settlement.basis:
        return _state(f"{settlement} already keeps the figures behind its statements.")
    return None


# --- A user's own settings ---------------------------------------------------------------------


def profile_update(*, owner, user) -> Refusal | None:
    """Anyone signed in keeps their own settings, and only their own."""
    if user is None or user.pk != owner.pk:
        return Refusal("Each person chooses their own settings.", ROLE)
    return None


# --- Shared rules -------------------------------------------------------------------------------


def _settlement_answer(settlement: Settlement, user, action: str) -> Refusal | None:
    refusal = _role(user, *APPROVERS, action=f"{action} settlements")
    refusal = refusal or _settlement_state(settlement, action, with_case=False)
    if refusal is None:
        # Whoever loaded the snapshot chose the data the settlement rests on: a first pair of
        # eyes as much as its preparer. Read from the records, so a role granted later changes
        # nothing; the database refuses the loader and the submitter as approver too.
        for did, author in (
            ("prepared", settlement.prepared_by_id),
            ("submitted", settlement.submitted_by_id),
            ("loaded the snapshot of", settlement.loaded_by_id),
        ):
            if user.pk == author:
                return Refusal(
                    f"You {did} {settlement}; another Tournament Manager must {action} it.",
                    OWN_WORK,
                )
    return refusal or _settlement_state(settlement, action, with_settlement=False)


def _compensation_answer(compensation: Compensation, user, action: str) -> Refusal | None:
    refusal = _role(user, *APPROVERS, action=f"{action} compensation")
    if refusal is None:
        text = compensation_refusal(compensation.status, action, label=str(compensation))
        refusal = _state(text) if text else None
    if refusal is None and user.pk == compensation.proposed_by_id:
        refusal = Refusal(
            f"You proposed {compensation}; another Tournament Manager must {action} it.",
            OWN_WORK,
        )
    return refusal


def _reissue_answer(reissue: Reissue, user, action: str) -> Refusal | None:
    refusal = _role(user, *APPROVERS, action=f"{action} re-issues")
    if refusal is None:
        text = reissue_refusal(reissue.status, action, label=str(reissue))
        refusal = _state(text) if text else None
    if refusal is None and user.pk == reissue.proposed_by_id:
        refusal = Refusal(
            f"You proposed {reissue}; another Tournament Manager must {action} it.", OWN_WORK
        )
    return refusal


def _prize_withdrawal_answer(withdrawal: PrizeWithdrawal, user, action: str) -> Refusal | None:
    refusal = _role(user, *APPROVERS, action=f"{action} prize withdrawals")
    if refusal is None:
        text = prize_withdrawal_refusal(withdrawal.status, action, label=str(withdrawal))
        refusal = _state(text) if text else None
    if refusal is None and user.pk == withdrawal.decided_by_id:
        refusal = Refusal(
            f"You proposed {withdrawal}; another Tournament Manager must {action} it.", OWN_WORK
        )
    return refusal


def _settlement_state(
    settlement: Settlement, action: str, *, with_settlement: bool = True, with_case: bool = True
) -> Refusal | None:
    """The state machine's refusal of ``action`` on the settlement, then on its case (an
    adjustment leaves its case's status alone)."""
    if with_settlement:
        text = settlement_refusal(settlement.status, action, label=str(settlement))
        if text:
            return _state(text)
    if with_case and not settlement.is_adjustment:
        return _case_state(settlement.case, action)
    return None


def _case_state(case: Case, action: str) -> Refusal | None:
    text = case_refusal(case.status, action, label=str(case))
    return _state(text) if text else None


def _withdrawn(case: Case, words: str) -> Refusal | None:
    # A case withdrawn as loaded in error takes nothing more; its tournament's new case does.
    if case.status == CaseStatus.WITHDRAWN:
        return _state(
            f"{case} was withdrawn as loaded in error; {words} the tournament's current case."
        )
    return None


def _role(user, *allowed: str, action: str) -> Refusal | None:
    text = roles.role_refusal(user, *allowed, action=action)
    return Refusal(text, ROLE) if text else None


def _state(text: str) -> Refusal:
    return Refusal(text, STATE)


# --- Rulebooks -----------------------------------------------------------------------------------


def rulebook_propose(*, user) -> Refusal | None:
    return _role(user, *RULEBOOK_WRITERS, action="propose rulebook versions")


def rulebook_version_approve(*, version: RulebookVersion, user) -> Refusal | None:
    refusal = _role(user, *RULEBOOK_WRITERS, action="approve rulebook versions")
    if refusal is None:
        text = rulebook_version_refusal(version.status, "approve", label=str(version))
        refusal = _state(text) if text else None
    if refusal is None and user.pk == version.proposed_by_id:
        refusal = Refusal(
            f"You proposed {version}; another Tournament Manager must approve it.", OWN_WORK
        )
    return refusal


def rulebook_version_withdraw(*, version: RulebookVersion, user, now) -> Refusal | None:
    """A version not yet approved, or approved and not yet in effect: once it has taken effect,
    cases may have been settled under it, and a newer version replaces it instead."""
    refusal = _role(user, *RULEBOOK_WRITERS, action="withdraw rulebook versions")
    if refusal is None:
        text = rulebook_version_refusal(version.status, "withdraw", label=str(version))
        if text is None and version.status == "approved" and version.effective_from <= now:
            text = f"Cannot withdraw {version}: it has taken effect; propose a newer version."
        refusal = _state(text) if text else None
    return refusal


def audit_verify(*, user) -> Refusal | None:
    """The auditor verifies the whole event log in the background (the history page)."""
    return _role(user, *HISTORY_READERS, action="verify the event log")


def incident_record_export(*, user) -> Refusal | None:
    """The auditor takes an incident's sealed record away, to verify it offline."""
    return _role(user, *HISTORY_READERS, action="export an incident's sealed record")


def access_review(*, user) -> Refusal | None:
    """The auditor reads the access review and records each review done."""
    return _role(user, *ACCESS_REVIEWERS, action="review who holds which access")


def history_record_read(*, user, case_record: bool) -> Refusal | None:
    """A record's versions: the auditor reads every kind; a Tournament Manager those of the
    crashes and cases they approve (``case_record``), not tokens or rulebooks."""
    if case_record:
        return _role(user, *CASE_HISTORY_READERS, action="read the history of cases")
    return _role(user, *HISTORY_READERS, action="read this history")
