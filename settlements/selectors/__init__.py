"""Reads shared by the pages, the API and the admin, with the joins that keep query counts flat;
one module per part of the business, the previews and the dashboard apart.

Nothing here writes. Querysets are returned unevaluated where a page paginates them. The
public names are re-exported here, so callers write ``selectors.case_detail`` whichever module
holds it.
"""

from settlements.selectors.audit import (
    HISTORY_MODELS,
    FieldChange,
    event_list,
    history_changes,
    history_entries,
    history_record,
    incident_timeline,
)
from settlements.selectors.cases import (
    case_current_settlement,
    case_detail,
    case_entrants,
    case_list,
    case_status_counts,
    crash_case_in_force,
    decision_invitees,
    incident_detail,
    incident_list,
)
from settlements.selectors.common import BIG_TOURNAMENT_FIELDS
from settlements.selectors.compensation import (
    compensation_approved_ids,
    compensation_detail,
    compensation_list,
    prize_withdrawal_list,
)
from settlements.selectors.dashboard import (
    DASHBOARD_CACHE_SECONDS,
    DASHBOARD_INCIDENTS_PER_PAGE,
    DASHBOARD_QUEUES,
    DASHBOARD_WAITING_SHOWN,
    DashboardSummary,
    WaitingFor,
    dashboard_summary,
    in_workflow_order,
    waiting_for,
)
from settlements.selectors.previews import (
    PREVIEW_CACHE_SECONDS,
    DecisionPreview,
    PayoutExample,
    decision_previews,
    payout_worth,
    settlement_chart_points,
    settlement_payout_curve,
)
from settlements.selectors.settlements import (
    Totals,
    settlement_adjustments,
    settlement_detail,
    settlement_lines,
    settlement_payout,
    settlement_payouts,
    settlement_totals,
    settlements_as_dicts,
)

__all__ = [
    "BIG_TOURNAMENT_FIELDS",
    "incident_list",
    "incident_detail",
    "case_list",
    "case_status_counts",
    "case_detail",
    "crash_case_in_force",
    "case_current_settlement",
    "case_entrants",
    "decision_invitees",
    "settlement_detail",
    "settlement_payouts",
    "settlement_payout",
    "settlement_lines",
    "Totals",
    "settlement_totals",
    "settlements_as_dicts",
    "settlement_adjustments",
    "PayoutExample",
    "DecisionPreview",
    "PREVIEW_CACHE_SECONDS",
    "decision_previews",
    "payout_worth",
    "settlement_payout_curve",
    "settlement_chart_points",
    "WaitingFor",
    "waiting_for",
    "DASHBOARD_INCIDENTS_PER_PAGE",
    "DASHBOARD_WAITING_SHOWN",
    "DASHBOARD_CACHE_SECONDS",
    "in_workflow_order",
    "DASHBOARD_QUEUES",
    "DashboardSummary",
    "dashboard_summary",
    "compensation_list",
    "compensation_approved_ids",
    "compensation_detail",
    "prize_withdrawal_list",
    "event_list",
    "incident_timeline",
    "HISTORY_MODELS",
    "history_entries",
    "history_record",
    "FieldChange",
    "history_changes",
]
