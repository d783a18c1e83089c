"""A statement for one player of one settlement: what happened, why, what the policy gives
them, and the arithmetic behind their amount, in words a support agent can paste or a mailer
can send.

Pure: no database. The inputs are plain facts (``facts``: ``SettlementFacts``,
``PlayerFacts``) that the selectors read from the stored settlement. Every figure comes from
the engine: the settlement's ``Basis`` (its pool, guaranteed amount, cap, the players sharing
and their weights) and the player's stored explanation (their exact amount, even and weighted
parts, rounding cent). The printed arithmetic is built from those inputs so that evaluated it
gives the exact amount before rounding; the amounts at the end are the sums of the player's
ledger lines, by unit.

``builder`` puts a statement together from the situation that applies (``refund``,
``reschedule``, ``knocked_out``, ``seat_rank``, ``share``), each adding its steps to a
``draft.Draft``; ``words`` holds the sentences they share; ``document`` the statement as text
and as JSON.
"""

# The unit order under the name the statements' CSV export reads it by.
from settlements.statements.builder import build
from settlements.statements.document import (
    KNOCKED_OUT,
    REFUND,
    RESCHEDULED,
    SEAT_RANK,
    SHARE,
    Amount,
    Part,
    Section,
    Statement,
    Step,
    document,
)
from settlements.statements.facts import (
    Explained,
    Followup,
    LineFacts,
    PaymentFacts,
    PlayerFacts,
    SettlementFacts,
)
from settlements.statements.share import payout_parts
from settlements.statements.words import (
    KIND_LABELS,
    SOURCE_LABELS,
    TYPE_LABELS,
    WITHOUT_BASIS,
    payment_document,
    payment_words,
)

__all__ = [
    "KIND_LABELS",
    "SOURCE_LABELS",
    "TYPE_LABELS",
    "WITHOUT_BASIS",
    "REFUND",
    "RESCHEDULED",
    "SHARE",
    "SEAT_RANK",
    "KNOCKED_OUT",
    "Explained",
    "LineFacts",
    "PaymentFacts",
    "payment_words",
    "payment_document",
    "Followup",
    "SettlementFacts",
    "PlayerFacts",
    "Step",
    "Part",
    "Amount",
    "Section",
    "Statement",
    "document",
    "build",
    "payout_parts",
]
