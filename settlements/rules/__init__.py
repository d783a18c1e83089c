"""The settlement rules engine: RULES.md and SNAPSHOT.md as pure, exact Python.

No Django here (the standard library and msgspec only), so the rules can be read, tested and
benchmarked on their own, and the web app, the API and `manage.py settle` share one engine.
"""

from .basis import Basis
from .errors import InvalidInput, Problem
from .policy import DEFAULT_POLICY, POLICY_KEYS, Policy, PolicyKey, parse_policy
from .remedies import (
    Assessment,
    SplitTerms,
    assess,
    decision_options,
    remedy_for,
    settle,
    split_terms,
)
from .settlement import ExplanationTerms, Line, PayoutRow, Settlement, SettlementDocument
from .snapshot import (
    FreerollTournament,
    Player,
    PlayerV2,
    RegularTournament,
    SatelliteTournament,
    Snapshot,
    parse_snapshot,
)
from .split_result import Explanation, SplitSummary

# Bumped whenever a change to the engine could change an amount; stored with every settlement.
# 1.2.0: the rulebook keys of RULES.md §9 (ICM, fee refunds, overlay, bounties, seats as cash)
# and the snapshot's rulebook, start and late registration; the default rulebook pays as 1.1.1.
ENGINE_VERSION = "1.2.0"

__all__ = [
    "DEFAULT_POLICY",
    "POLICY_KEYS",
    "ENGINE_VERSION",
    "Assessment",
    "Basis",
    "Explanation",
    "ExplanationTerms",
    "FreerollTournament",
    "InvalidInput",
    "Line",
    "PayoutRow",
    "Player",
    "PlayerV2",
    "Policy",
    "PolicyKey",
    "Problem",
    "RegularTournament",
    "SatelliteTournament",
    "Settlement",
    "SettlementDocument",
    "Snapshot",
    "SplitSummary",
    "SplitTerms",
    "assess",
    "decision_options",
    "parse_policy",
    "parse_snapshot",
    "remedy_for",
    "settle",
    "split_terms",
]
