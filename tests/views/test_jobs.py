"""A job's page: its progress, polled while it runs, and each item's outcome."""

import pytest
from django.urls import reverse

from settlements.models import Job, JobItem
from tests.views.conftest import HTMX, assert_full_page, assert_partial, job_of

pytestmark = pytest.mark.django_db


def test_job_progress_polls_while_active_and_stops_when_done(
    settings, as_operator, operator, incident, late_cases
):
    from settlements.services import jobs

    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    job = jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target="t",
        items=[jobs.NewItem(str(c.pk), str(c)) for c in late_cases],
    )
    url = reverse("job_detail", args=[job.pk])
    html = assert_full_page(as_operator.get(url))
    assert 'hx-trigger="every 1s"' in html and "0 of 3" in html
    assert html.count('class="job-item ') == 3 and 'hx-trigger="job-finished from:body"' in html
    # A poll while the work runs reads the counts, not the items, and asks for nothing more.
    poll = as_operator.get(url, HTTP_HX_TARGET="job-progress", **HTMX)
    html = assert_partial(poll, "job-progress")
    assert "every 1s" in html and "job-item" not in html and "HX-Trigger" not in poll.headers
    Job.objects.filter(pk=job.pk).update(status=Job.Status.DONE)
    job.items.update(status=JobItem.Status.DONE)
    last = as_operator.get(url, HTTP_HX_TARGET="job-progress", **HTMX)
    html = assert_partial(last, "job-progress")
    assert "every 1s" not in html and "3 of 3" in html
    assert last.headers["HX-Trigger"] == "job-finished"
    items = assert_partial(
        as_operator.get(url, HTTP_HX_TARGET="job-items-section", **HTMX), "job-items-section"
    )
    assert items.count('class="job-item job-item--done"') == 3 and "job-finished" not in items


def test_an_unexpected_error_shows_as_one_failed_item_without_its_details(
    monkeypatch, as_operator, incident, late_cases
):
    from settlements.services import jobs

    prepare = jobs.STEPS[Job.Kind.PREPARE]

    def faulty(job, item):
        if item.key == str(late_cases[0].pk):
            raise ValueError("internal detail 0xdeadbeef")
        return prepare(job, item)

    monkeypatch.setitem(jobs.STEPS, Job.Kind.PREPARE, faulty)
    chosen = ",".join(str(case.pk) for case in late_cases)
    job = job_of(
        as_operator.post(
            reverse("incident_prepare_ready", args=[incident.pk]),
            {"selection": chosen, "step": "confirm"},
        )
    )
    url = reverse("job_detail", args=[job.pk])
    html = assert_full_page(as_operator.get(url))
    assert '<dd id="job-failed">1</dd>' in html and '<dd id="job-done">2</dd>' in html
    assert "unexpected error" in html and "0xdeadbeef" not in html
    assert "Run again over what is not done" in html
    failed = assert_partial(
        as_operator.get(url, {"status": "failed"}, HTTP_HX_TARGET="job-items-section", **HTMX),
        "job-items-section",
    )
    assert failed.count('class="job-item ') == 1 and "unexpected error" in failed


def test_a_long_job_lists_its_items_a_page_at_a_time(settings, as_operator, operator):
    from settlements.services import jobs

    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
    job = jobs.job_start(
        kind=Job.Kind.PREPARE,
        actor=operator,
        target="t",
        items=[jobs.NewItem(str(n), f"item {n:04d}") for n in range(1, 251)],
    )
    job.items.filter(position__gt=200).update(status=JobItem.Status.FAILED)
    url = reverse("job_detail", args=[job.pk])
    first = assert_full_page(as_operator.get(url))
    assert first.count('class="job-item ') == 100
    assert "item 0001" in first and "item 0101" not in first
    assert "Page 1 of 3 · 250 items" in first and "page=2" in first
    # A page swapped in by htmx is the list's section alone; the last page holds the rest.
    last = assert_partial(
        as_operator.get(f"{url}?page=3", HTTP_HX_TARGET="job-items-section", **HTMX),
        "job-items-section",
    )
    assert last.count('class="job-item ') == 50 and "item 0201" in last and "item 0250" in last
    # A filter pages its own items, counted by the progress.
    failed = assert_full_page(as_operator.get(f"{url}?status=failed"))
    assert failed.count('class="job-item job-item--failed"') == 50
    assert "pagination" not in failed


def test_no_run_again_is_offered_when_every_failure_would_fail_again(
    as_operator, incident, snapshot_factory
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    files = [
        SimpleUploadedFile("good.json", snapshot_factory(tournament_id="G1")),
        SimpleUploadedFile("broken.json", b'{"tournament": {}}'),
    ]
    job = job_of(
        as_operator.post(reverse("incident_upload_many", args=[incident.pk]), {"files": files})
    )
    html = assert_full_page(as_operator.get(reverse("job_detail", args=[job.pk])))
    assert '<dd id="job-failed">1</dd>' in html
    assert "Run again over what is not done" not in html
    # The failed row is marked as such, beside the done one.
    assert 'class="job-item job-item--failed"' in html
    assert 'class="badge badge--danger" data-status="failed">Failed</span>' in html
    assert 'class="badge badge--ok" data-status="done">Done</span>' in html
