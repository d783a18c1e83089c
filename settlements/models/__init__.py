"""The audited records of the workflow.

Headers that people move through a workflow (tournaments, incidents, cases, decisions,
settlements, compensation, prize withdrawals, API tokens) keep a full version history with
simple-history. The bulky per-player rows (a snapshot's entrants, a settlement's payouts and
ledger lines, a compensation's items) are written once in bulk and never changed, so they carry
no per-row history: their header's history and the event log already say who wrote them, when
and why. Every business event also leaves an explicit ``Event`` row.

Writes go through ``settlements.services`` only.

One module per part of the business; everything is re-exported here, so
``from settlements.models import Case`` is the one way to import a model.
"""

from settlements.models.access_guards import (
    GuardedMembership,
    GuardedUserFlags,
)
from settlements.models.accounts import (
    TOKEN_PREFIX_LENGTH,
    TOKEN_TAG,
    ApiToken,
    DigestEvery,
    Profile,
    SignedInSession,
    TokenScope,
)
from settlements.models.base import (
    ID_MAX_LENGTH,
    PROSE_MAX_LENGTH,
    validate_storable_time,
)
from settlements.models.checkpoints import (
    AuditCheckpoint,
)
from settlements.models.choices import (
    LineKind,
    Source,
    Stage,
    TournamentType,
    Unit,
)
from settlements.models.compensation import (
    Compensation,
    CompensationItem,
    PrizeWithdrawal,
)
from settlements.models.crashes import (
    Case,
    CasePlayer,
    Decision,
    Incident,
    Snapshot,
    Tournament,
)
from settlements.models.events import (
    Event,
)
from settlements.models.icm import (
    IcmValuation,
    IcmValue,
)
from settlements.models.jobs import (
    Job,
    JobItem,
)
from settlements.models.payments import (
    KEY_PREFIXES,
    LedgerRelease,
    PaymentConfirmation,
    PaymentTally,
    Reissue,
    idempotency_key,
)
from settlements.models.rulebooks import (
    Rulebook,
    RulebookVersion,
    Simulation,
    SimulationResult,
)
from settlements.models.settlements import (
    SETTLEMENT_FIXED,
    Settlement,
    SettlementLine,
    SettlementPayout,
)

__all__ = [
    "ApiToken",
    "AuditCheckpoint",
    "Case",
    "CasePlayer",
    "Compensation",
    "CompensationItem",
    "Decision",
    "Event",
    "GuardedMembership",
    "GuardedUserFlags",
    "ID_MAX_LENGTH",
    "PROSE_MAX_LENGTH",
    "IcmValuation",
    "IcmValue",
    "Incident",
    "Job",
    "JobItem",
    "KEY_PREFIXES",
    "LedgerRelease",
    "LineKind",
    "PaymentConfirmation",
    "PaymentTally",
    "PrizeWithdrawal",
    "DigestEvery",
    "Profile",
    "Reissue",
    "Rulebook",
    "RulebookVersion",
    "SETTLEMENT_FIXED",
    "Simulation",
    "SimulationResult",
    "Settlement",
    "SettlementLine",
    "SettlementPayout",
    "SignedInSession",
    "Snapshot",
    "Source",
    "Stage",
    "TOKEN_PREFIX_LENGTH",
    "TOKEN_TAG",
    "TokenScope",
    "Tournament",
    "TournamentType",
    "Unit",
    "idempotency_key",
    "validate_storable_time",
]
