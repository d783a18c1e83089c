"""Background jobs: each item through its own service call, refusals per item, no double work."""

import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from settlements import audit_log
from settlements.errors import Duplicate, NotAllowed
from settlements.models import Event, Incident, Job, JobItem, Settlement
from settlements.services import jobs
from settlements.services import settlements as settlement_services
from settlements.services.decisions import decision_record
from settlements.services.incidents import incident_report
from settlements.services.snapshots import case_load_snapshot
from settlements.tasks import run_job
from settlements.workflow import CaseStatus, SettlementStatus
from tests.services.helpers import event_types

pytestmark = pytest.mark.django_db

DB_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


@pytest.fixture
def incident(operator):
    return incident_report(actor=operator, title="DC1", started_at=timezone.now())


def late_cases(operator, incident, snapshot_factory, count: int):
    return [
        case_load_snapshot(
            actor=operator,
            snapshot=snapshot_factory(stage="late", tournament_id=f"T{number}"),
            incident=incident,
        )
        for number in range(count)
    ]


def case_items(cases):
    return [jobs.NewItem(key=str(case.pk), label=str(case)) for case in cases]


def test_a_prepare_job_prepares_each_case_with_its_own_event(operator, incident, snapshot_factory):
    cases = late_cases(operator, incident, snapshot_factory, 3)
    job = jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target=f"incident:{incident.pk}",
        items=case_items(cases),
        incident=incident,
    )
    job.refresh_from_db()
    assert job.status == Job.Status.DONE
    assert jobs.job_progress(job) == jobs.Progress(total=3, done=3, skipped=0, failed=0)
    for case in cases:
        case.refresh_from_db()
        assert case.status == CaseStatus.PREPARED
        assert event_types(case=case)[-1] == Event.Type.SETTLEMENT_PREPARED
    assert {item.case_id for item in job.items.all()} == {case.pk for case in cases}


def test_one_refused_item_is_reported_and_the_others_are_done(
    operator, tournament_manager, second_manager, incident, snapshot_factory
):
    cases = late_cases(operator, incident, snapshot_factory, 3)
    settlements = []
    for case in cases:
        settlement = settlement_services.settlement_prepare(case=case, actor=operator)
        settlements.append(
            settlement_services.settlement_submit(settlement=settlement, actor=operator)
        )
    settlement_services.settlement_approve(
        settlement=settlements[1], actor=second_manager, reason="ok"
    )
    job = jobs.job_start(
        kind=Job.Kind.APPROVE,
        actor=tournament_manager,
        target=f"incident:{incident.pk}",
        items=[jobs.NewItem(key=str(s.pk), label=str(s)) for s in settlements],
        params={"reason": "outage checked"},
    )
    items = list(job.items.order_by("position"))
    assert [item.status for item in items] == ["done", "failed", "done"]
    assert "already approved" in items[1].message or "approved" in items[1].message
    approved = Settlement.objects.filter(pk__in=[settlements[0].pk, settlements[2].pk])
    assert {s.status for s in approved} == {SettlementStatus.APPROVED}
    assert {s.review_reason for s in approved} == {"outage checked"}
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_APPROVED).count() == 3


def test_own_work_is_skipped_not_approved(users, incident, snapshot_factory, django_user_model):
    from tests.conftest import make_user

    both = make_user(django_user_model, "both", "operator", "tournament_manager")
    case = late_cases(both, incident, snapshot_factory, 1)[0]
    settlement = settlement_services.settlement_prepare(case=case, actor=both)
    settlement_services.settlement_submit(settlement=settlement, actor=both)
    job = jobs.job_start(
        kind=Job.Kind.APPROVE,
        actor=both,
        target="x",
        items=[jobs.NewItem(key=str(settlement.pk), label=str(settlement))],
    )
    item = job.items.get()
    assert item.status == JobItem.Status.SKIPPED
    assert "You prepared" in item.message
    settlement.refresh_from_db()
    assert settlement.status == SettlementStatus.AWAITING_APPROVAL


def test_an_upload_job_opens_good_files_and_reports_bad_ones_by_path(
    operator, incident, snapshot_factory
):
    items = [
        jobs.NewItem(key="a.json", label="a.json", payload=snapshot_factory(tournament_id="A")),
        jobs.NewItem(key="bad.json", label="bad.json", payload=b'{"tournament": 3}'),
        jobs.NewItem(key="b.json", label="b.json", payload=snapshot_factory(tournament_id="B")),
    ]
    job = jobs.job_start(
        kind=Job.Kind.UPLOAD,
        actor=operator,
        target=f"incident:{incident.pk}",
        items=items,
        incident=incident,
    )
    outcomes = {item.key: item for item in job.items.all()}
    assert outcomes["a.json"].status == outcomes["b.json"].status == JobItem.Status.DONE
    assert outcomes["a.json"].case.tournament.operator_id == "A"
    assert outcomes["a.json"].payload is None
    assert outcomes["bad.json"].status == JobItem.Status.FAILED
    assert "tournament" in outcomes["bad.json"].message
    assert incident.cases.count() == 2


def test_the_same_work_cannot_start_twice_while_queued(
    settings, operator, incident, snapshot_factory
):
    settings.TASKS = DB_TASKS
    cases = late_cases(operator, incident, snapshot_factory, 1)
    start = dict(
        kind=Job.Kind.PREPARE, actor=operator, target="incident:1", items=case_items(cases)
    )
    first = jobs.job_start(**start)
    assert first.status == Job.Status.QUEUED
    with pytest.raises(Duplicate) as refused:
        jobs.job_start(**start)
    assert refused.value.existing == first
    # Other work on the same target may start.
    jobs.job_start(**{**start, "kind": Job.Kind.SUBMIT})


def test_a_failed_item_runs_again_after_retry_and_done_ones_do_not(
    operator, marketing_manager, incident, snapshot_factory
):
    ready = late_cases(operator, incident, snapshot_factory, 1)[0]
    waiting = case_load_snapshot(
        actor=operator,
        snapshot=snapshot_factory(type="satellite", stage="middle", tournament_id="M"),
        incident=incident,
    )
    job = jobs.job_start(
        kind=Job.Kind.PREPARE, actor=operator, target="t", items=case_items([ready, waiting])
    )
    assert [i.status for i in job.items.order_by("position")] == ["done", "failed"]
    decision_record(case=waiting, actor=marketing_manager, option="chip_equity", reason="r")
    with pytest.raises(NotAllowed):
        jobs.job_retry(job=job, actor=marketing_manager)
    jobs.job_retry(job=job, actor=operator)
    assert [i.status for i in job.items.order_by("position")] == ["done", "done"]
    assert Settlement.objects.filter(case=ready).count() == 1


def test_only_the_roles_of_the_work_may_start_it(marketing_manager, incident):
    with pytest.raises(NotAllowed):
        jobs.job_start(
            kind=Job.Kind.PREPARE,
            actor=marketing_manager,
            target="t",
            items=[jobs.NewItem(key="1", label="x")],
        )
    assert not Incident.objects.filter(jobs__isnull=False).exists()


def test_whoever_loaded_the_snapshot_may_not_approve_its_settlement(
    operator, incident, snapshot_factory, django_user_model
):
    from tests.conftest import make_user

    loader = make_user(django_user_model, "loader", "operator", "tournament_manager")
    case = late_cases(loader, incident, snapshot_factory, 1)[0]
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    with pytest.raises(NotAllowed, match="You loaded the snapshot"):
        settlement_services.settlement_approve(settlement=settlement, actor=loader)


def test_an_unexpected_error_fails_its_item_safely_and_the_job_goes_on(
    monkeypatch, caplog, operator, incident, snapshot_factory
):
    cases = late_cases(operator, incident, snapshot_factory, 3)
    prepare = jobs.STEPS[Job.Kind.PREPARE]

    def faulty(job, item):
        if item.key == str(cases[1].pk):
            raise RuntimeError("connection string postgres://secret@db")
        return prepare(job, item)

    monkeypatch.setitem(jobs.STEPS, Job.Kind.PREPARE, faulty)
    job = jobs.job_start(kind=Job.Kind.PREPARE, actor=operator, target="t", items=case_items(cases))
    job.refresh_from_db()
    items = list(job.items.order_by("position"))
    assert [item.status for item in items] == ["done", "failed", "done"]
    assert items[1].message == jobs.UNEXPECTED and "secret" not in items[1].message
    assert job.status == Job.Status.DONE and job.error == ""
    cases[1].refresh_from_db()
    assert cases[1].status == CaseStatus.READY
    assert not Settlement.objects.filter(case=cases[1]).exists()
    logged = [r for r in caplog.records if r.name == "crashdesk.jobs" and r.exc_info]
    assert len(logged) == 1 and "secret" in str(logged[0].exc_info[1])
    # Once the fault is gone a retry does the failed item alone.
    monkeypatch.setitem(jobs.STEPS, Job.Kind.PREPARE, prepare)
    jobs.job_retry(job=job, actor=operator)
    assert Settlement.objects.filter(case__in=cases).count() == 3


def test_a_refusal_stays_the_items_own_message_not_an_error(operator, incident, snapshot_factory):
    case = late_cases(operator, incident, snapshot_factory, 1)[0]
    settlement_services.settlement_prepare(case=case, actor=operator)
    job = jobs.job_start(
        kind=Job.Kind.PREPARE, actor=operator, target="t", items=case_items([case])
    )
    item = job.items.get()
    assert item.status == JobItem.Status.FAILED
    assert item.message != jobs.UNEXPECTED and item.message


@pytest.mark.django_db(transaction=True)
def test_a_job_is_queued_as_several_tasks_that_share_its_items(
    settings, operator, incident, snapshot_factory
):
    settings.TASKS = DB_TASKS
    settings.JOB_WORKERS_PER_JOB = 2
    from django_tasks_db.models import DBTaskResult

    cases = late_cases(operator, incident, snapshot_factory, 3)
    job = jobs.job_start(kind=Job.Kind.PREPARE, actor=operator, target="t", items=case_items(cases))
    assert DBTaskResult.objects.ready().filter(args_kwargs__kwargs__job_id=job.pk).count() == 2

    # One task is in the middle of the first item (it holds its row) while another runs.
    holding, release = threading.Event(), threading.Event()

    def first_task_mid_step():
        with transaction.atomic():
            JobItem.objects.select_for_update().get(job=job, position=1)
            holding.set()
            release.wait(30)
        connection.close()

    other = threading.Thread(target=first_task_mid_step)
    other.start()
    try:
        assert holding.wait(30)
        second = run_job.call(job_id=job.pk)
        assert second["ran"] and second["done"] == 2
        job.refresh_from_db()
        assert job.status == Job.Status.RUNNING
        assert job.items.get(position=1).status == JobItem.Status.PENDING
    finally:
        release.set()
        other.join()
    # Had the first task died there, its item's lease would run out and another task take it
    # over; here it goes on and closes.
    first = run_job.call(job_id=job.pk)
    job.refresh_from_db()
    assert first["done"] == 3 and job.status == Job.Status.DONE
    assert set(job.items.values_list("attempts", flat=True)) == {1}
    assert Settlement.objects.filter(case__in=cases).count() == 3
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).count() == 3


def test_starting_a_job_reads_nothing_back(
    settings, operator, incident, snapshot_factory, django_assert_num_queries
):
    """Every prepare of a middle stage starts a job for its ICM opinion: the job row, its
    items, one task per worker and one deferred, and no count or read of what was just
    written."""
    settings.TASKS = DB_TASKS
    settings.JOB_WORKERS_PER_JOB = 2
    items = case_items(late_cases(operator, incident, snapshot_factory, 3))
    # Two savepoints and their releases, the job's row, three tasks; the items go in through
    # psycopg's own cursor, which Django does not count.
    with django_assert_num_queries(8):
        jobs.job_start(kind=Job.Kind.PREPARE, actor=operator, target="t", items=items)


def test_a_single_item_job_is_one_task(settings, operator, incident, snapshot_factory):
    settings.TASKS = DB_TASKS
    from django_tasks_db.models import DBTaskResult

    cases = late_cases(operator, incident, snapshot_factory, 1)
    job = jobs.job_start(kind=Job.Kind.PREPARE, actor=operator, target="t", items=case_items(cases))
    assert DBTaskResult.objects.ready().filter(args_kwargs__kwargs__job_id=job.pk).count() == 1
    assert Job.objects.values_list("status", flat=True).get(pk=job.pk) == Job.Status.QUEUED


def test_a_batch_chains_its_items_events_in_order_and_none_of_a_failed_one(
    settings, monkeypatch, operator, incident, snapshot_factory
):
    settings.JOB_WORKERS_PER_JOB = 1
    cases = late_cases(operator, incident, snapshot_factory, 4)
    prepare, claim, leases = jobs.STEPS[Job.Kind.PREPARE], jobs.job_claim, []

    def fails_after_its_writes(job, item):
        outcome = prepare(job, item)
        if item.key == str(cases[1].pk):
            raise RuntimeError("after the settlement and its event were made")
        return outcome

    monkeypatch.setitem(jobs.STEPS, Job.Kind.PREPARE, fails_after_its_writes)
    monkeypatch.setattr(jobs, "job_claim", lambda job: leases.append(claim(job=job)) or leases[-1])
    job = jobs.job_start(kind=Job.Kind.PREPARE, actor=operator, target="t", items=case_items(cases))
    assert [len(lease.items) if lease else 0 for lease in leases] == [4, 0]
    assert list(job.items.order_by("position").values_list("status", flat=True)) == [
        "done",
        "failed",
        "done",
        "done",
    ]
    prepared = Event.objects.filter(type=Event.Type.SETTLEMENT_PREPARED).order_by("seq")
    assert [event.case_id for event in prepared] == [cases[0].pk, cases[2].pk, cases[3].pk]
    seqs = list(Event.objects.order_by("seq").values_list("seq", flat=True))
    assert seqs == list(range(1, len(seqs) + 1))
    assert audit_log.verify().ok
    assert not Settlement.objects.filter(case=cases[1]).exists()


def test_each_task_of_a_run_takes_at_most_its_share_of_the_jobs_items(
    settings, monkeypatch, operator, incident, snapshot_factory
):
    settings.JOB_WORKERS_PER_JOB, settings.JOB_BATCH_ITEMS = 2, 3
    cases = late_cases(operator, incident, snapshot_factory, 9)
    claim, sizes = jobs.job_claim, []

    def sized(job):
        lease = claim(job=job)
        sizes.append(len(lease.items) if lease else 0)
        return lease

    monkeypatch.setattr(jobs, "job_claim", sized)
    job = jobs.job_start(kind=Job.Kind.PREPARE, actor=operator, target="t", items=case_items(cases))
    # At most JOB_BATCH_ITEMS, and at most half the job's items.
    assert sizes == [3, 3, 3, 0]
    settings.JOB_BATCH_ITEMS, sizes[:] = 20, []
    jobs.job_start(kind=Job.Kind.PREPARE, actor=operator, target="u", items=case_items(cases))
    assert sizes == [5, 4, 0]
    assert jobs.job_progress(job).done == 9


def test_a_refusal_quoting_a_nul_fails_its_file_alone(operator, incident, snapshot_factory):
    """A player id with U+0000 is quoted by the refusal; PostgreSQL stores no NUL in text, yet
    the batch's other files load and the refused one says why."""
    bad = snapshot_factory(tournament_id="N").replace(b'"p000001"', b'"p0\\u0000"')
    items = [
        jobs.NewItem(key="a.json", label="a.json", payload=snapshot_factory(tournament_id="A")),
        jobs.NewItem(key="nul.json", label="nul.json", payload=bad),
        jobs.NewItem(key="b.json", label="b.json", payload=snapshot_factory(tournament_id="B")),
    ]
    job = jobs.job_start(
        kind=Job.Kind.UPLOAD,
        actor=operator,
        target=f"incident:{incident.pk}",
        items=items,
        incident=incident,
    )
    outcomes = {item.key: item for item in job.items.all()}
    assert outcomes["a.json"].status == outcomes["b.json"].status == JobItem.Status.DONE
    assert outcomes["nul.json"].status == JobItem.Status.FAILED
    assert "U+0000" in outcomes["nul.json"].message
    assert "\x00" not in outcomes["nul.json"].message
    assert job.status == Job.Status.DONE and incident.cases.count() == 2


def test_a_job_run_again_keeps_its_first_start(operator, incident, snapshot_factory):
    cases = late_cases(operator, incident, snapshot_factory, 2)
    ready = case_items(cases[:1])
    job = jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target="t",
        items=[*ready, jobs.NewItem(key="0", label="gone")],
    )
    assert job.status == Job.Status.DONE
    first = job.started_at
    jobs.job_retry(job=job, actor=operator)
    job.refresh_from_db()
    assert job.started_at == first and job.finished_at > first


def test_a_lost_task_names_a_class_that_exists(settings, operator, incident, snapshot_factory):
    settings.TASKS = DB_TASKS
    from django.utils.module_loading import import_string
    from django_tasks_db.models import DBTaskResult

    cases = late_cases(operator, incident, snapshot_factory, 1)
    job = jobs.job_start(kind=Job.Kind.PREPARE, actor=operator, target="t", items=case_items(cases))
    # Its worker took the task and was lost; another finishes the job.
    DBTaskResult.objects.ready().update(status="RUNNING")
    assert run_job.call(job_id=job.pk)["ran"]
    lost = DBTaskResult.objects.get(status="FAILED")
    assert "finished the job" in lost.traceback
    assert issubclass(import_string(lost.exception_class_path), Exception)
    assert not DBTaskResult.objects.filter(status="RUNNING").exists()
