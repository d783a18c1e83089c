"""The shapes of the API's answers, as msgspec types: the OpenAPI document (``openapi``) is
generated from them, and the tests hold every answer an endpoint gives to its type (no field
more, none missing), so the document cannot drift from what is sent.

The endpoints build their answers as plain dicts (the statement and ledger documents are shared
with the exports) and send them through these types (``base.answer``), so an answer unlike the
document fails on the desk rather than at a client.
"""

from typing import Annotated, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from settlements.models.choices import LineKind, Source, Stage, TournamentType, Unit
from settlements.rules import Line, PayoutRow
from settlements.rules.remedy_names import DECISION_OPTIONS, REMEDIES
from settlements.workflow import CaseStatus, RulebookVersionStatus, SettlementStatus


def _one_of(choices) -> object:
    """The values of a vocabulary (its TextChoices, the one place it is listed) as the type
    of a field, so the document offers exactly what the desk sends."""
    return Literal[tuple(choices.values)]


LineKindValue = _one_of(LineKind)
UnitValue = _one_of(Unit)
SourceValue = _one_of(Source)
StageValue = _one_of(Stage)
TournamentTypeValue = _one_of(TournamentType)
CaseStatusValue = _one_of(CaseStatus)
SettlementStatusValue = _one_of(SettlementStatus)
RulebookVersionStatusValue = _one_of(RulebookVersionStatus)
# The engine's names, listed once in the engine rather than in a TextChoices.
RemedyValue = Literal[REMEDIES]
DecisionOptionValue = Literal[DECISION_OPTIONS]

Url = Annotated[str, Meta(description="An absolute URL on this desk.")]
Time = Annotated[str, Meta(description="RFC 3339, e.g. 2026-11-30T21:30:00+00:00.")]
Amount = Annotated[int, Meta(description="In minor units (cents, or a count of tickets or FPP).")]
NextPage = Annotated[
    str | None,
    Meta(description="The URL of the following page; null on the last one."),
]


# A crash's figure: an individual case has none.
type Crash[T] = Annotated[T | None, Meta(description="Null for an individual case.")]


class _Answer(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """An answer as sent: every field is always there (null when it has no value)."""


# --- Refusals ------------------------------------------------------------------------------------


class Problem(_Answer):
    path: Annotated[
        str,
        Meta(
            description=(
                "Where the problem is: `$` for the whole request or document, `?name` for a "
                "query parameter, `Authorization` for the credentials, or a path into the JSON "
                "body such as `players[3].chips` or `confirmations[0].amount`."
            ),
            examples=["?limit", "players[3].chips", "Authorization", "$"],
        ),
    ]
    message: Annotated[str, Meta(examples=["must be at most 200"])]
    player: (
        Annotated[str, Meta(description="The player of the snapshot row the problem is in.")]
        | UnsetType
    ) = UNSET


class Refusal(_Answer):
    """Every 4xx and 5xx answer: one or more problems, each at its path."""

    errors: list[Problem]


class ZipArchive:
    """Not JSON: a file (an incident's sealed record), described by its media type."""

    media_type = "application/zip"


class DuplicateSnapshot(_Answer):
    """The tournament already has a case. ``same_snapshot`` true: this very snapshot was loaded
    before (a retry after a lost answer), nothing was written twice."""

    errors: list[Problem]
    case: int | UnsetType = UNSET
    url: Url | UnsetType = UNSET
    same_snapshot: bool | UnsetType = UNSET


# --- Snapshots and cases -------------------------------------------------------------------------


class CaseCreated(_Answer):
    case: int
    url: Url
    incident: int | None
    stage: StageValue
    status: CaseStatusValue
    decision_options: list[DecisionOptionValue]


class TournamentSummary(_Answer):
    id: Annotated[str, Meta(description="The operator's tournament id, as in the snapshot.")]
    name: str
    type: TournamentTypeValue
    currency: str


class CaseSummary(_Answer):
    id: int
    url: Url
    kind: Annotated[
        Literal["crash", "individual"],
        Meta(description="An individual case (a few players, opened on the desk) has no stage."),
    ]
    status: CaseStatusValue
    incident: int | None
    tournament: TournamentSummary
    crashed_at: Time | None
    stage: StageValue | None
    entrants: Crash[int]
    eliminated: Crash[int]
    remaining: Crash[int]
    paid_places: Crash[int]
    pool: Crash[Amount]
    decision_options: list[DecisionOptionValue]
    decision: DecisionOptionValue | None
    created_at: Time
    updated_at: Time


class CasePage(_Answer):
    results: Annotated[list[CaseSummary], Meta(description="Newest first.")]
    next: NextPage


class SettlementAnswer(_Answer):
    """The settlement in SNAPSHOT.md's ``crash-settlement/1`` format, as ``manage.py settle``
    prints it; ``lines`` is null for a role that may not read the ledger."""

    format: str
    tournament_id: str
    policy: dict
    stage: StageValue
    remedy: RemedyValue | None
    decision: DecisionOptionValue | None
    decision_options: list[DecisionOptionValue]
    entrants: int
    eliminated: int
    remaining: int
    pool: Amount
    pool_distributed: Amount | None
    payouts: list[PayoutRow]
    lines: list[Line] | None


class AdjustmentAnswer(_Answer):
    id: int
    status: SettlementStatusValue
    document: SettlementAnswer


class RulebookRef(_Answer):
    key: str
    version: int


class CaseDetail(CaseSummary):
    policy: Annotated[dict | None, Meta(description="The crash policy the case was assessed with.")]
    rulebook: Annotated[
        RulebookRef | None,
        Meta(description="The rulebook version in force when the tournament started."),
    ]
    engine_version: str | None
    settlement_id: int | None
    settlement_status: SettlementStatusValue | None
    settlement: Annotated[
        SettlementAnswer | None,
        Meta(description="The stored settlement document: never computed again."),
    ]
    adjustments: Annotated[
        list[AdjustmentAnswer], Meta(description="An approved settlement's adjustments.")
    ]


# --- The ledger ----------------------------------------------------------------------------------


class FeedLine(_Answer):
    sequence: Annotated[int, Meta(description="The line's place in the feed: 1, 2, 3, … no gaps.")]
    idempotency_key: Annotated[
        str,
        Meta(
            description=(
                "Never given to another line: pay each key once. `<settlement>-<line>` for a "
                "settlement's or adjustment's line, `C<compensation>-<line>`, "
                "`W<prize withdrawal>-1`, `R<re-issue>-1`."
            ),
            examples=["42-1", "C3-2", "R5-1"],
        ),
    ]
    player: Annotated[str, Meta(description="The operator's player id, as in the snapshot.")]
    kind: LineKindValue
    unit: UnitValue
    amount: Annotated[
        int,
        Meta(
            description=(
                "Signed minor units: positive pays the player, negative takes back (a prize "
                "withdrawn, a reversal in an adjustment)."
            )
        ),
    ]
    currency: Annotated[
        str | None,
        Meta(description="ISO 4217 for cash and tdollars; null for tickets and fpp (counts)."),
    ]
    source: Annotated[
        SourceValue,
        Meta(description="The tournament's prize pool, the house, or the bounties' money."),
    ]
    record: Annotated[
        Literal["settlement", "adjustment", "compensation", "prize_withdrawal", "reissue"],
        Meta(description="What approved the line; `record_id` is its id."),
    ]
    record_id: int
    settlement: Annotated[
        int | None,
        Meta(description="The settlement or adjustment; a re-issue keeps its failed line's."),
    ]
    compensation: int | None
    case: int
    incident: Annotated[int | None, Meta(description="Null for a case opened without one.")]
    tournament: Annotated[str, Meta(description="The operator's tournament id.")]
    reissue_of: Annotated[
        str | None, Meta(description="On a re-issue, the key of the failed line it replaces.")
    ]
    approved_at: Annotated[str, Meta(description="When the record was approved, RFC 3339 UTC.")]


class FeedPage(_Answer):
    lines: list[FeedLine]
    cursor: Annotated[
        str, Meta(description="Opaque: pass it as `after` for the next page. Never expires.")
    ]
    more: Annotated[
        bool,
        Meta(description="True: more lines were already approved, read again at once."),
    ]
    next: Url


class ConfirmationResult(_Answer):
    idempotency_key: str | None
    outcome: Literal["recorded", "already_recorded", "refused"]
    errors: list[Problem] | UnsetType = UNSET


class ConfirmationResults(_Answer):
    results: Annotated[list[ConfirmationResult], Meta(description="In the order sent.")]
    recorded: int
    already_recorded: int
    refused: int


# --- Statements ----------------------------------------------------------------------------------


class LinePayment(_Answer):
    state: Annotated[
        str,
        Meta(
            description="not_sent, withdrawn, unconfirmed, paid, failed or reissued (paid "
            "again under the key reissued_as)."
        ),
    ]
    key: Annotated[str | None, Meta(description="The line's key on the cashier's feed.")]
    reference: Annotated[str | None, Meta(description="The wallet's latest reference.")]
    at: Annotated[str | None, Meta(description="When the wallet last answered, RFC 3339.")]
    reissued_as: str | None
    reissue: Annotated["LinePayment | None", Meta(description="The re-issued line's own payment.")]
    words: str


class StatementLine(_Answer):
    kind: LineKindValue
    unit: UnitValue
    amount: Amount
    source: SourceValue
    payment: LinePayment | None


class StatementPart(_Answer):
    part: str
    label: str
    amount: Amount


class ArithmeticStep(_Answer):
    label: str
    expression: str
    result: Annotated[str, Meta(description='An exact fraction of minor units, "n/d" or "n".')]


class StatementDocument(_Answer):
    settlement: int | None
    case: int
    incident: int | None
    tournament: str
    tournament_name: str
    rulebook: Annotated[
        RulebookRef | None, Meta(description="The rulebook version the case was settled under.")
    ]
    settlement_status: SettlementStatusValue | None
    currency: str
    stage: StageValue
    remedy: RemedyValue | None
    decision: DecisionOptionValue | None
    player: Annotated[str, Meta(description="The id exactly as the game server sent it.")]
    player_written_out: Annotated[
        str | None,
        Meta(description="The id with every character outside printable ASCII as `\\uXXXX`."),
    ]
    chips: Annotated[int, Meta(description="Chips at the crash; 0: knocked out.")]
    situation: Annotated[
        Literal["share", "seat_rank", "refund", "rescheduled", "knocked_out"],
        Meta(description="Which kind of statement applies (docs/api.md)."),
    ]
    amounts: Annotated[
        dict[str, Amount],
        Meta(description="The sum of `lines` by unit; units with nothing are left out."),
    ]
    lines: Annotated[
        list[StatementLine], Meta(description="The player's ledger lines of this settlement.")
    ]
    parts: Annotated[
        list[StatementPart],
        Meta(description="For a split: the guaranteed part and the share; else empty."),
    ]
    arithmetic: Annotated[
        list[ArithmeticStep],
        Meta(description="Worked steps: each `expression` evaluates exactly to its `result`."),
    ]
    exact_before_rounding: Annotated[
        str | None, Meta(description="What is owed before rounding, as n/d; null if none.")
    ]
    rounding: str | None
    headline: str
    also_on_record: Annotated[
        list[str],
        Meta(description="With ?player only: adjustments, compensation and withdrawals, in words."),
    ]
    text: Annotated[str, Meta(description="The whole statement as plain text to send.")]


class StatementsPage(_Answer):
    settlement: int
    case: int
    settlement_status: SettlementStatusValue
    statements: list[StatementDocument]
    next: NextPage


# --- The ICM second opinion ----------------------------------------------------------------------


class IcmFlag(_Answer):
    percent: Annotated[
        int, Meta(description="A player is flagged when the policy pays this percentage less…")
    ]
    min_amount: Annotated[Amount, Meta(description="…and at least this much less than ICM.")]


class IcmPlayer(_Answer):
    player: str
    chips: int
    chip_rank: Annotated[int, Meta(description="1 for the biggest stack; ties by player id.")]
    icm: Annotated[Amount, Meta(description="The stack's ICM value, rounded to the minor unit.")]
    icm_exact: Annotated[str, Meta(description='Exact, "n/d" (the sample mean when sampled).')]
    standard_error: Annotated[Amount, Meta(description="0 when computed exactly.")]
    policy: Annotated[
        Amount, Meta(description="What the policy pays the player from the prize pool.")
    ]
    difference: Annotated[int, Meta(description="policy − icm: below zero the policy pays less.")]
    flagged: bool
    bounty: Annotated[
        Amount,
        Meta(description="A knock-out's bounties paid to the player besides; not compared."),
    ]


class IcmPage(_Answer):
    settlement: int
    case: int
    currency: str
    status: Annotated[str, Meta(description="running while sampled in the background, or done.")]
    method: Annotated[str, Meta(description="exact or sampled.")]
    players: int
    prizes_in_play: Amount
    seed: Annotated[int | None, Meta(description="The sample's seed; null when exact.")]
    samples: int
    flag: IcmFlag
    values: Annotated[list[IcmPlayer], Meta(description="Empty while running.")]
    next: NextPage


# --- Rulebooks -----------------------------------------------------------------------------------


class RulebookVersionAnswer(_Answer):
    rulebook: str
    version: int
    status: RulebookVersionStatusValue
    effective_from: Time
    parameters: Annotated[dict, Meta(description="Every policy parameter, defaults filled in.")]
    text: Annotated[str, Meta(description="The text shown to players, in Markdown.")]
    proposed_by: Annotated[str | None, Meta(description="Null for the first `default` version.")]
    proposed_at: Time
    proposal_reason: str
    approved_by: str | None
    approved_at: Time | None
    approval_reason: str
    withdrawn_by: str | None
    withdrawn_at: Time | None
    withdrawal_reason: str
    url: Url


class RulebookAnswer(_Answer):
    key: str
    in_force: Annotated[int | None, Meta(description="The number of the version in force now.")]
    versions: list[RulebookVersionAnswer]


class RulebookPage(_Answer):
    results: list[RulebookAnswer]


# A simulation's remedy: empty, not null, where the case's decision is still to be taken.
RemedyOrPending = Annotated[
    Literal[("", *REMEDIES)], Meta(description="Empty while the case needs a decision.")
]


class SimulationCase(_Answer):
    case: int
    stage_then: StageValue
    remedy_then: RemedyOrPending
    totals_then: Annotated[dict[str, int], Meta(description="{unit: amount} under its version.")]
    stage_draft: StageValue
    remedy_draft: RemedyOrPending
    totals_draft: Annotated[dict[str, int], Meta(description="{unit: amount} under the draft.")]
    needs_decision: bool


class SimulationAnswer(_Answer):
    id: int
    rulebook: str
    version: int
    requested_by: str
    requested_at: Time
    selection: dict
    case_count: int
    status: Annotated[str, Meta(examples=["queued", "running", "done", "failed"])]
    done: int
    summary: Annotated[
        dict,
        Meta(
            description="Once done: cases, needs_decision (case ids) and by unit the players "
            "better, worse and unchanged, the largest gain and loss, the totals then and draft."
        ),
    ]
    results: list[SimulationCase]
    url: Url
