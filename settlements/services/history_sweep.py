"""Sealing the history versions that no event sealed (settlements.loose_versions).

A service seals the versions of the records its event names; a version written any other way
(an administrator's edit, a migration, SQL sent behind the app's back) stays loose until this
seals it with one ``history_swept`` event, run every ``HISTORY_SWEEP_SECONDS`` by ``manage.py
seal_loose_versions --repeat``. From then on, changing or removing that version, or slipping
another one in before it, breaks the event's seal.
"""

from django.db import transaction

from settlements import audit_log, loose_versions
from settlements.models import Event
from settlements.services.common import record_event


@transaction.atomic
def history_sweep(*, actor=None, reason: str = "") -> Event | None:
    """Seal every record's versions where some version is loose, in one event naming how many
    records of each kind; None when none is. Recorded without a user as the actor when run by
    the server."""
    # Taken first: no event can seal a version between the look and the seal.
    audit_log.hold_chain()
    loose = loose_versions.loose_records()
    if not loose:
        return None
    records = [model(pk=pk) for model, pks in loose.items() for pk in pks]
    return record_event(
        Event.Type.HISTORY_SWEPT,
        actor=actor,
        reason=reason or "History versions written outside the services",
        sealed=records,
        data={"records": {model._meta.model_name: len(pks) for model, pks in loose.items()}},
    )
