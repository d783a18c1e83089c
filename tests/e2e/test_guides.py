"""The user guides in docs/guides/, walked in Chromium: one journey per role, doing what its
guide tells that person to do, checking what the guide says they will see, and saving the
screenshots the guide shows (test-output/screenshots/guide-*.png; the copies the guides use
live in docs/screenshots/).

Data the person would find already on the desk (cases loaded by an operator, a settlement
another manager prepared) is made through the services, as people elsewhere would make it.
Bulk work runs inside the request that starts it (the tests' immediate task backend);
test_outage_journey.py runs the same buttons with a real worker.
"""

import csv
import json
import re
import urllib.request
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from playwright.sync_api import expect

from settlements.access import roles
from settlements.models import Case, Compensation, Incident, Reissue, Settlement
from settlements.services import settlements as settlement_services
from settlements.services.compensation import CompensationEntry, compensation_propose
from settlements.services.incidents import incident_report
from settlements.services.reissues import reissue_approve
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create
from settlements.workflow import CaseStatus, CompensationStatus, SettlementStatus
from tests.conftest import make_user, snapshot_bytes
from tests.e2e.test_report_crash import report_incident

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def person(username: str, role: str):
    return make_user(get_user_model(), username, role)


def outage(title: str = "Rack 7 power loss") -> Incident:
    return incident_report(
        actor=person("operator", roles.OPERATOR),
        title=title,
        started_at=timezone.now() - timedelta(hours=1),
        description="Both game servers of rack 7 lost power.",
    )


def load(incident: Incident | None = None, **snapshot) -> Case:
    return case_load_snapshot(
        actor=person("operator", roles.OPERATOR),
        snapshot=snapshot_bytes(entrants=40, **snapshot),
        incident=incident,
    )


def settled(incident: Incident | None, stage: str, tournament_id: str, *, approve: bool):
    """A regular tournament's case, its settlement prepared and submitted by the operator and,
    if asked, approved by ``manager2`` (so that the guide's own ``manager`` is free to answer
    what is left)."""
    operator = person("operator", roles.OPERATOR)
    case = load(incident, type="regular", stage=stage, tournament_id=tournament_id)
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement = settlement_services.settlement_submit(settlement=settlement, actor=operator)
    if approve:
        settlement = settlement_services.settlement_approve(
            settlement=settlement,
            actor=person("manager2", roles.TOURNAMENT_MANAGER),
            reason="Chip counts match the server log.",
        )
    return settlement


def wait_for_job(page, total: int) -> None:
    """On a job's page: the work is done, every item with it, none failed."""
    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    expect(page.locator("#job-progress").get_by_role("heading", name="Done")).to_be_visible()
    expect(page.locator("#job-count")).to_have_text(f"{total} of {total}")
    expect(page.locator("#job-failed")).to_have_text("0")


def test_the_operators_guide(signed_in_page, screenshot, tmp_path):
    page = signed_in_page("operator")
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    nav = page.get_by_role("navigation", name="Main")
    for entry in ("Report a crash", "Players", "Compensation", "Payments", "Crash policy"):
        expect(nav.get_by_role("link", name=entry)).to_be_visible()
    expect(nav.get_by_role("link", name="History")).to_have_count(0)

    # 1. Report the incident, then load one tournament's snapshot.
    incident = report_incident(page, "Rack 7 power loss")
    expect(page.get_by_role("list", name="Report a crash: steps")).to_be_visible()
    screenshot(page, "guide-operator-01-incident")
    page.get_by_role("link", name="Upload a snapshot").click()
    one = tmp_path / "sunday-200.json"
    one.write_bytes(
        snapshot_bytes(
            type="regular", stage="middle", entrants=40, tournament_id="T-0042", name="Sunday 200"
        )
    )
    page.get_by_label("Snapshot file").set_input_files(str(one))
    page.get_by_role("button", name="Load the snapshot").click()
    expect(page.get_by_role("heading", name="Stage: Middle")).to_be_visible()
    expect(page.get_by_role("heading", name="Remedy: Chip equity split")).to_be_visible()

    # 2. Prepare the settlement, check it, submit it.
    page.get_by_label("Note for the approver").fill("Chip counts checked against the server log.")
    page.get_by_role("button", name="Prepare the settlement").click()
    expect(page.get_by_text(re.compile(r"Settlement #\d+ prepared"))).to_be_visible()
    settlement = Settlement.objects.get(case__tournament__operator_id="T-0042")
    page.get_by_role("link", name=f"Settlement #{settlement.pk}").click()
    expect(page.locator("#payouts-table tfoot tr").first).to_contain_text("All 20 players")
    page.get_by_role("button", name="Submit for approval").click()
    expect(page.get_by_text("was sent to the Tournament Managers")).to_be_visible()
    expect(page.locator("#settlement-actions")).to_contain_text(
        "Waiting for a Tournament Manager’s approval"
    )

    # 3. Many tournaments at once: one upload, then one button per step.
    files = []
    for number, (type_, stage) in enumerate(
        (("regular", "late"), ("regular", "early"), ("satellite", "middle"))
    ):
        path = tmp_path / f"R7-{number}.json"
        path.write_bytes(
            snapshot_bytes(type=type_, stage=stage, entrants=40, tournament_id=f"R7-{number}")
        )
        files.append(str(path))
    page.goto(f"/incidents/{incident.pk}/tournaments/")
    page.get_by_role("link", name="Load many snapshots").click()
    page.get_by_label("Snapshot files or a zip archive").set_input_files(files)
    page.get_by_role("button", name="Load them").click()
    wait_for_job(page, 3)
    expect(page.locator("#job-items")).to_contain_text("opened for R7-0")
    screenshot(page, "guide-operator-02-job")
    page.get_by_role("link", name="Back to the incident").click()
    counts = page.locator("#incident-counts")
    expect(counts).to_contain_text("Awaiting decision")
    expect(counts).to_contain_text("Marketing Manager")
    expect(counts).to_contain_text("Ready to prepare")
    page.get_by_role("link", name="Prepare every ready case").click()
    expect(page.locator("#bulk-skipped")).to_contain_text("waiting for the Marketing Manager")
    screenshot(page, "guide-operator-02-confirm-prepare")
    page.get_by_role("button", name="Prepare 2").click()
    wait_for_job(page, 2)
    page.get_by_role("link", name="Back to the incident").click()
    page.get_by_role("link", name="Submit every prepared settlement").click()
    page.get_by_role("button", name="Submit 2").click()
    wait_for_job(page, 2)
    assert Case.objects.filter(incident=incident, status=CaseStatus.AWAITING_APPROVAL).count() == 3

    # 4. Compensation for players the settlement treats unfairly.
    page.goto(f"/cases/{settlement.case_id}/")
    page.get_by_role("link", name="Propose compensation").click()
    page.get_by_label("Players and amounts").fill("p000019 12.50\np000020 12.50")
    page.get_by_label("What went wrong for these players").fill(
        "Disconnected by the lobby bug ten minutes before the crash."
    )
    page.get_by_role("button", name="Propose").click()
    expect(page).to_have_url(re.compile(r"/compensation/\d+/$"))
    expect(page.locator("#compensation-items tfoot")).to_contain_text("25.00 USD")
    expect(page.get_by_text("A Tournament Manager other than the proposer decides")).to_be_visible()

    # 5. A case loaded in error is withdrawn, with a reason.
    satellite = Case.objects.get(tournament__operator_id="R7-2")
    page.goto(f"/cases/{satellite.pk}/")
    page.get_by_role("link", name="Withdraw this case").click()
    expect(page.get_by_role("heading", name="Check before you withdraw")).to_be_visible()
    page.get_by_label("Reason").fill("This satellite ran on rack 8; it never crashed.")
    screenshot(page, "guide-operator-03-withdraw")
    page.get_by_role("button", name=re.compile(f"^Withdraw case #{satellite.pk}")).click()
    expect(page.get_by_role("heading", name="Withdrawn: loaded in error")).to_be_visible()
    satellite.refresh_from_db()
    assert satellite.status == CaseStatus.WITHDRAWN


def test_the_marketing_managers_guide(signed_in_page, screenshot):
    incident = outage()
    satellite = load(incident, type="satellite", stage="middle", tournament_id="S-0099")
    freeroll = load(incident, type="freeroll", stage="middle", tournament_id="F-0007")
    alike = [
        load(incident, type="freeroll", stage="early", tournament_id=f"F-EARLY-{number}")
        for number in range(2)
    ]

    page = signed_in_page("marketing_manager", username="marketing")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Report a crash")).to_have_count(0)
    waiting = page.locator("#waiting")
    expect(waiting).to_contain_text("4 items")
    for case in (satellite, freeroll, *alike):
        expect(waiting.get_by_role("link", name=f"Case #{case.pk}")).to_be_visible()
    screenshot(page, "guide-marketing-01-waiting")

    # One case: compare the options, choose, check, record.
    # The waiting item opens the decision itself.
    waiting.get_by_role("link", name=f"Case #{satellite.pk}").click()
    page.wait_for_url(f"**/cases/{satellite.pk}/decision/")
    expect(page.locator(".option-card svg.payout-chart")).to_have_count(2)
    page.get_by_role("radio", name="Split in proportion to chips").check()
    page.get_by_label("Why this option").fill("Site custom for satellites.")
    page.get_by_role("button", name="Review the decision").click()
    confirm = page.locator("#decision-form")
    expect(confirm.get_by_role("heading", name="Check before recording")).to_be_visible()
    expect(confirm).to_contain_text("20 players will be paid")
    expect(confirm).to_contain_text("Your reason: “Site custom for satellites.”")
    screenshot(page, "guide-marketing-02-decision-confirm")
    page.get_by_role("button", name="Record the decision").click()
    expect(page.get_by_role("heading", name="Remedy: Chip proportional split")).to_be_visible()

    # A freeroll played again: a date, and who is invited.
    page.goto(f"/cases/{freeroll.pk}/decision/")
    page.get_by_role("radio", name="Reschedule").check()
    expect(page.get_by_text("Invited by default: the 20 remaining players")).to_be_visible()
    new_date = timezone.localtime() + timedelta(days=7)
    page.get_by_label("New date").fill(new_date.strftime("%Y-%m-%dT20:00"))
    page.get_by_label("Why this option").fill("Players asked for a rerun.")
    page.get_by_role("button", name="Review the decision").click()
    expect(page.locator("#decision-form")).to_contain_text("Nothing is paid now.")
    page.get_by_role("button", name="Record the decision").click()
    expect(page.get_by_role("heading", name="Remedy: Reschedule")).to_be_visible()

    # Alike cases of one incident: one answer for all of them.
    page.goto(f"/incidents/{incident.pk}/tournaments/")
    page.get_by_role("link", name="Decide alike cases together").click()
    expect(page.locator("#decide-title")).to_have_text("Freeroll tournaments at the early stage")
    expect(page.locator("#decide-previews tbody tr")).to_have_count(2)
    page.get_by_label("Do not reschedule").check()
    page.get_by_label("Reason").fill("Early-stage freerolls are refunded, as the policy suggests.")
    page.get_by_role("button", name="Record the decision for 2 cases").click()
    expect(page.locator("#confirm-outcome")).to_be_visible()
    screenshot(page, "guide-marketing-03-decide-together-check")
    page.get_by_role("button", name="Record the decision for these cases").click()
    wait_for_job(page, 2)
    assert {case.status for case in Case.objects.filter(pk__in=[c.pk for c in alike])} == {
        CaseStatus.READY
    }
    page.get_by_role("link", name="Dashboard").first.click()
    expect(page.locator("#waiting")).to_contain_text("0 items")

    page.get_by_role("link", name="Crash policy").click()
    expect(page.get_by_role("heading", name="Crash policy", exact=False).first).to_be_visible()


def test_the_tournament_managers_guide(signed_in_page, screenshot):
    incident = outage()
    first = settled(incident, "middle", "T-0042", approve=False)
    second = settled(incident, "late", "T-0043", approve=False)
    late = settled(incident, "early", "T-0044", approve=True)
    compensation = compensation_propose(
        case=late.case,
        actor=person("operator", roles.OPERATOR),
        reason="Seat draw error left this player short-stacked.",
        entries=[CompensationEntry(player="p000002", amount=2500)],
    )

    page = signed_in_page("tournament_manager", username="manager")
    waiting = page.locator("#waiting")
    expect(waiting.get_by_role("link", name=f"Settlement #{first.pk}")).to_be_visible()
    expect(waiting.get_by_role("link", name=f"Compensation #{compensation.pk}")).to_be_visible()
    screenshot(page, "guide-manager-01-waiting")

    # Reject one settlement, with the reason the operator will read.
    waiting.get_by_role("link", name=f"Settlement #{second.pk}").click()
    page.get_by_role("link", name="Reject…").click()
    page.get_by_label("Reason").fill("The start time looks wrong; confirm it with the server.")
    page.get_by_role("button", name=f"Reject settlement #{second.pk}").click()
    expect(page.get_by_text(f"Settlement #{second.pk} rejected.")).to_be_visible()

    # Approve another: the confirmation restates what will be paid.
    page.goto(f"/settlements/{first.pk}/")
    page.get_by_role("link", name="Approve…").click()
    expect(page.locator("#confirm-statement")).to_have_text(
        f"Approve settlement #{first.pk}: 20 players, 400.00 USD from the pool."
    )
    page.get_by_label("Reason").fill("Chip counts match the server log.")
    page.get_by_role("button", name=f"Approve settlement #{first.pk}").click()
    expect(page.get_by_text(f"Settlement #{first.pk} approved.")).to_be_visible()

    # Compensation: approve after reading who gets what.
    page.get_by_role("link", name="Compensation", exact=True).click()
    page.locator("#compensation-list").get_by_role(
        "link", name=f"Compensation #{compensation.pk}"
    ).click()
    page.get_by_role("link", name="Approve…").click()
    expect(page.locator("#confirm-statement")).to_have_text(
        f"Approve compensation #{compensation.pk}: 1 player, 25.00 USD paid by the house."
    )
    page.get_by_label("Reason").fill("Seat draw error confirmed by support.")
    page.get_by_role("button", name=f"Approve compensation #{compensation.pk}").click()
    expect(page.get_by_text(f"Compensation #{compensation.pk} approved.")).to_be_visible()
    assert Compensation.objects.get().status == CompensationStatus.APPROVED

    # Many settlements of one incident at once.
    more = [
        settled(incident, stage, f"T-01{number}", approve=False)
        for number, stage in enumerate(("middle", "late", "pre"))
    ]
    page.goto(f"/incidents/{incident.pk}/tournaments/")
    page.get_by_role("link", name="Approve settlements").click()
    expect(page.locator("#approve-selection")).to_contain_text("all 3")
    page.get_by_role("button", name="Review the approval of 3").click()
    expect(page.locator("#confirm-statement")).to_contain_text("Approve 3 settlements")
    expect(page.locator("#approve-totals")).to_contain_text("USD")
    page.get_by_label("Reason").fill("Checked against the snapshots of the outage.")
    page.get_by_role("button", name="Approve 3").click()
    wait_for_job(page, 3)
    approved = Settlement.objects.filter(pk__in=[settlement.pk for settlement in more])
    assert {settlement.status for settlement in approved} == {SettlementStatus.APPROVED}

    # An individual case: one player hit while the tournament went on.
    page.get_by_role("link", name="Individual cases").click()
    page.get_by_role("link", name="Open an individual case").first.click()
    page.get_by_label("Tournament id").fill("T-0042")
    page.get_by_label("Players concerned").fill("p000004")
    page.get_by_label("What happened to them").fill("Disconnected two hands before the crash.")
    page.get_by_role("button", name="Open the case").click()
    expect(page.get_by_role("heading", name="Individual case")).to_be_visible()
    screenshot(page, "guide-manager-02-individual-case")
    page.get_by_role("link", name="Resolve the case…").click()
    page.get_by_label("Outcome").fill("Nothing more is owed: the settlement pays the player.")
    page.get_by_role("button", name="Review").click()
    page.get_by_role("button", name=re.compile("^Resolve")).click()
    expect(page.locator("#case-individual")).to_contain_text("Nothing more is owed")


def test_the_support_guide(signed_in_page, screenshot):
    incident = outage()
    settlement = settled(incident, "middle", "T-0077", approve=True)

    page = signed_in_page("auditor", username="agent")
    page.get_by_role("link", name="Players").click()
    page.get_by_label("Player id").fill("p000003")
    page.get_by_role("button", name="Find").click()
    expect(page).to_have_url(re.compile(r"/players/\?q=p000003$"))
    cases = page.locator("#player-cases tbody tr")
    expect(cases).to_have_count(1)
    expect(cases.first).to_contain_text("T-0077")
    expect(cases.first).to_contain_text("USD")
    # The "Searching…" sign has faded out before the picture is taken.
    page.wait_for_function(
        "() => getComputedStyle(document.getElementById('players-loading')).opacity === '0'"
    )
    screenshot(page, "guide-support-01-player")

    cases.first.get_by_role("link", name=re.compile("^Statement")).click()
    statement = page.locator("#statement")
    expect(statement).to_contain_text("How it was worked out")
    expect(statement).to_contain_text("Buy-in back")
    page.get_by_text("Plain text to paste").click()
    expect(statement.locator("pre")).to_contain_text("Statement for player p000003")
    screenshot(page, "guide-support-02-statement")

    page.get_by_role("link", name="Printable page").click()
    expect(page.locator("main.statement--print")).to_contain_text("What you receive")

    page.goto(f"/settlements/{settlement.pk}/statement/?player=p000030")
    expect(page.locator("#statement")).to_contain_text("knocked out before the crash")


def test_the_auditors_guide(signed_in_page, screenshot):
    incident = outage()
    settlement = settled(incident, "late", "T-0042", approve=True)

    page = signed_in_page("auditor")
    expect(page.locator("#waiting")).to_contain_text("Access review due now")
    page.get_by_role("link", name="History").click()
    expect(page.get_by_role("heading", name="Event log")).to_be_visible()
    expect(page.get_by_text("Verifies", exact=True)).to_be_visible()
    page.get_by_label("Incident #").fill(str(incident.pk))
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(rf"incident={incident.pk}"))
    page.get_by_role("link", name="Business events").click()
    expect(page).to_have_url(re.compile(r"view=events"))
    browser = page.locator("#history-browser")
    for event in ("Incident reported", "Snapshot loaded", "Settlement approved"):
        expect(browser).to_contain_text(event)
    with page.expect_download() as download:
        page.get_by_role("link", name="Export as CSV").click()
    with open(download.value.path(), newline="") as exported:
        events = {row["event"] for row in csv.DictReader(exported)}
    assert {"settlement_prepared", "settlement_approved"} <= events
    with page.expect_download() as download:
        page.get_by_role("link", name="Export the head").click()
    with open(download.value.path()) as exported:
        head = json.load(exported)
    assert head["verified"] is True
    expect(page.get_by_text(f"Head: {head['head']}")).to_be_visible()

    page.get_by_role("link", name=f"Timeline of incident #{incident.pk}").click()
    timeline = page.locator("#timeline")
    expect(timeline.locator("li").first).to_contain_text("Incident reported")
    expect(timeline).to_contain_text("Chip counts match the server log.")
    screenshot(page, "guide-auditor-01-timeline")

    page.goto(f"/settlements/{settlement.pk}/")
    with page.expect_download() as ledger:
        page.get_by_role("link", name="Download the ledger (CSV)").click()
    with open(ledger.value.path(), newline="") as exported:
        rows = list(csv.DictReader(exported))
    assert len(rows) == settlement.line_count

    page.get_by_role("link", name="Payments").first.click()
    page.get_by_role("link", name="Was every approved line paid exactly once?").click()
    answer = page.locator("#payments-answer")
    expect(answer.get_by_role("heading")).to_have_text("Not yet")


class Wallet:
    """The cashier's side of the API, called as the integrator's code would call it."""

    def __init__(self, base_url: str):
        user = person("wallet", roles.CASHIER)
        _, self.token = api_token_create(user=user, name="wallet system")
        self.base_url = base_url

    def call(self, path: str, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            self.base_url + path,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())


def test_the_cashier_integrators_guide(signed_in_page, screenshot, live_server):
    settlement = settled(None, "late", "T-PAY", approve=True)
    wallet = Wallet(live_server.url)

    # Read the feed from the start, then pay every line but one.
    page_one = wallet.call("/api/v1/ledger?limit=1000")
    lines = page_one["lines"]
    assert len(lines) == settlement.line_count > 1
    assert [line["sequence"] for line in lines] == list(range(1, len(lines) + 1))
    assert page_one["more"] is False
    caught_up = wallet.call(f"/api/v1/ledger?after={page_one['cursor']}")
    assert caught_up["lines"] == [] and caught_up["cursor"] == page_one["cursor"]

    at = timezone.now().isoformat()

    def confirmation(line, status, reference):
        return {
            "idempotency_key": line["idempotency_key"],
            "status": status,
            "external_reference": reference,
            "at": at,
            "amount": line["amount"],
        }

    bounced, paid = lines[0], lines[1:]
    batch = {
        "confirmations": [confirmation(line, "paid", f"wal-{line['sequence']}") for line in paid]
    }
    assert wallet.call("/api/v1/ledger/confirmations", batch)["recorded"] == len(paid)
    assert wallet.call("/api/v1/ledger/confirmations", batch)["already_recorded"] == len(paid)
    failed = {"confirmations": [confirmation(bounced, "failed", "declined: account closed")]}
    assert wallet.call("/api/v1/ledger/confirmations", failed)["recorded"] == 1

    # What the desk sees of it.
    page = signed_in_page("operator")
    page.goto(f"/settlements/{settlement.pk}/")
    summary = page.locator(".payments-summary")
    expect(summary.locator("tbody tr").first).to_have_text(
        re.compile(rf"Lines\s+{len(lines)}\s+{len(paid)}\s+1\s+0\s+0")
    )
    screenshot(page, "guide-cashier-01-settlement-payments")

    # The desk re-issues the failed line under four eyes; the feed carries it under a new key.
    page.goto("/payments/")
    page.locator("#payments-queue tbody tr").get_by_role("link", name="Re-issue").click()
    page.get_by_label("Reason").fill("The player gave a new bank account.")
    page.get_by_role("button", name="Propose the re-issue").click()
    expect(page.get_by_text("another Tournament Manager decides on it")).to_be_visible()
    reissue = Reissue.objects.get()
    reissue_approve(
        reissue=reissue, actor=person("manager", roles.TOURNAMENT_MANAGER), reason="Checked."
    )
    again = wallet.call(f"/api/v1/ledger?after={page_one['cursor']}")["lines"]
    assert [(line["idempotency_key"], line["reissue_of"]) for line in again] == [
        (f"R{reissue.pk}-1", bounced["idempotency_key"])
    ]
