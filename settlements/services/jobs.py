"""Background jobs: long or bulk work cut into steps, each step one service call.

A job goes through its items in order. Each step runs the same service a person would run
for that one item (so the same roles, state checks, locks and business events apply). The
items of bulk work go several to a transaction (a batch, ``job_step``), each step in a
savepoint of its own, with the batch's outcomes and business events written at its end: a
worker killed mid-batch leaves the batch undone and its items pending, never half-written. A
refusal of one item (already approved, the user's own work, a bad snapshot) is that item's
outcome, shown with the rule's words; an unexpected error in one item fails that item alone
(its savepoint, events included, rolled back), with a message that gives nothing of the error
away (its traceback goes to the log); either way the others go on.

Running a job again (``job_retry`` after a failure, or the recovery of a job whose worker
died) only takes the items still pending or failed, so nothing is done twice.

The worker's task (``settlements.tasks.run_job``) runs a job with the services here:
``job_begin``, then ``job_work`` (``job_step`` until no item is left), then ``job_finish``
(``job_stop`` when an error stops it).

A database that goes away for a moment (a restart, a failover, a dropped or terminated
connection, a deadlock) stops neither an item nor the job: the batch is rolled back whole, the
connection is opened again and it is tried again after a growing pause. An item counts as
failed only when it keeps failing so while the database answers; a database that stays out of
reach ends the task without touching the job, whose silent heartbeat then hands it to the
recovery of lost jobs, so it is never left stopped by it.

The services do not know the task: queuing a run sends ``job_queued``, which the tasks module
answers by queuing the run's tasks.
"""

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.core.cache import cache
from django.db import (
    IntegrityError,
    transaction,
)
from django.db.models import Count, Q
from django.dispatch import Signal, receiver
from django.utils import timezone

from settlements import audit_log, wording
from settlements.access import permissions, roles
from settlements.errors import DomainError, Duplicate, NotAllowed
from settlements.models import Case, Event, IcmValuation, Incident, Job, JobItem, Settlement
from settlements.rules import InvalidInput
from settlements.services.batches import lock_batch, write_batch
from settlements.services.common import insert_bound_rows, record_event, update_rows
from settlements.services.decisions import decision_record
from settlements.services.icm import batch_labels, icm_batch_add, valuation_started
from settlements.services.job_retries import (
    TRANSIENT,
    JobInterrupted,
    StepInterrupted,
    give_up_item,
    pause_before_retry,
    retry_transient,
)
from settlements.services.settlements import (
    settlement_approve,
    settlement_prepare,
    settlement_submit,
)
from settlements.services.simulations import simulation_step, simulation_summarise
from settlements.services.snapshots import case_load_snapshot
from settlements.services.staging import Batch

log = logging.getLogger("crashdesk.jobs")

# Sent (job=, runs=) in the transaction that queues a new run of a job, carrying its new
# ``run_token``: its receiver queues ``runs`` tasks that run it, and answers whether they have
# run already.
job_queued = Signal()

# What a person is shown for an error that is no refusal; its traceback is in the log.
UNEXPECTED = (
    "An unexpected error, logged for the administrators; running it again may help once they "
    "have looked into it."
)

# Who may start each kind of job (each step's service checks the role again).
STARTERS = {
    Job.Kind.PREPARE: (roles.OPERATOR,),
    Job.Kind.SUBMIT: (roles.OPERATOR,),
    Job.Kind.APPROVE: (roles.TOURNAMENT_MANAGER,),
    Job.Kind.DECIDE: (roles.MARKETING_MANAGER,),
    Job.Kind.UPLOAD: (roles.OPERATOR,),
    Job.Kind.VERIFY: (roles.AUDITOR,),
    # Started by the prepare of a settlement whose field is sampled (services.icm).
    Job.Kind.ICM: (roles.OPERATOR,),
    Job.Kind.SIMULATE: (roles.TOURNAMENT_MANAGER,),
}


@dataclass(frozen=True)
class NewItem:
    key: str
    label: str
    payload: bytes | None = None
    # Refused before the job began (e.g. a file outside an archive's bounds): shown, not run.
    problem: str = ""


@dataclass(frozen=True)
class Progress:
    total: int
    done: int
    skipped: int
    failed: int
    # Items a run again could still do: not reached yet, or failed by a fault of ours. A file
    # refused or a record the rules refuse would fail the same way again.
    retryable: int = 0

    @property
    def finished(self) -> int:
        return self.done + self.skipped + self.failed

    @property
    def percent(self) -> int:
        return 100 if not self.total else self.finished * 100 // self.total


@transaction.atomic
def job_start(
    *,
    kind: str,
    actor,
    target: str,
    items: Sequence[NewItem],
    incident: Incident | None = None,
    params: dict | None = None,
) -> Job:
    """Queue a job over ``items``; refused while the same work on ``target`` is active."""
    roles.require_role(actor, *STARTERS[kind], action=Job.Kind(kind).label.lower())
    if not items:
        raise DomainError("There is nothing to do: no item is in the state this work needs.")
    job = Job(
        kind=kind,
        target=target,
        incident=incident,
        params=params or {},
        created_by=actor,
        run_token=_new_run_token(),
    )
    try:
        with transaction.atomic():
            job.save()
    except IntegrityError:
        running = Job.objects.filter(kind=kind, target=target, status__in=Job.ACTIVE).first()
        raise Duplicate(
            "This work is already under way; follow it on its progress page.", existing=running
        ) from None
    insert_bound_rows(
        JobItem,
        ("job", "position", "key", "label", "payload", "status", "message"),
        [
            (
                job.pk,
                position,
                item.key,
                item.label,
                item.payload,
                JobItem.Status.FAILED if item.problem else JobItem.Status.PENDING,
                item.problem,
            )
            for position, item in enumerate(items, start=1)
        ],
    )
    _queue(job, items=len(items))
    return job


@transaction.atomic
def job_retry(*, job: Job, actor) -> Job:
    """Run a stopped job again over its pending and failed items."""
    job = Job.objects.select_for_update().get(pk=job.pk)
    if actor.pk != job.created_by_id:
        raise NotAllowed("Only the person who started this work may run it again.")
    if job.is_active:
        raise DomainError("This work is still under way.")
    again = job.items.filter(status__in=[JobItem.Status.PENDING, JobItem.Status.FAILED])
    if not again.exists():
        raise DomainError("Every item of this work is done; there is nothing to run again.")
    pending = again.update(status=JobItem.Status.PENDING, message="")
    job.status, job.error, job.finished_at = Job.Status.QUEUED, "", None
    job.run_token = _new_run_token()
    try:
        with transaction.atomic():
            job.save()
    except IntegrityError:
        raise Duplicate("The same work was started again meanwhile.") from None
    _queue(job, items=pending)
    return job


def job_begin(*, job_id: int, token: str) -> Job | None:
    """Mark the job running for a task of its current run (``token``); None when the task is
    superseded (a retry or a recovery queued a new run) or the job is over."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.run_token != token or not job.is_active:
            return None
        job.heartbeat_at = timezone.now()
        if job.status == Job.Status.QUEUED:
            job.status, job.attempts = Job.Status.RUNNING, job.attempts + 1
            job.started_at = job.heartbeat_at
        job.save(update_fields=["status", "attempts", "started_at", "heartbeat_at"])
    return job


def job_step(*, job: Job) -> bool:
    """Take the next pending items no other task holds (SKIP LOCKED) and run their steps, in
    one transaction with their outcomes; False when none is left to take. A transient database
    error rolls the batch back whole and raises ``StepInterrupted``, its items still pending."""
    item = None
    try:
        with transaction.atomic():
            items = _take_batch(job)
            if not items:
                return False
            batch = Batch()
            items = lock_batch(job, items, batch)
            for item in items:
                _run_step(job, item, batch)
            item = None
            write_batch(batch)
            _save_outcomes(items)
    except TRANSIENT as error:
        raise StepInterrupted(item.pk if item else None) from error
    return True


def _take_batch(job: Job) -> list[JobItem]:
    """The next pending items, locked: at most each task's share of the job's items, and at
    most JOB_BATCH_ITEMS (an item's work is unseen on the progress page until its batch
    commits). A share of the whole job, not of what is left: what a batch costs beyond its
    items is paid once a batch, and batches shrinking to one item at the end paid it for each."""
    items = JobItem.objects.filter(job_id=job.pk)
    pending = items.filter(status=JobItem.Status.PENDING)
    size = 1
    if job.kind in BATCHED:
        share = -(-items.count() // max(1, settings.JOB_WORKERS_PER_JOB))
        size = max(1, min(settings.JOB_BATCH_ITEMS, share))
    return list(pending.select_for_update(skip_locked=True).order_by("position")[:size])


def _run_step(job: Job, item: JobItem, batch: Batch) -> None:
    """Run the item's step, setting its outcome on it; what it wrote and recorded is staged on
    ``batch`` (nothing when it failed)."""
    try:
        # A savepoint: a step that fails leaves nothing behind, nor its staged writes and
        # events, and its item, still locked, is marked failed in the same transaction.
        with transaction.atomic(), batch.item():
            message, case = STEPS[job.kind](job, item)
    except TRANSIENT:
        # The database's failure, not the item's: the whole batch is tried again.
        raise
    except (DomainError, InvalidInput) as refusal:
        # Refused by the rules: that item's outcome, not the job's failure.
        status = (
            JobItem.Status.SKIPPED if isinstance(refusal, NotAllowed) else JobItem.Status.FAILED
        )
        _set_outcome(item, status, _why(refusal), None)
    except (Case.DoesNotExist, Settlement.DoesNotExist):
        _set_outcome(item, JobItem.Status.FAILED, "It no longer exists.", None)
    except Exception:
        # A fault of ours, not a refusal: the details go to the log (never to the page)
        # and the other items still run.
        log.exception("job %s: item %s failed unexpectedly", job.pk, item.pk)
        _set_outcome(item, JobItem.Status.FAILED, UNEXPECTED, None)
    else:
        _set_outcome(item, JobItem.Status.DONE, message, case)


def job_work(*, job: Job) -> None:
    """Run the job's steps until no item is left to take, riding out transient database errors.

    An item whose step keeps failing so (JOB_RETRIES times, the database answering) is marked
    failed and the others go on; errors with no item in hand (the database unreachable) raise
    ``JobInterrupted`` once as many retries in a row have failed.
    """
    tries: dict[int | None, int] = {}
    while True:
        try:
            if not job_step(job=job):
                return
            tries.pop(None, None)
        except StepInterrupted as interrupted:
            attempt = tries[interrupted.item_id] = tries.get(interrupted.item_id, 0) + 1
            log.warning(
                "job %s: item %s interrupted by the database (attempt %s): %s",
                job.pk, interrupted.item_id, attempt, interrupted.__cause__,
            )  # fmt: skip
            if attempt > settings.JOB_RETRIES:
                if interrupted.item_id is None:
                    raise JobInterrupted(str(interrupted.__cause__)) from interrupted
                retry_transient(partial(give_up_item, interrupted.item_id))
                continue
            pause_before_retry(attempt, interrupted)


def job_stop(*, job: Job, error: Exception) -> None:
    """Mark the job failed by an error that stopped its task (called while handling it)."""
    log.exception("job %s stopped", job.pk)
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.FAILED, error=_why(error), finished_at=timezone.now()
    )


def job_finish(*, job_id: int) -> Progress:
    """Mark the job done once no item is pending; items still pending are held by another
    task of the job, which will close it. Returns where the job stands."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if (
            job.status == Job.Status.RUNNING
            and not job.items.filter(status=JobItem.Status.PENDING).exists()
        ):
            job.status, job.finished_at = Job.Status.DONE, timezone.now()
            job.save(update_fields=["status", "finished_at"])
            if job.kind == Job.Kind.VERIFY:
                audit_verification_record(job)
            elif job.kind == Job.Kind.SIMULATE:
                simulation_summarise(simulation_id=job.params["simulation"])
    return job_progress(job)


def job_recover_stale(*, now=None) -> list[int]:
    """Queue again the jobs whose worker went silent (killed, or its machine lost).

    Any worker may call it: the rows are locked with SKIP LOCKED, so two workers sweeping
    together recover each job once.
    """
    now = now or timezone.now()
    silent_since = now - timedelta(seconds=settings.JOB_STALE_SECONDS)
    recovered = []
    with transaction.atomic():
        stale = Job.objects.select_for_update(skip_locked=True).filter(
            status=Job.Status.RUNNING, heartbeat_at__lt=silent_since
        )
        for job in stale:
            _forget_task(job.run_token)
            job.status, job.run_token = Job.Status.QUEUED, _new_run_token()
            job.save(update_fields=["status", "run_token"])
            _queue(job, items=job.items.filter(status=JobItem.Status.PENDING).count())
            recovered.append(job.pk)
    for pk in recovered:
        log.warning("job %s lost its worker; queued again", pk)
    return recovered


def job_progress(job: Job) -> Progress:
    counts = job.items.aggregate(
        total=Count("pk"),
        done=Count("pk", filter=Q(status=JobItem.Status.DONE)),
        skipped=Count("pk", filter=Q(status=JobItem.Status.SKIPPED)),
        failed=Count("pk", filter=Q(status=JobItem.Status.FAILED)),
        retryable=Count(
            "pk",
            filter=Q(status=JobItem.Status.PENDING)
            | Q(status=JobItem.Status.FAILED, message=UNEXPECTED),
        ),
    )
    return Progress(**counts)


def case_being_prepared(case: Case) -> Job | None:
    """The active job that will prepare ``case``, if one is under way."""
    return Job.objects.filter(
        kind=Job.Kind.PREPARE,
        status__in=Job.ACTIVE,
        items__key=str(case.pk),
        items__status=JobItem.Status.PENDING,
    ).first()


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


# --- The auditor's verification of the whole event log ---------------------------------------

# Events per item: the chain is verified in parts, so the job shows its progress.
VERIFY_EVENTS_PER_ITEM = 2000
# The last item: the running counts, which no event seals, counted afresh.
COUNTED_AFRESH = "counts"


def audit_verification_start(*, actor) -> Job:
    """Queue a verification of the whole chain as it stands now, and of the payment tallies;
    its outcome is recorded as an event when the last part is done."""
    permissions.enforce(permissions.audit_verify(user=actor))
    count, head = audit_log.head()
    items = [
        NewItem(key=f"{first}-{last}", label=f"Events {first} to {last}")
        for first in range(1, count + 1, VERIFY_EVENTS_PER_ITEM)
        for last in [min(first + VERIFY_EVENTS_PER_ITEM - 1, count)]
    ]
    items.append(NewItem(key=COUNTED_AFRESH, label="Payment tallies and confirmations"))
    return job_start(
        kind=Job.Kind.VERIFY,
        actor=actor,
        target="event-log",
        items=items,
        params={"events": count, "head": head},
    )


def audit_verification_record(job: Job) -> None:
    """The verification's outcome as an event (inside ``job_finish``, once): verified when
    every part was, and the head it started from is still the chain's."""
    events, head = job.params["events"], job.params["head"]
    unverified = job.items.exclude(status=JobItem.Status.DONE).order_by("position").first()
    now = Event.objects.filter(seq=events).values_list("hash", flat=True).first()
    if unverified is not None:
        problem = f"{unverified.label}: {unverified.message}"
    elif events and now != head:
        problem = f"Event number {events} changed while the chain was verified."
    else:
        problem = ""
    record_event(
        Event.Type.AUDIT_VERIFIED,
        actor=job.created_by,
        data={"events": events, "head": head, "verified": not problem, "problem": problem,
              "job": job.pk},
    )  # fmt: skip
    # The history page's status goes on from this head rather than verify the chain again.
    result = audit_log.Verification(count=events, head=head, problem=problem)
    transaction.on_commit(lambda: audit_log.remember(result, cache=cache))


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
        raise DomainError(result.problem)
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


@receiver(valuation_started)
def _start_icm_job(sender, *, valuation: IcmValuation, actor, **kwargs) -> None:
    """Start sampling a valuation in the background, in the prepare's transaction. Not listed
    with the incident's jobs: nobody started it by hand, and the review page links to it."""
    job_start(
        kind=Job.Kind.ICM,
        actor=actor,
        target=f"icm:{valuation.pk}",
        items=[
            NewItem(key=f"{valuation.pk}:{batch}", label=label)
            for batch, label in batch_labels(valuation)
        ],
    )


# Run several to a transaction: an outage's bulk work, short items. A verification's part or
# an ICM batch takes seconds, and shows its progress.
BATCHED = frozenset(
    {Job.Kind.PREPARE, Job.Kind.SUBMIT, Job.Kind.APPROVE, Job.Kind.DECIDE, Job.Kind.UPLOAD}
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


def _set_outcome(item: JobItem, status: str, message: str, case: Case | None) -> None:
    item.status, item.message = status, message
    if case is not None:
        item.case = case


def _save_outcomes(items: Sequence[JobItem]) -> None:
    """Write the batch's outcomes, a statement for all; a loaded file's bytes are dropped."""
    update_rows(JobItem, items, ("status", "message", "case"))
    loaded = [i.pk for i in items if i.status == JobItem.Status.DONE and i.payload is not None]
    JobItem.objects.filter(pk__in=loaded).update(payload=None)  # no query when none was loaded


def _why(error: Exception) -> str:
    if isinstance(error, InvalidInput):
        return "; ".join(problem.described for problem in error.problems)
    if isinstance(error, DomainError):
        return error.message
    return UNEXPECTED


def _new_run_token() -> str:
    """The token of a new run of a job, which its tasks carry: a task of an earlier run (a
    worker thought lost that wakes up) finds another token and does nothing."""
    return uuid.uuid4().hex


def _queue(job: Job, *, items: int) -> None:
    """Queue the tasks of the job's new run (its ``run_token`` saved), as many as workers may
    share its ``items``, in the caller's transaction: with the database backend they commit or
    roll back with the job row (settlements.tasks, through ``job_queued``). The immediate
    backend (tests) runs them here; then the job is read again, to show what they did."""
    runs = max(1, min(settings.JOB_WORKERS_PER_JOB, items))
    answers = job_queued.send(sender=Job, job=job, runs=runs)
    if any(ran for _, ran in answers):
        job.refresh_from_db()


def _forget_task(token: str) -> None:
    """Mark the lost worker's task rows failed, so the task list does not show them running."""
    if not token or "django_tasks_db" not in settings.INSTALLED_APPS:
        return
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.filter(status="RUNNING", args_kwargs__kwargs__token=token).update(
        status="FAILED",
        finished_at=timezone.now(),
        exception_class_path="settlements.jobs.WorkerLost",
        traceback="The worker stopped answering; the job was queued again.",
    )
