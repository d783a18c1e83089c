"""An outage of 20 tournaments settled through the bulk path in Chromium, with a real worker.

The operator loads the 20 snapshot files at once; the Marketing Manager answers each kind of
case that waits for a decision once; the operator prepares every ready case and submits every
prepared settlement; a Tournament Manager approves all 20 after a confirmation that restates
how many and the totals. Every bulk action is a job run by ``manage.py run_worker`` in its own
process, on the test database, while the job's page polls its progress.
"""

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from playwright.sync_api import expect

from settlements.models import Case, Decision, Job, Settlement
from settlements.workflow import SettlementStatus
from tests.conftest import snapshot_bytes
from tests.e2e.test_report_crash import report_incident

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
# The jobs of 20 small tournaments take a second or two; a loaded machine may take many more.
JOB_TIMEOUT_MS = 90_000
# (type, stage, the answer a Marketing Manager gives when the rules ask for one), in turn.
MIX = (
    ("regular", "middle", None),
    ("regular", "late", None),
    ("regular", "early", None),
    ("satellite", "middle", "Split by chip equity"),
    ("regular", "pre", None),
    ("freeroll", "middle", "Split by chip equity"),
    ("satellite", "late", None),
    ("freeroll", "early", "Do not reschedule"),
    ("freeroll", "pre", None),
    ("regular", "late", None),
)


@pytest.fixture
def worker(live_server, settings):
    """One ``run_worker`` process on the test database; the pages queue jobs for it."""
    if connection.vendor != "postgresql":
        pytest.skip("the worker shares the test database only on PostgreSQL")
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}
    }
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
    }
    process = subprocess.Popen(
        [sys.executable, "manage.py", "run_worker", "--no-reload", "--no-startup-delay"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    yield process
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_for_job(page, total: int) -> None:
    """On a job's page: until the worker is done with all ``total`` items."""
    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    progress = page.locator("#job-progress")
    expect(progress.get_by_role("heading", name="Done")).to_be_visible(timeout=JOB_TIMEOUT_MS)
    expect(page.locator("#job-count")).to_have_text(f"{total} of {total}")
    expect(page.locator("#job-failed")).to_have_text("0")
    # The list of items read itself again when the last poll said the work was done.
    expect(page.locator("#job-items tbody tr.job-item--done")).to_have_count(total)


def test_an_outage_of_twenty_tournaments_settled_in_a_few_bulk_actions(
    worker, signed_in_page, screenshot, tmp_path
):
    files = []
    for number in range(20):
        type_, stage, _ = MIX[number % len(MIX)]
        path = tmp_path / f"T{number:02d}-{type_}-{stage}.json"
        path.write_bytes(
            snapshot_bytes(type=type_, stage=stage, entrants=40, tournament_id=f"DC3-{number:02d}")
        )
        files.append(str(path))

    # The operator loads every snapshot at once.
    operator = signed_in_page("operator")
    incident = report_incident(operator, "Data centre 3 outage")
    operator.get_by_role("link", name="Load many snapshots").click()
    operator.get_by_label("Snapshot files or a zip archive").set_input_files(files)
    operator.get_by_role("button", name="Load them").click()
    wait_for_job(operator, 20)
    expect(operator.locator("#job-items")).to_contain_text("opened for DC3-00")
    screenshot(operator, "20-outage-load-many")

    operator.get_by_role("link", name="Back to the incident").click()
    counts = operator.locator("#incident-counts")
    expect(counts).to_contain_text("Awaiting decision")
    expect(counts).to_contain_text("Marketing Manager")
    screenshot(operator, "21-outage-workbench")

    # The Marketing Manager answers each kind of case once, after its previews.
    marketing = signed_in_page("marketing_manager", username="marketing")
    marketing.goto(f"/incidents/{incident.pk}/tournaments/")
    marketing.get_by_role("link", name="Decide alike cases together").click()
    answers = {(type_, stage): answer for type_, stage, answer in MIX if answer}
    kinds = 0
    while not marketing.get_by_text("No case of this incident is waiting for a decision").count():
        heading = marketing.locator("#decide-title").inner_text()
        type_, stage = re.match(r"(\w+) tournaments at the (\w+) stage", heading).groups()
        expect(marketing.locator("#decide-previews tbody tr")).to_have_count(2)
        if kinds == 0:
            screenshot(marketing, "22-outage-decide")
        marketing.get_by_label(answers[type_.lower(), stage]).check()
        marketing.get_by_label("Reason").fill("As the crash policy suggests for this kind.")
        marketing.get_by_role("button", name="Record the decision for 2 cases").click()
        expect(marketing.locator("#confirm-statement")).to_contain_text("for 2")
        marketing.get_by_role("button", name="Record the decision for these cases").click()
        wait_for_job(marketing, 2)
        kinds += 1
        marketing.goto(f"/incidents/{incident.pk}/decide/")
    assert kinds == 3
    assert Decision.objects.filter(case__incident=incident).count() == 6

    # The operator prepares every ready case, then submits every prepared settlement.
    operator.goto(f"/incidents/{incident.pk}/tournaments/")
    operator.get_by_role("link", name="Prepare every ready case").click()
    expect(operator.locator("#confirm-statement")).to_contain_text("Prepare 20 settlements")
    operator.get_by_role("button", name="Prepare 20").click()
    wait_for_job(operator, 20)
    operator.get_by_role("link", name="Back to the incident").click()
    operator.get_by_role("link", name="Submit every prepared settlement").click()
    expect(operator.locator("#bulk-totals")).to_be_visible()
    operator.get_by_role("button", name="Submit 20").click()
    wait_for_job(operator, 20)

    # A Tournament Manager approves all 20 after reading how many and what they pay.
    manager = signed_in_page("tournament_manager", username="manager")
    manager.goto(f"/incidents/{incident.pk}/tournaments/")
    manager.get_by_role("link", name="Approve settlements").click()
    expect(manager.locator("#approve-selection")).to_contain_text("all 20")
    manager.get_by_role("button", name="Review the approval of 20").click()
    expect(manager.locator("#confirm-statement")).to_contain_text("Approve 20 settlements")
    expect(manager.locator("#approve-totals")).to_contain_text("USD")
    manager.get_by_label("Reason").fill("Checked against the snapshots of the outage.")
    screenshot(manager, "23-outage-approve-confirm")
    manager.get_by_role("button", name="Approve 20").click()
    wait_for_job(manager, 20)

    settlements = Settlement.objects.filter(case__incident=incident)
    assert settlements.count() == 20
    assert set(settlements.values_list("status", flat=True)) == {SettlementStatus.APPROVED}
    assert set(Case.objects.filter(incident=incident).values_list("status", flat=True)) == {
        "approved"
    }
    assert Job.objects.filter(incident=incident, status=Job.Status.DONE).count() == 7

    manager.get_by_role("link", name="Back to the incident").click()
    expect(manager.locator("#incident-counts")).to_contain_text("Approved")
    expect(manager.get_by_role("link", name="Close the incident")).to_be_visible()
