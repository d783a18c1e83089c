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

Who runs what is settled by item leases, not by threads: a worker leases the next pending
items (``job_claim``, SKIP LOCKED, committed at once) for JOB_LEASE_SECONDS, then runs them in
a transaction that locks their rows and takes only those still pending, so an item is done
once whoever runs it. Items whose lease ran out (their worker killed, frozen, its machine
lost, or the database failed under the batch) are leased again by any worker; an item leased
JOB_ITEM_ATTEMPTS times without an outcome fails, saying why. A job is shared by several
tasks of the task library, and each lease makes sure a task of the job is queued, deferred to
the lease's end when none waits: if every worker running the job is lost, that task takes
their items over, and the job still ends.

Running a job again (``job_retry`` after a failure) only takes the items still pending or
failed, so nothing is done twice.

The worker's task (``settlements.tasks.run_job``) runs a job with the services here:
``job_begin``, then ``job_work`` (``job_claim`` and ``job_step`` until no item is left), then
``job_finish`` (``job_stop`` when an error stops it).

The services do not know the task: they send ``job_queued``, which the tasks module answers
by queuing the job's tasks.
"""

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.db import (
    IntegrityError,
    InterfaceError,
    OperationalError,
    close_old_connections,
    connection,
    transaction,
)
from django.db.models import Count, F, Min, Q
from django.dispatch import Signal, receiver
from django.utils import timezone

from settlements import audit_log, checkpoints, job_outcomes
from settlements.access import permissions, roles
from settlements.errors import DomainError, Duplicate, NotAllowed
from settlements.models import Case, Event, IcmValuation, Incident, Job, JobItem, Settlement
from settlements.rules import InvalidInput
from settlements.services.batches import lock_batch, write_batch
from settlements.services.checkpoints import checkpoint_record
from settlements.services.common import insert_bound_rows, record_event, update_rows
from settlements.services.icm import batch_labels, valuation_started
from settlements.services.job_steps import BATCHED, COUNTED_AFRESH, STEPS, VERIFY_EVENTS_PER_ITEM
from settlements.services.simulations import simulation_summarise
from settlements.services.staging import Batch

log = logging.getLogger("crashdesk.jobs")

# Sent (job=, runs=, after=, unless_waiting=) to queue ``runs`` tasks of the job in the
# sender's transaction, deferred to ``after`` if given, and none when ``unless_waiting`` and a
# task of the job waits already. Its receiver answers whether they have run already (the
# immediate backend, which defers nothing).
job_queued = Signal()

# Set by the worker's SIGTERM (run_worker): a task stops between batches, its job handed on.
stopping = threading.Event()

# Errors that say the database, not the item, failed: a connection lost or refused, a deadlock,
# a statement cancelled by a time-out (psycopg raises these as OperationalError), and a
# connection already closed (InterfaceError).
TRANSIENT = (OperationalError, InterfaceError)

# What ``job_work`` ran into: every item taken, the worker stopping, the database gone.
FINISHED, STOPPING, INTERRUPTED = "finished", "stopping", "interrupted"

# What a person is shown for an error that is no refusal; its traceback is in the log.
UNEXPECTED = (
    "An unexpected error, logged for the administrators; running it again may help once they "
    "have looked into it."
)

# What a person is shown for an item whose every lease ended without an outcome.
WORN_OUT = (
    "Tried {attempts} times without an outcome: each time its worker was lost or the database "
    "failed under it. Running the work again may do it once the workers are sound."
)

# Who may start each kind of job (each step's service checks the role again).
STARTERS = {
    Job.Kind.PREPARE: permissions.SETTLEMENT_PREPARERS,
    Job.Kind.SUBMIT: permissions.SETTLEMENT_SUBMITTERS,
    Job.Kind.APPROVE: permissions.APPROVERS,
    Job.Kind.DECIDE: permissions.DECISION_MAKERS,
    Job.Kind.UPLOAD: permissions.SNAPSHOT_LOADERS,
    Job.Kind.VERIFY: permissions.HISTORY_READERS,
    # Started by the prepare of a settlement whose field is sampled (services.icm).
    Job.Kind.ICM: permissions.SETTLEMENT_PREPARERS,
    Job.Kind.SIMULATE: permissions.RULEBOOK_WRITERS,
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


def _step_up(kind: str, actor) -> None:
    """A bulk approval asks for the second factor when it is started or run again; its items
    are then approved in the background in the starter's name (``_approve``)."""
    if kind == Job.Kind.APPROVE:
        permissions.enforce(permissions.step_up(user=actor, action="approve settlements"))


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
    _step_up(kind, actor)
    if not items:
        raise DomainError("There is nothing to do: no item is in the state this work needs.")
    job = Job(
        kind=kind,
        target=target,
        incident=incident,
        params=params or {},
        created_by=actor,
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
        ("job", "position", "key", "label", "payload", "status", "message", "attempts"),
        [
            (
                job.pk,
                position,
                item.key,
                item.label,
                item.payload,
                JobItem.Status.FAILED if item.problem else JobItem.Status.PENDING,
                item.problem,
                0,
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
    _step_up(job.kind, actor)
    if job.is_active:
        raise DomainError("This work is still under way.")
    again = job.items.filter(status__in=[JobItem.Status.PENDING, JobItem.Status.FAILED])
    if not again.exists():
        raise DomainError("Every item of this work is done; there is nothing to run again.")
    pending = again.update(status=JobItem.Status.PENDING, message="", attempts=0, leased_until=None)
    job.status, job.error, job.finished_at = Job.Status.QUEUED, "", None
    try:
        with transaction.atomic():
            job.save(update_fields=["status", "error", "finished_at"])
    except IntegrityError:
        raise Duplicate("The same work was started again meanwhile.") from None
    _queue(job, items=pending)
    return job


def job_begin(*, job_id: int) -> Job | None:
    """Mark the job running for one of its tasks; None when the job is over."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or not job.is_active:
            return None
        if job.status == Job.Status.QUEUED:
            # A retry runs the same job again: it keeps its first start.
            job.status, job.started_at = Job.Status.RUNNING, job.started_at or timezone.now()
            job.save(update_fields=["status", "started_at"])
    return job


@dataclass(frozen=True)
class Lease:
    items: list[int]
    until: datetime


def job_claim(*, job: Job) -> Lease | None:
    """Lease the next pending items no other worker holds, committed at once; None when none
    is left to take. An item already leased JOB_ITEM_ATTEMPTS times fails instead."""
    now = timezone.now()
    until = now + timedelta(seconds=settings.JOB_LEASE_SECONDS)
    free = Q(leased_until__isnull=True) | Q(leased_until__lt=now)
    pending = JobItem.objects.filter(job_id=job.pk, status=JobItem.Status.PENDING).filter(free)
    with transaction.atomic():
        while True:
            # SKIP LOCKED: an item whose batch is still running keeps its worker, however long
            # the batch takes, and a worker never waits for another's items.
            items = list(
                pending.select_for_update(skip_locked=True)
                .order_by("position")
                .only("pk", "attempts")[: _batch_size(job)]
            )
            if not items:
                return None
            worn = [item.pk for item in items if item.attempts >= settings.JOB_ITEM_ATTEMPTS]
            JobItem.objects.filter(pk__in=worn).update(
                status=JobItem.Status.FAILED,
                leased_until=None,
                message=WORN_OUT.format(attempts=settings.JOB_ITEM_ATTEMPTS),
            )
            if taken := [item.pk for item in items if item.pk not in worn]:
                break
        JobItem.objects.filter(pk__in=taken).update(leased_until=until, attempts=F("attempts") + 1)
        # Should this worker be lost, the task queued here takes its items over.
        job_queued.send(sender=Job, job=job, runs=1, after=until, unless_waiting=True)
    return Lease(items=taken, until=until)


def _batch_size(job: Job) -> int:
    """At most each task's share of the job's items, and at most JOB_BATCH_ITEMS (an item's
    work is unseen on the progress page until its batch commits). A share of the whole job, not
    of what is left: what a batch costs beyond its items is paid once a batch, and batches
    shrinking to one item at the end paid it for each."""
    if job.kind not in BATCHED:
        return 1
    share = -(-JobItem.objects.filter(job_id=job.pk).count() // settings.JOB_WORKERS_PER_JOB)
    return max(1, min(settings.JOB_BATCH_ITEMS, share))


def job_step(*, job: Job, lease: Lease) -> None:
    """Run the steps of the leased items still pending, in one transaction with their
    outcomes. Their rows are locked first: an item another worker took over once the lease ran
    out, and runs or ran already, is left to it."""
    with transaction.atomic():
        items = list(
            JobItem.objects.filter(pk__in=lease.items, status=JobItem.Status.PENDING)
            .select_for_update(skip_locked=True)
            .order_by("position")
        )
        if not items:
            return
        batch = Batch()
        taken = lock_batch(job, items, batch)
        # Items lock_batch left for a later batch (their case is an earlier item's) are leased
        # again by the next claim, not after their lease ran out, and this lease, unused,
        # does not count against them.
        left = [item.pk for item in items[len(taken) :]]
        JobItem.objects.filter(pk__in=left).update(  # no query when none is left
            leased_until=None, attempts=F("attempts") - 1
        )
        items = taken
        for item in items:
            _run_step(job, item, batch)
        write_batch(batch)
        _save_outcomes(items)


def _run_step(job: Job, item: JobItem, batch: Batch) -> None:
    """Run the item's step, setting its outcome on it; what it wrote and recorded is staged on
    ``batch`` (nothing when it failed)."""
    try:
        # A savepoint: a step that fails leaves nothing behind, nor its staged writes and
        # events, and its item, still locked, is marked failed in the same transaction.
        with transaction.atomic(), batch.item():
            message, case = STEPS[job.kind](job, item)
    except TRANSIENT:
        # The database's failure, not the item's: the whole batch is rolled back.
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


def job_work(*, job: Job) -> str:
    """Lease and run the job's items until none is left to take (FINISHED), the worker is
    told to stop (STOPPING, after its batch) or the database fails (INTERRUPTED).

    A batch the database fails under (a dropped connection, a deadlock, a time-out) is rolled
    back whole and its lease given up, so its items are leased again at once; each lease counts
    towards the item's JOB_ITEM_ATTEMPTS. With no connection to be had, the task ends: the task
    its last lease queued goes on with the job.
    """
    while not stopping.is_set():
        try:
            lease = job_claim(job=job)
            if lease is None:
                return FINISHED
            try:
                job_step(job=job, lease=lease)
            except TRANSIENT as error:
                job_database_failed(job_id=job.pk, error=error)
                JobItem.objects.filter(
                    pk__in=lease.items, status=JobItem.Status.PENDING, leased_until=lease.until
                ).update(leased_until=None)
        except TRANSIENT as error:
            job_database_failed(job_id=job.pk, error=error)
            return INTERRUPTED
    return STOPPING


def job_database_failed(*, job_id: int, error: Exception) -> None:
    """Log the database's failure as a warning (no fault of ours, nothing to trace) and drop
    the connection if it no longer works, so the next query opens a new one. Inside a
    caller's transaction (the immediate backend) nothing can go on: the error is the caller's."""
    if connection.in_atomic_block:
        raise error
    log.warning("job %s: the database failed: %s", job_id, error)
    close_old_connections()


def job_stop(*, job: Job, error: Exception) -> None:
    """Mark the job failed by an error that stopped its task (called while handling it)."""
    log.exception("job %s stopped", job.pk)
    with transaction.atomic():
        Job.objects.filter(pk=job.pk).update(
            status=Job.Status.FAILED, error=_why(error), finished_at=timezone.now()
        )
        _record_outcome(job)


def job_finish(*, job_id: int) -> Progress:
    """Mark the job done once no item is pending. Items still pending are leased by another
    worker: a task of the job is queued for when their lease ends, in case it was lost.
    Returns where the job stands."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        pending = job.items.filter(status=JobItem.Status.PENDING)
        if job.status == Job.Status.RUNNING and not pending.exists():
            job.status, job.finished_at = Job.Status.DONE, timezone.now()
            job.save(update_fields=["status", "finished_at"])
            _forget_tasks(job.pk)
            if job.kind == Job.Kind.VERIFY:
                audit_verification_record(job)
            elif job.kind == Job.Kind.SIMULATE:
                simulation_summarise(simulation_id=job.params["simulation"])
            _record_outcome(job)
        elif job.is_active:
            now = timezone.now()
            until = pending.aggregate(until=Min("leased_until"))["until"]
            if until is None or until <= now:
                # Their lease ran out, yet they could not be leased again: their rows are
                # locked by a batch still running (or frozen, until the server ends its
                # transaction). Looked at again a lease later, not in a loop.
                until = now + timedelta(seconds=settings.JOB_LEASE_SECONDS)
            job_queued.send(sender=Job, job=job, runs=1, after=until, unless_waiting=True)
    return job_progress(job)


def _record_outcome(job: Job) -> None:
    """The job's end as an event sealing what it came to (settlements.job_outcomes), written
    by the server rather than a user."""
    outcome = job_outcomes.outcomes([job.pk])[job.pk]
    record_event(
        Event.Type.JOB_FINISHED,
        actor=None,
        incident=job.incident,
        subject=job,
        data={"kind": job.kind, "status": outcome["outcome"]["status"]},
        facts=outcome,
    )


def job_hand_over(*, job: Job) -> None:
    """Queue a task of a job whose task stops before its end (its worker told to stop), so
    that another worker goes on with it at once rather than when its leases run out."""
    with transaction.atomic():
        if Job.objects.filter(pk=job.pk, status__in=Job.ACTIVE).exists():
            _queue(job, items=1)
    log.warning("job %s: its worker is stopping; handed on", job.pk)


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


# --- The auditor's verification of the whole event log ---------------------------------------


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
        data={
            "events": events,
            "head": head,
            "verified": not problem,
            "problem": problem,
            "job": job.pk,
        },
    )
    # The history page's status goes on from this head rather than verify the chain again.
    result = audit_log.Verification(count=events, head=head, problem=problem)
    if not problem:
        outcome = checkpoints.Outcome(result, first=1, counts=checkpoints.type_counts(0, events))
        checkpoint_record(outcome=outcome)
    transaction.on_commit(lambda: audit_log.remember(result, cache=cache))


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


def _set_outcome(item: JobItem, status: str, message: str, case: Case | None) -> None:
    # A refusal quotes what it refused, which may hold U+0000 (a player id of a bad snapshot);
    # PostgreSQL stores no NUL in text, and the batch's outcomes are written together, so one
    # such message would fail every item of the batch. It is shown escaped instead.
    item.status, item.message = status, message.replace("\x00", "\\u0000")
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


def _queue(job: Job, *, items: int) -> None:
    """Queue the job's tasks, as many as workers may share its ``items``, in the caller's
    transaction: with the database backend they commit or roll back with the job row
    (settlements.tasks, through ``job_queued``). A task deferred by a lease's length goes with
    them: should every worker fail before leasing an item, it starts the job. The immediate
    backend (tests) runs them here; then the job is read again, to show what they did."""
    runs = max(1, min(settings.JOB_WORKERS_PER_JOB, items))
    later = timezone.now() + timedelta(seconds=settings.JOB_LEASE_SECONDS)
    answers = job_queued.send(sender=Job, job=job, runs=runs)
    job_queued.send(sender=Job, job=job, runs=1, after=later)
    if any(ran for _, ran in answers):
        job.refresh_from_db()


class WorkerLost(Exception):
    """What a lost worker's task rows say stopped them (django-tasks imports the class named)."""


def _forget_tasks(job_id: int) -> None:
    """Mark the job's task rows still running failed once the job is done, so that the task
    list does not show lost workers' tasks running for ever. A task still alive (the one
    finishing the job, one ending its last batch) is marked successful by its worker when it
    returns, after this, as django-tasks-db writes a task's end whatever its row says."""
    if "django_tasks_db" not in settings.INSTALLED_APPS:
        return
    from django_tasks_db.models import DBTaskResult

    DBTaskResult.objects.filter(status="RUNNING", args_kwargs__kwargs__job_id=job_id).update(
        status="FAILED",
        finished_at=timezone.now(),
        exception_class_path=f"{WorkerLost.__module__}.{WorkerLost.__qualname__}",
        traceback="The worker stopped answering; other workers finished the job.",
    )
