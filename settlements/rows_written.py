"""The events sealing rows written since a horizon (settlements.row_stamps): an incremental
verification reads them again, so a sealed row changed after the last checkpoint is found
whenever the event that sealed it is older, not only if the random sample draws that event.

Each kind of sealed row leads to the subject of the events that seal it: a ledger line or a
payout to its settlement, an entrant or a snapshot to its case, a release to the record it
releases, a confirmation to its batch's event, a history version to every event that sealed a
version of its record.
"""

from settlements.loose_versions import records_with_versions_since
from settlements.models import (
    CasePlayer,
    CompensationItem,
    Event,
    IcmValuation,
    IcmValue,
    JobItem,
    LedgerRelease,
    PaymentConfirmation,
    SettlementLine,
    SettlementPayout,
    Snapshot,
)
from settlements.row_stamps import written_since
from settlements.seals import RELEASE_LINK, SEALED_MODELS

# (rows, the subject type of the events sealing them, the path from a row to that subject).
ROWS_UNDER = (
    (SettlementLine, "settlement", "settlement_id"),
    (SettlementPayout, "settlement", "settlement_id"),
    (IcmValuation, "settlement", "settlement_id"),
    (IcmValue, "settlement", "valuation__settlement_id"),
    (CompensationItem, "compensation", "compensation_id"),
    (CasePlayer, "case", "case_id"),
    (Snapshot, "case", "case"),
    (JobItem, "job", "job_id"),
    *(
        (LedgerRelease, model._meta.model_name, f"{link}_id")
        for model, link in RELEASE_LINK.items()
    ),
    *((model, name, "pk") for name, model in SEALED_MODELS.items()),
)
_PART = 10_000


def sealing_events(since: int, *, upto: int) -> list[int]:
    """The numbers (up to ``upto``) of the events sealing a row written after ``since``."""
    subjects: dict[str, set[int]] = {}
    for model, subject_type, path in ROWS_UNDER:
        ids = _written(model, since).exclude(**{f"{path}__isnull": True}).values_list(path)
        subjects.setdefault(subject_type, set()).update(pk for (pk,) in ids)
    events = Event.objects.filter(seq__lte=upto)
    found: set[int] = set()
    for subject_type, ids in subjects.items():
        for part in _parts(sorted(ids)):
            chosen = events.filter(subject_type=subject_type, subject_id__in=part)
            found.update(chosen.values_list("seq", flat=True))
    batches = _written(PaymentConfirmation, since).values_list("event_id", flat=True)
    for part in _parts(sorted(set(batches))):
        found.update(events.filter(pk__in=part).values_list("seq", flat=True))
    labels = sorted(records_with_versions_since(since))
    for part in _parts(labels):
        sealing = events.filter(subject_facts__history__has_any_keys=part)
        found.update(sealing.values_list("seq", flat=True))
    return sorted(found)


def _written(model, since: int):
    return model.objects.filter(written_since(model, since)).order_by()


def _parts(values: list) -> list[list]:
    return [values[start : start + _PART] for start in range(0, len(values), _PART)]
