"""Rows no event accounts for: records, ledger lines, releases and confirmations written
behind the app's back, which no event's seal can name since no event names them
(``audit_log.loose_rows``; memberships, flags and tokens are ``access_record``'s)."""

from django.db.models import Exists, OuterRef, Q

from settlements.models import (
    Event,
    LedgerRelease,
    PaymentConfirmation,
    RulebookVersion,
    SettlementLine,
    Tournament,
)
from settlements.row_stamps import written_since
from settlements.seals import RELEASE_LINK, SEALED_MODELS

# Records no event names, written by a migration rather than the desk: the rulebook versions
# made from the old policy settings, approved by nobody. The database lets only the tables'
# owner write an approved version without an approver (triggers.FollowsWorkflow).
BEFORE_EVENTS = {RulebookVersion: Q(status="approved", approved_by__isnull=True)}


def rows_outside_events(since: int | None = None) -> str:
    """The first record, ledger line or release that no event accounts for (written behind
    the app's back), named by table and key; "" when every one is. A record is accounted for
    by an event naming it, a line by one naming its settlement, a release by its record's
    approval event. ``since``: only rows written after that horizon (row_stamps)."""

    def recent(rows):
        return rows if since is None else rows.filter(written_since(rows.model, since))

    def named(subject_type: str, event_type: str | None = None, ref: str = "pk"):
        events = Event.objects.filter(subject_type=subject_type, subject_id=OuterRef(ref))
        return Exists(events.filter(type=event_type) if event_type else events)

    def first(rows) -> int | None:
        return rows.order_by("pk").values_list("pk", flat=True).first()

    for name, model in SEALED_MODELS.items():
        rows = recent(model.objects.filter(~named(name)))
        if model in BEFORE_EVENTS:
            rows = rows.exclude(BEFORE_EVENTS[model])
        if model is not Tournament and (pk := first(rows)):
            return f"{model._meta.db_table} row {pk}"
    lines = recent(SettlementLine.objects.filter(~named("settlement", ref="settlement_id")))
    if (pk := first(lines)) is not None:
        return f"{SettlementLine._meta.db_table} row {pk}"
    for model, link in RELEASE_LINK.items():
        releases = recent(
            LedgerRelease.objects.filter(
                ~named(model._meta.model_name, f"{link}_approved", ref=f"{link}_id"),
                **{f"{link}__isnull": False},
            )
        )
        if (pk := first(releases)) is not None:
            return f"{LedgerRelease._meta.db_table} row {pk}"
    return ""


def confirmations_outside_batches(since: int | None = None) -> int | None:
    """A confirmation row under no batch event (written behind the app's back), if any;
    ``since``: among those written after that horizon."""
    batches = Event.objects.filter(type=Event.Type.PAYMENTS_CONFIRMED).values("pk")
    confirmations = PaymentConfirmation.objects.all()
    if since is not None:
        confirmations = confirmations.filter(written_since(PaymentConfirmation, since))
    return (
        confirmations.exclude(event_id__in=batches)
        .order_by("pk")
        .values_list("pk", flat=True)
        .first()
    )
