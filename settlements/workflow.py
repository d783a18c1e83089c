"""The small state machines of a case and of a settlement.

Crash case::

    awaiting_decision --decide--> ready --prepare--> prepared --submit--> awaiting_approval
          ready --decide--> ready            (the Marketing Manager revises before preparation)
    awaiting_approval --approve--> approved (final)
    awaiting_approval --reject--> rejected --prepare--> prepared   (or --decide--> ready)
    any of the above but approved --withdraw--> withdrawn (final: loaded in error)

Individual case::

    open --resolve--> resolved (final)

A settlement (or an adjustment) moves prepared -> awaiting_approval -> approved | rejected;
a settlement not yet approved is withdrawn (final) with its case. Compensation and the
re-issue of a failed payment move proposed -> approved | rejected; a compensation proposal not
yet answered is withdrawn (final) with its case, and an approved one keeps its case from being
withdrawn.
A prize withdrawn from a player (a debit) moves proposed -> approved | rejected like a re-issue,
the approver never its proposer, and only once approved does its line reach the cashier; a
proposal still waiting is withdrawn with its case. A prize left with the player moves no money
and is recorded (final) at once.
Every service asks this module whether its move is legal, so the rules live in one place.

Each state in which a record waits for a person declares it in ``AWAITING`` below: which role
answers it and who may not (four eyes). The dashboard's "Waiting for you" and its full queues
are read from that table alone, so a new kind of approval appears there once its state is
declared.
"""

from dataclasses import dataclass

from django.db import models

from settlements.desk_roles import MARKETING_MANAGER, OPERATOR, TOURNAMENT_MANAGER
from settlements.errors import InvalidTransition


class CaseStatus(models.TextChoices):
    AWAITING_DECISION = "awaiting_decision", "Awaiting decision"
    READY = "ready", "Ready to prepare"
    PREPARED = "prepared", "Prepared"
    AWAITING_APPROVAL = "awaiting_approval", "Awaiting approval"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    OPEN = "open", "Open"
    RESOLVED = "resolved", "Resolved"
    WITHDRAWN = "withdrawn", "Withdrawn"


class SettlementStatus(models.TextChoices):
    PREPARED = "prepared", "Prepared"
    AWAITING_APPROVAL = "awaiting_approval", "Awaiting approval"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"


class CompensationStatus(models.TextChoices):
    PROPOSED = "proposed", "Awaiting approval"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn with its case"


class RulebookVersionStatus(models.TextChoices):
    PROPOSED = "proposed", "Awaiting approval"
    APPROVED = "approved", "Approved"
    WITHDRAWN = "withdrawn", "Withdrawn"


class ReissueStatus(models.TextChoices):
    PROPOSED = "proposed", "Awaiting approval"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"


class PrizeWithdrawalStatus(models.TextChoices):
    PROPOSED = "proposed", "Awaiting approval"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn with its case"
    RECORDED = "recorded", "Recorded"


# action -> (statuses it may start from, status it leads to, words for an error message)
_CASE_MOVES: dict[str, tuple[frozenset[str], str, str]] = {
    "decide": (
        frozenset({CaseStatus.AWAITING_DECISION, CaseStatus.READY, CaseStatus.REJECTED}),
        CaseStatus.READY,
        "record a decision on",
    ),
    "prepare": (
        frozenset({CaseStatus.READY, CaseStatus.REJECTED}),
        CaseStatus.PREPARED,
        "prepare a settlement for",
    ),
    "submit": (
        frozenset({CaseStatus.PREPARED}),
        CaseStatus.AWAITING_APPROVAL,
        "submit the settlement of",
    ),
    "approve": (
        frozenset({CaseStatus.AWAITING_APPROVAL}),
        CaseStatus.APPROVED,
        "approve the settlement of",
    ),
    "reject": (
        frozenset({CaseStatus.AWAITING_APPROVAL}),
        CaseStatus.REJECTED,
        "reject the settlement of",
    ),
    "resolve": (frozenset({CaseStatus.OPEN}), CaseStatus.RESOLVED, "resolve"),
    # A crash case loaded in error; once approved, a case is corrected by an adjustment.
    "withdraw": (
        frozenset(
            {
                CaseStatus.AWAITING_DECISION,
                CaseStatus.READY,
                CaseStatus.PREPARED,
                CaseStatus.AWAITING_APPROVAL,
                CaseStatus.REJECTED,
            }
        ),
        CaseStatus.WITHDRAWN,
        "withdraw",
    ),
}

_SETTLEMENT_MOVES: dict[str, tuple[frozenset[str], str, str]] = {
    "submit": (
        frozenset({SettlementStatus.PREPARED}),
        SettlementStatus.AWAITING_APPROVAL,
        "submit",
    ),
    "approve": (
        frozenset({SettlementStatus.AWAITING_APPROVAL}),
        SettlementStatus.APPROVED,
        "approve",
    ),
    "reject": (
        frozenset({SettlementStatus.AWAITING_APPROVAL}),
        SettlementStatus.REJECTED,
        "reject",
    ),
    "withdraw": (
        frozenset({SettlementStatus.PREPARED, SettlementStatus.AWAITING_APPROVAL}),
        SettlementStatus.WITHDRAWN,
        "withdraw",
    ),
}

_COMPENSATION_MOVES: dict[str, tuple[frozenset[str], str, str]] = {
    "approve": (
        frozenset({CompensationStatus.PROPOSED}),
        CompensationStatus.APPROVED,
        "approve",
    ),
    "reject": (
        frozenset({CompensationStatus.PROPOSED}),
        CompensationStatus.REJECTED,
        "reject",
    ),
    # A proposal still waiting when its case is withdrawn as loaded in error: void with it.
    "withdraw": (
        frozenset({CompensationStatus.PROPOSED}),
        CompensationStatus.WITHDRAWN,
        "withdraw",
    ),
}

_RULEBOOK_MOVES: dict[str, tuple[frozenset[str], str, str]] = {
    "approve": (
        frozenset({RulebookVersionStatus.PROPOSED}),
        RulebookVersionStatus.APPROVED,
        "approve",
    ),
    # An approved version only before it takes effect: the service checks the time.
    "withdraw": (
        frozenset({RulebookVersionStatus.PROPOSED, RulebookVersionStatus.APPROVED}),
        RulebookVersionStatus.WITHDRAWN,
        "withdraw",
    ),
}

_REISSUE_MOVES: dict[str, tuple[frozenset[str], str, str]] = {
    "approve": (frozenset({ReissueStatus.PROPOSED}), ReissueStatus.APPROVED, "approve"),
    "reject": (frozenset({ReissueStatus.PROPOSED}), ReissueStatus.REJECTED, "reject"),
}

_PRIZE_WITHDRAWAL_MOVES: dict[str, tuple[frozenset[str], str, str]] = {
    "approve": (
        frozenset({PrizeWithdrawalStatus.PROPOSED}),
        PrizeWithdrawalStatus.APPROVED,
        "approve",
    ),
    "reject": (
        frozenset({PrizeWithdrawalStatus.PROPOSED}),
        PrizeWithdrawalStatus.REJECTED,
        "reject",
    ),
    "withdraw": (
        frozenset({PrizeWithdrawalStatus.PROPOSED}),
        PrizeWithdrawalStatus.WITHDRAWN,
        "withdraw",
    ),
}


@dataclass(frozen=True)
class Flow:
    """A record's states as the database guards them (``settlements.triggers.follows``): the
    states it is written in (those no move leads to) and every (from, to) a move makes."""

    first: frozenset[str]
    moves: frozenset[tuple[str, str]]


def _flow(choices: type[models.TextChoices], moves) -> Flow:
    targets = {target for _, target, _ in moves.values()}
    return Flow(
        first=frozenset(choices.values) - targets,
        moves=frozenset(
            (source, target) for sources, target, _ in moves.values() for source in sources
        ),
    )


SETTLEMENT_FLOW = _flow(SettlementStatus, _SETTLEMENT_MOVES)
COMPENSATION_FLOW = _flow(CompensationStatus, _COMPENSATION_MOVES)
REISSUE_FLOW = _flow(ReissueStatus, _REISSUE_MOVES)
PRIZE_WITHDRAWAL_FLOW = _flow(PrizeWithdrawalStatus, _PRIZE_WITHDRAWAL_MOVES)
RULEBOOK_VERSION_FLOW = _flow(RulebookVersionStatus, _RULEBOOK_MOVES)

CASE_FINAL = frozenset({CaseStatus.APPROVED, CaseStatus.RESOLVED, CaseStatus.WITHDRAWN})

# The order cases are listed in wherever work is planned (the dashboard, the incident
# workbench): someone's work first (a rejected settlement is redone before new work), then
# approval, then the finished cases.
CASE_WORK_ORDER = (
    CaseStatus.AWAITING_DECISION,
    CaseStatus.REJECTED,
    CaseStatus.READY,
    CaseStatus.PREPARED,
    CaseStatus.AWAITING_APPROVAL,
    CaseStatus.OPEN,
    CaseStatus.APPROVED,
    CaseStatus.RESOLVED,
    CaseStatus.WITHDRAWN,
)


@dataclass(frozen=True)
class Awaits:
    """Records of ``model`` ("app_label.Model") in one of ``statuses`` (and matching ``where``,
    field -> value) wait for a person of ``role``: the queue ``name`` titled ``title``, oldest
    ``since`` first, each record opened at the URL named ``opens`` given the record's fields
    ``opens_with`` (its id unless said otherwise; ``__`` follows a relation). ``not_by`` names
    the record's user fields whose user may not answer it (their own work). ``together`` is
    (URL name given an incident id, link words) of the page that answers an incident's records
    in one go, if there is one. A record waits either as a case, as part of one (it has a
    ``case``), or on its own (a rulebook version), when no tournament or incident goes with it."""

    name: str
    title: str
    model: str
    statuses: tuple[str, ...]
    role: str
    opens: str
    since: str
    where: tuple[tuple[str, str], ...] = ()
    not_by: tuple[str, ...] = ()
    together: tuple[str, str] = ("", "")
    opens_with: tuple[str, ...] = ("pk",)

    def opens_args(self, record) -> list:
        """The arguments of the ``opens`` URL for ``record``."""
        args = []
        for path in self.opens_with:
            value = record
            for name in path.split("__"):
                value = getattr(value, name)
            args.append(value)
        return args


AWAITING = (
    Awaits(
        name="decisions",
        title="Decisions to make",
        model="settlements.Case",
        statuses=(CaseStatus.AWAITING_DECISION,),
        role=MARKETING_MANAGER,
        opens="case_decision",
        since="created_at",
        together=("incident_decide", "decide alike cases together"),
    ),
    Awaits(
        name="to_prepare",
        title="Settlements to prepare",
        model="settlements.Case",
        statuses=(CaseStatus.READY, CaseStatus.REJECTED),
        role=OPERATOR,
        opens="case_detail",
        since="created_at",
        where=(("kind", "crash"),),
    ),
    Awaits(
        name="to_submit",
        title="Settlements to submit",
        model="settlements.Settlement",
        statuses=(SettlementStatus.PREPARED,),
        role=OPERATOR,
        opens="settlement_review",
        since="prepared_at",
    ),
    Awaits(
        name="approvals",
        title="Settlements to approve",
        model="settlements.Settlement",
        statuses=(SettlementStatus.AWAITING_APPROVAL,),
        role=TOURNAMENT_MANAGER,
        opens="settlement_review",
        since="prepared_at",
        not_by=("prepared_by", "submitted_by"),
        together=("incident_approve", "approve many at once"),
    ),
    Awaits(
        name="compensations",
        title="Compensation to approve",
        model="settlements.Compensation",
        statuses=(CompensationStatus.PROPOSED,),
        role=TOURNAMENT_MANAGER,
        opens="compensation_detail",
        since="proposed_at",
        not_by=("proposed_by",),
    ),
    Awaits(
        name="reissues",
        title="Re-issues to approve",
        model="settlements.Reissue",
        statuses=(ReissueStatus.PROPOSED,),
        role=TOURNAMENT_MANAGER,
        opens="reissue_approve",
        since="proposed_at",
        not_by=("proposed_by",),
    ),
    Awaits(
        name="prize_withdrawals",
        title="Prize withdrawals to approve",
        model="settlements.PrizeWithdrawal",
        statuses=(PrizeWithdrawalStatus.PROPOSED,),
        role=TOURNAMENT_MANAGER,
        opens="prize_withdrawal_approve",
        since="decided_at",
        not_by=("decided_by",),
    ),
    Awaits(
        name="individual_cases",
        title="Individual cases to resolve",
        model="settlements.Case",
        statuses=(CaseStatus.OPEN,),
        role=TOURNAMENT_MANAGER,
        opens="case_detail",
        since="created_at",
        where=(("kind", "individual"),),
    ),
    Awaits(
        name="rulebook_versions",
        title="Rulebook versions to approve",
        model="settlements.RulebookVersion",
        statuses=(RulebookVersionStatus.PROPOSED,),
        role=TOURNAMENT_MANAGER,
        opens="rulebook_version_approve",
        since="proposed_at",
        not_by=("proposed_by",),
        opens_with=("rulebook__key", "number"),
    ),
)


def case_next_status(current: str, action: str, *, label: str) -> str:
    """The status ``action`` leads to from ``current``; InvalidTransition when illegal."""
    return _move(_CASE_MOVES, CaseStatus, current, action, label)


def settlement_next_status(current: str, action: str, *, label: str) -> str:
    return _move(_SETTLEMENT_MOVES, SettlementStatus, current, action, label)


def compensation_next_status(current: str, action: str, *, label: str) -> str:
    return _move(_COMPENSATION_MOVES, CompensationStatus, current, action, label)


def case_refusal(current: str, action: str, *, label: str) -> str | None:
    """Why a case in ``current`` cannot take ``action`` (``label`` names it), or None."""
    return _refusal(_CASE_MOVES, CaseStatus, current, action, label)


def settlement_refusal(current: str, action: str, *, label: str) -> str | None:
    return _refusal(_SETTLEMENT_MOVES, SettlementStatus, current, action, label)


def compensation_refusal(current: str, action: str, *, label: str) -> str | None:
    return _refusal(_COMPENSATION_MOVES, CompensationStatus, current, action, label)


def rulebook_version_refusal(current: str, action: str, *, label: str) -> str | None:
    return _refusal(_RULEBOOK_MOVES, RulebookVersionStatus, current, action, label)


def rulebook_version_next_status(current: str, action: str, *, label: str) -> str:
    return _move(_RULEBOOK_MOVES, RulebookVersionStatus, current, action, label)


def reissue_refusal(current: str, action: str, *, label: str) -> str | None:
    return _refusal(_REISSUE_MOVES, ReissueStatus, current, action, label)


def reissue_next_status(current: str, action: str, *, label: str) -> str:
    return _move(_REISSUE_MOVES, ReissueStatus, current, action, label)


def prize_withdrawal_refusal(current: str, action: str, *, label: str) -> str | None:
    return _refusal(_PRIZE_WITHDRAWAL_MOVES, PrizeWithdrawalStatus, current, action, label)


def prize_withdrawal_next_status(current: str, action: str, *, label: str) -> str:
    return _move(_PRIZE_WITHDRAWAL_MOVES, PrizeWithdrawalStatus, current, action, label)


def case_allows(current: str, action: str) -> bool:
    """Whether a case in ``current`` may take ``action`` (for showing or hiding buttons)."""
    return current in _CASE_MOVES[action][0]


def settlement_allows(current: str, action: str) -> bool:
    return current in _SETTLEMENT_MOVES[action][0]


def _refusal(moves, choices, current: str, action: str, label: str) -> str | None:
    sources, _, words = moves[action]
    if current in sources:
        return None
    return f"Cannot {words} {label}: it is {choices(current).label.lower()}."


def _move(moves, choices, current: str, action: str, label: str) -> str:
    refusal = _refusal(moves, choices, current, action, label)
    if refusal is not None:
        raise InvalidTransition(refusal)
    return moves[action][1]
