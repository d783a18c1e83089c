"""Small builders on top of the services, for the service tests."""

from datetime import timedelta

import pgtrigger
from django.utils import timezone

from settlements.access import roles
from settlements.models import (
    ApiToken,
    Case,
    CasePlayer,
    Compensation,
    CompensationItem,
    Decision,
    Event,
    Incident,
    Job,
    JobItem,
    PrizeWithdrawal,
    Settlement,
    SettlementLine,
    SettlementPayout,
    Snapshot,
    Tournament,
)
from settlements.selectors.payments.lines import approved_lines
from settlements.selectors.rulebooks import simulation_cases
from settlements.services import compensation as compensation_services
from settlements.services import payments, rulebooks
from settlements.services import reissues as reissue_services
from settlements.services import settlements as settlement_services
from settlements.services.decisions import decision_record
from settlements.services.individual_cases import prize_withdrawal_decide
from settlements.services.payments import ConfirmationEntry
from settlements.services.profiles import profile_set_time_zone
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create

ALL_MODELS = (
    Tournament,
    Incident,
    Snapshot,
    Case,
    CasePlayer,
    Decision,
    Settlement,
    SettlementPayout,
    SettlementLine,
    Compensation,
    CompensationItem,
    PrizeWithdrawal,
    Event,
    ApiToken,
)


def row_counts() -> dict[str, int]:
    """Rows in every workflow table and every history table."""
    counts = {model.__name__: model.objects.count() for model in ALL_MODELS}
    for model in ALL_MODELS:
        history = getattr(model, "history", None)
        if history is not None:
            counts[f"history:{model.__name__}"] = history.count()
    return counts


def under_rulebook(key: str, proposer, approver, **parameters) -> dict:
    """The snapshot fields of a tournament started under a new rulebook ``key`` with
    ``parameters`` (approved, in force from a week on)."""
    effective = timezone.now() + timedelta(days=7)
    version = rulebooks.rulebook_version_propose(
        key=key,
        parameters=parameters,
        text=f"The {key} rules.",
        effective_from=effective,
        actor=proposer,
        reason="published policy",
    )
    rulebooks.rulebook_version_approve(version=version, actor=approver, reason="checked")
    starts = (effective + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"rulebook": key, "starts_at": starts}


def load(operator, snapshot_factory, **kwargs) -> Case:
    return case_load_snapshot(actor=operator, snapshot=snapshot_factory(**kwargs))


def submitted(operator, snapshot_factory, **kwargs) -> Settlement:
    """A regular middle-stage case (unless told otherwise) prepared and submitted."""
    case = load(operator, snapshot_factory, **kwargs)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    return settlement_services.settlement_submit(settlement=settlement, actor=operator)


def approved(operator, manager, snapshot_factory, **kwargs) -> Settlement:
    settlement = submitted(operator, snapshot_factory, **kwargs)
    return settlement_services.settlement_approve(
        settlement=settlement, actor=manager, reason="checked"
    )


def event_types(**filters) -> list[str]:
    """The workflow's events in order; the fixtures' grants of roles (their own events) aside."""
    events = Event.objects.filter(**filters).exclude(type=Event.Type.USER_ACCESS_CHANGED)
    return list(events.order_by("at", "id").values_list("type", flat=True))


def every_record(users, snapshot_factory) -> dict:
    """An approved settlement with approved compensation, a decision, a prize withdrawal, an
    API token and an approved re-issue: a row in every audited table and history table."""
    operator, manager = users["operator"], users["tournament_manager"]
    settlement = approved(operator, manager, snapshot_factory)
    case = settlement.case
    compensation = compensation_services.compensation_propose(
        case=case,
        actor=operator,
        reason="lag spike",
        entries=[compensation_services.CompensationEntry(player="p000001", amount=500)],
    )
    compensation = compensation_services.compensation_approve(
        compensation=compensation, actor=manager, reason="fair"
    )
    prize_withdrawal_decide(
        case=case,
        actor=manager,
        player="p000002",
        prize="seat",
        outcome="leave",
        reason="given in good faith",
    )
    other = load(operator, snapshot_factory, type="satellite", stage="middle")
    decision_record(
        case=other, actor=users["marketing_manager"], option="chip_equity", reason="fair"
    )
    api_token_create(user=operator, name="game server", actor=operator)
    profile_set_time_zone(user=operator, actor=operator, time_zone="Europe/Malta")
    # A line the cashier could not pay, paid again by an approved re-issue.
    line = next(iter(approved_lines(None)))
    failed = ConfirmationEntry(
        idempotency_key=line.key,
        status="failed",
        external_reference="account closed",
        at=timezone.now(),
        amount=line.amount,
    )
    payments.payment_confirm(actor=users[roles.CASHIER], confirmations=[failed])
    reissue = reissue_services.reissue_propose(
        actor=operator, idempotency_key=line.key, reason="new account"
    )
    reissue = reissue_services.reissue_approve(reissue=reissue, actor=users["second_manager"])
    rulebook_version = rulebooks.rulebook_version_propose(
        key="ontario",
        parameters={"pre_pct": 10},
        text="Fees are refunded first.",
        effective_from=timezone.now() + timedelta(days=30),
        actor=manager,
        reason="new market",
    )
    rulebooks.simulation_start(
        version=rulebook_version,
        actor=manager,
        cases=simulation_cases(),
        selection={},
    )
    rulebooks.rulebook_version_approve(
        version=rulebook_version, actor=users["second_manager"], reason="simulated"
    )
    # Background work is not a business record; a row is enough for the admin's pages.
    job = Job.objects.create(kind=Job.Kind.PREPARE, target=f"case:{other.pk}", created_by=operator)
    JobItem.objects.create(job=job, position=0, key=str(other.pk), label="case", case=other)
    assert all(row_counts().values()), row_counts()
    return {"settlement": settlement, "compensation": compensation, "reissue": reissue}


def as_before_the_figures_were_kept(settlement: Settlement) -> None:
    """What migration 0013 left on a settlement prepared earlier: no basis, and payouts without
    their weights and places by chips. (The test's role owns the tables, so it may lift the
    guards; the app's role may not.)"""
    with pgtrigger.ignore(
        "settlements.Settlement:final_when_approved", "settlements.SettlementPayout:write_once"
    ):
        Settlement.objects.filter(pk=settlement.pk).update(basis={})
        SettlementPayout.objects.filter(settlement=settlement).update(
            weight="", place_first=None, place_last=None
        )
