"""What one item of each kind of job does: one service call, as a person would make it.

``services.jobs`` runs these steps; they know nothing of leases, batches or workers.
"""

from collections.abc import Callable
from datetime import datetime

from settlements import audit_log, wording
from settlements.access import permissions
from settlements.errors import DomainError
from settlements.models import Case, Event, IcmValuation, Job, JobItem, Settlement
from settlements.services.decisions import decision_record
from settlements.services.icm import icm_batch_add
from settlements.services.settlements import (
    settlement_approve,
    settlement_prepare,
    settlement_submit,
)
from settlements.services.simulations import simulation_step
from settlements.services.snapshots import case_load_snapshot

# --- The steps: one service call per item ---------------------------------------------------
# Each hands its service a bare reference by id: the service takes the row the batch locked.


def _prepare(job: Job, item: JobItem) -> tuple[str, Case | None]:
    settlement = settlement_prepare(
        case=Case(pk=int(item.key)), actor=job.created_by, note=job.params.get("note", "")
    )
    return f"{settlement} prepared", settlement.case


def _submit(job: Job, item: JobItem) -> tuple[str, Case | None]:
    settlement = settlement_submit(settlement=Settlement(pk=int(item.key)), actor=job.created_by)
    return f"{settlement} submitted", settlement.case


def _approve(job: Job, item: JobItem) -> tuple[str, Case | None]:
    settlement = settlement_approve(
        settlement=Settlement(pk=int(item.key)),
        actor=job.created_by,
        reason=job.params.get("reason", ""),
    )
    return f"{settlement} approved", settlement.case


def _decide(job: Job, item: JobItem) -> tuple[str, Case | None]:
    reschedule_at = job.params.get("reschedule_at")
    decision = decision_record(
        case=Case(pk=int(item.key)),
        actor=job.created_by,
        option=job.params["option"],
        reason=job.params.get("reason", ""),
        reschedule_at=datetime.fromisoformat(reschedule_at) if reschedule_at else None,
    )
    return f"Decision recorded: {wording.option_label(decision.option)}", decision.case


def _upload(job: Job, item: JobItem) -> tuple[str, Case | None]:
    case = case_load_snapshot(
        actor=job.created_by, snapshot=bytes(item.payload or b""), incident=job.incident
    )
    return f"Case #{case.pk} opened for {case.tournament.operator_id}", case


# Events per item: the chain is verified in parts, so the job shows its progress.
VERIFY_EVENTS_PER_ITEM = 2000
# The last item: the running counts, which no event seals, counted afresh.
COUNTED_AFRESH = "counts"


def _verify(job: Job, item: JobItem) -> tuple[str, Case | None]:
    permissions.enforce(permissions.audit_verify(user=job.created_by))
    if item.key == COUNTED_AFRESH:
        if problem := audit_log.loose_rows():
            raise DomainError(f"{problem}.")
        return "The payment tallies and confirmations agree with what was sealed.", None
    first, last = map(int, item.key.split("-"))
    previous = audit_log.GENESIS
    if first > 1:
        previous = Event.objects.filter(seq=first - 1).values_list("hash", flat=True).first()
        if previous is None:
            raise DomainError(f"Event number {first - 1} is missing from the chain.")
    result = audit_log.verify(after=(first - 1, previous), upto=last)
    if not result.ok:
        raise DomainError(audit_log.problem_in_words(result.problem))
    if result.count != last:
        raise DomainError(f"The chain ends at event {result.count}, short of {last}.")
    return f"Events {first} to {last} verified.", None


def _simulate(job: Job, item: JobItem) -> tuple[str, Case | None]:
    return simulation_step(simulation_id=job.params["simulation"], case_id=int(item.key))


def _icm_batch(job: Job, item: JobItem) -> tuple[str, Case | None]:
    valuation_id, batch = map(int, item.key.split(":"))
    valuation = icm_batch_add(valuation_id=valuation_id, batch=batch, actor=job.created_by)
    done = valuation.status == IcmValuation.Status.DONE
    return ("Samples drawn; the figures are written" if done else "Samples drawn"), None


# Run several to a transaction: an outage's bulk work and a simulation's cases, short items
# (a lease and a commit of their own cost a simulated case of 500 entrants as much as its
# work). A verification's part or an ICM batch takes seconds, and shows its progress.
BATCHED = frozenset(
    {
        Job.Kind.PREPARE,
        Job.Kind.SUBMIT,
        Job.Kind.APPROVE,
        Job.Kind.DECIDE,
        Job.Kind.UPLOAD,
        Job.Kind.SIMULATE,
    }
)

STEPS: dict[str, Callable[[Job, JobItem], tuple[str, Case | None]]] = {
    Job.Kind.PREPARE: _prepare,
    Job.Kind.SUBMIT: _submit,
    Job.Kind.APPROVE: _approve,
    Job.Kind.DECIDE: _decide,
    Job.Kind.UPLOAD: _upload,
    Job.Kind.VERIFY: _verify,
    Job.Kind.ICM: _icm_batch,
    Job.Kind.SIMULATE: _simulate,
}
