"""Small builders on top of the services, for the service tests."""

from settlements import services
from settlements.models import (
    ApiToken,
    Case,
    CasePlayer,
    Compensation,
    CompensationItem,
    Decision,
    Event,
    Incident,
    PrizeWithdrawal,
    Settlement,
    SettlementLine,
    SettlementPayout,
    Snapshot,
    Tournament,
)

ALL_MODELS = (
    Tournament, Incident, Snapshot, Case, CasePlayer, Decision, Settlement, SettlementPayout,
    SettlementLine, Compensation, CompensationItem, PrizeWithdrawal, Event, ApiToken,
)  # fmt: skip


def row_counts() -> dict[str, int]:
    """Rows in every workflow table and every history table."""
    counts = {model.__name__: model.objects.count() for model in ALL_MODELS}
    for model in ALL_MODELS:
        history = getattr(model, "history", None)
        if history is not None:
            counts[f"history:{model.__name__}"] = history.count()
    return counts


def load(operator, snapshot_factory, **kwargs) -> Case:
    return services.case_load_snapshot(actor=operator, snapshot=snapshot_factory(**kwargs))


def submitted(operator, snapshot_factory, **kwargs) -> Settlement:
    """A regular middle-stage case (unless told otherwise) prepared and submitted."""
    case = load(operator, snapshot_factory, **kwargs)
    settlement = services.settlement_prepare(case=case, actor=operator)
    return services.settlement_submit(settlement=settlement, actor=operator)


def approved(operator, manager, snapshot_factory, **kwargs) -> Settlement:
    settlement = submitted(operator, snapshot_factory, **kwargs)
    return services.settlement_approve(settlement=settlement, actor=manager, reason="checked")


def event_types(**filters) -> list[str]:
    return list(Event.objects.filter(**filters).order_by("at", "id").values_list("type", flat=True))
