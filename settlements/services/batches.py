"""A job's batch of items: its rows locked up front, and what its items staged written at its
end (``services.staging`` says what is staged, and why that writes the record one item at a
time writes)."""

from collections.abc import Sequence

from settlements.models import Case, Job, JobItem, Settlement
from settlements.services.common import (
    hold_parents,
    locked_cases,
    locked_settlements,
    seal_facts,
    write_events,
    write_staged,
)
from settlements.services.payments import write_releases
from settlements.services.snapshots import share_incident
from settlements.services.staging import Batch


def lock_batch(job: Job, items: Sequence[JobItem], batch: Batch) -> list[JobItem]:
    """Lock the batch's rows up front in the one lock order (incidents shared, cases, then
    settlements), a statement each, and hand them to ``batch``: a step then takes its rows
    from there, and waits for nothing after the event chain's lock, which an approval earlier
    in the batch may have taken. The batch ends before the first item whose case an earlier
    one holds (it stays pending, for the next batch): each case and settlement is one item's.
    A batch of loads shares its incident, which none of them changes."""
    if job.kind == Job.Kind.UPLOAD and job.incident_id is not None:
        batch.hold([share_incident(job.incident_id)])
    keys = {item.pk: int(item.key) for item in items if item.key.isdigit()}
    of_settlements = job.kind in (Job.Kind.SUBMIT, Job.Kind.APPROVE)
    if of_settlements:
        rows = Settlement.objects.values_list("pk", "case_id", "case__incident_id")
    elif job.kind in (Job.Kind.PREPARE, Job.Kind.DECIDE):
        rows = Case.objects.values_list("pk", "pk", "incident_id")
    else:
        return list(items)
    found = {pk: (case, incident) for pk, case, incident in rows.filter(pk__in=keys.values())}
    taken, cases, incidents = [], set(), set()
    for item in items:
        case, incident = found.get(keys.get(item.pk), (None, None))
        if case in cases:
            break
        taken.append(item)
        if case is not None:
            cases.add(case)
            incidents.add(incident)
    hold_parents(incidents=incidents)
    # A batch of prepares parses every snapshot: their texts come with the cases.
    locked = locked_cases(sorted(cases), texts=job.kind == Job.Kind.PREPARE)
    batch.hold(locked.values())
    if of_settlements:
        ids = sorted(keys[item.pk] for item in taken if keys.get(item.pk) in found)
        batch.hold(locked_settlements(ids, locked).values())
    return taken


def write_batch(batch: Batch) -> None:
    """Write what the batch's items staged: the first versions of the records they created,
    the rows they changed with their versions (``common.write_staged``), the releases of the
    lines they approved, given their places in order, then their events, sealed and chained."""
    write_staged(batch.created, batch.updates)
    if batch.releases:
        write_releases(batch.releases)
    seal_facts(batch.events)
    write_events([held.event for held in batch.events])
