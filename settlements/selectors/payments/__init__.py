"""The payments reads, by what they answer: ``lines`` (the approved lines in the feed's order,
and the lines named by their idempotency keys), ``reconciliation`` (totals, the tallies, what
became of each line, paid exactly once) and ``queues`` (failed lines, overdue releases,
proposed re-issues, prizes taken back).

The public names are re-exported here and from ``settlements.selectors``.
"""

from settlements.selectors.payments.lines import (
    CHUNK_SIZE,
    LedgerLine,
    Release,
    approved_lines,
    last_position,
    line_numbers,
    lines_of,
    parse_key,
    releases_of,
)
from settlements.selectors.payments.queues import (
    COLLECTION_WORDS,
    FAILED_SORTS,
    REISSUE_SORTS,
    failed_lines,
    overdue_lines,
    overdue_releases,
    proposed_reissues,
    reissue_detail,
    withdrawals_collected,
)
from settlements.selectors.payments.reconciliation import (
    ExactlyOnce,
    LinePayment,
    Reconciliation,
    UnitTotal,
    exactly_once,
    line_outcome,
    reconciliation,
    sorted_totals,
    tallies_agree,
    with_payments,
)
from settlements.selectors.payments.states import (
    compensation_line_payments,
    player_totals,
    settlement_line_payments,
)

__all__ = [
    "CHUNK_SIZE",
    "Release",
    "LedgerLine",
    "approved_lines",
    "last_position",
    "lines_of",
    "line_numbers",
    "parse_key",
    "releases_of",
    "UnitTotal",
    "sorted_totals",
    "Reconciliation",
    "reconciliation",
    "tallies_agree",
    "LinePayment",
    "with_payments",
    "line_outcome",
    "settlement_line_payments",
    "compensation_line_payments",
    "player_totals",
    "ExactlyOnce",
    "exactly_once",
    "failed_lines",
    "overdue_releases",
    "overdue_lines",
    "proposed_reissues",
    "reissue_detail",
    "COLLECTION_WORDS",
    "FAILED_SORTS",
    "REISSUE_SORTS",
    "withdrawals_collected",
]
