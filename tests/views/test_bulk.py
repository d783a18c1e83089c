"""The bulk path through an outage: one action over many cases or settlements, run as a job."""

import io
import re
import struct
import zipfile
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from settlements.models import Event, Job, JobItem
from settlements.money import format_in_unit
from settlements.services.decisions import decision_record
from settlements.services.settlements import settlement_approve, settlement_prepare
from settlements.views import cached_previews
from settlements.workflow import CaseStatus, SettlementStatus
from tests.test_archive import raw_zip
from tests.views.conftest import (
    HTMX,
    assert_full_page,
    assert_partial,
    job_of,
    submitted_settlements,
)

pytestmark = pytest.mark.django_db


def _confirmed(client, url: str):
    """The confirmation page of a bulk prepare or submit, then its confirming post."""
    html = assert_full_page(client.get(url))
    return client.post(url, {"selection": selection(html), "step": "confirm"})


def test_prepare_every_ready_case_then_submit_them_all(as_operator, incident, late_cases):
    prepare = reverse("incident_prepare_ready", args=[incident.pk])
    job = job_of(_confirmed(as_operator, prepare))
    assert job.kind == Job.Kind.PREPARE and job.status == Job.Status.DONE
    assert {c.status for c in incident.cases.all()} == {CaseStatus.PREPARED}
    submit = reverse("incident_submit_prepared", args=[incident.pk])
    job = job_of(_confirmed(as_operator, submit))
    assert job.items.filter(status=JobItem.Status.DONE).count() == 3
    assert Event.objects.filter(type=Event.Type.SETTLEMENT_SUBMITTED).count() == 3
    # Nothing left to submit: the page says so and offers no button; a post starts no job.
    html = as_operator.get(submit).content.decode()
    assert "No settlement of this incident is prepared" in html and 'value="confirm"' not in html
    again = as_operator.post(submit, {"selection": "", "step": "confirm"})
    assert again["Location"] == reverse("incident_tournaments", args=[incident.pk])


def test_bulk_prepare_and_submit_say_what_they_will_do_before_doing_it(
    as_operator, operator, incident, late_cases, load_case
):
    load_case(type="satellite", stage="middle", tournament_id="S-WAIT")
    prepare = reverse("incident_prepare_ready", args=[incident.pk])
    html = assert_full_page(as_operator.get(prepare))
    assert "Prepare 3 settlements" in html and 'value="confirm">Prepare 3</button>' in html
    assert "600.00 USD" in html  # three prize pools of 200.00 USD
    assert "Chip equity" in html and ": 3 cases" in html
    assert "1 case: waiting for the Marketing Manager" in html
    # Nothing starts on the way in, nor on a post that is not the confirmation.
    as_operator.post(prepare)
    assert not Job.objects.exists()
    assert_partial(as_operator.get(prepare, **HTMX), "bulk-form")

    settlement_prepare(case=late_cases[0], actor=operator)
    submit = reverse("incident_submit_prepared", args=[incident.pk])
    html = assert_full_page(as_operator.get(submit))
    assert "Submit 1 prepared settlement" in html and 'id="bulk-totals"' in html
    assert "2 cases: ready, not prepared yet" in html

    # A case prepared by someone else after the confirmation was shown: nothing is done.
    html = as_operator.get(prepare).content.decode()
    settlement_prepare(case=late_cases[1], actor=operator)
    response = as_operator.post(prepare, {"selection": selection(html), "step": "confirm"})
    assert response.status_code == 422 and "Nothing was done: 1 of the chosen cases" in (
        response.content.decode()
    )
    assert not Job.objects.exists()


SELECTION = re.compile(r'name="selection" value="([\d,]*)"')


def selection(html: str) -> str:
    return SELECTION.search(html).group(1)


def test_approve_many_restates_count_totals_and_skips_before_approving(
    as_manager, operator, incident, late_cases
):
    settlements = submitted_settlements(late_cases, operator)
    url = reverse("incident_approve", args=[incident.pk])
    html = assert_full_page(as_manager.get(url))
    assert html.count('id="approve-choice"') == 1 and "Review the approval of 3" in html
    # Leaving one out: the link says so and the selection drops it.
    out = f"out={settlements[2].pk}"
    assert f"?{out}" in html
    html = assert_partial(as_manager.get(f"{url}?{out}", **HTMX), "bulk-form")
    assert "except the 1 you left out" in html and "Review the approval of 2" in html
    chosen = selection(html)
    assert chosen == f"{settlements[0].pk},{settlements[1].pk}"
    confirm = as_manager.post(f"{url}?{out}", {"selection": chosen}, **HTMX)
    html = assert_partial(confirm, "bulk-form")
    assert "Approve 2 settlements" in html and "This field is required" not in html
    cash = sum(s.totals["cash"]["pool"] for s in settlements[:2] if "cash" in s.totals)
    assert f"{cash / 100:,.2f}" in html
    no_reason = as_manager.post(url, {"selection": chosen, "step": "confirm"}, **HTMX)
    assert no_reason.status_code == 422 and "Approve 2 settlements" in no_reason.content.decode()
    done = as_manager.post(
        url, {"selection": chosen, "reason": "outage checked", "step": "confirm"}
    )
    job = job_of(done)
    assert job.params == {"reason": "outage checked"}
    statuses = [s.status for s in type(settlements[0]).objects.order_by("pk")]
    assert statuses == [SettlementStatus.APPROVED] * 2 + [SettlementStatus.AWAITING_APPROVAL]


def test_approve_many_names_each_unit_as_the_other_screens_do(
    as_manager, operator, incident, load_case
):
    cases = [
        load_case(type="regular", stage="late", tournament_id="R1"),
        load_case(type="satellite", stage="late", tournament_id="S1"),
    ]
    settlements = submitted_settlements(cases, operator)
    units = {unit for s in settlements for unit in s.totals}
    assert {"cash", "tickets"} <= units
    url = reverse("incident_approve", args=[incident.pk])
    html = assert_partial(
        as_manager.post(url, {"selection": ",".join(str(s.pk) for s in settlements)}, **HTMX),
        "bulk-form",
    )
    table = html[html.index('id="approve-totals"') : html.index("</table>")]
    rows = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td>", table)
    names = {"cash": "Cash", "tdollars": "T$", "tickets": "Tickets", "fpp": "FPP"}
    # Seats and FPP are no currency's: one row each, whatever the tournaments' currencies.
    expected = [
        ("USD" if unit in ("cash", "tdollars") else "—", names[unit])
        for unit in ("cash", "tdollars", "tickets", "fpp")
        if unit in units
    ]
    assert rows == expected
    assert not re.search(r">(cash|tdollars|tickets|fpp)<", table)


def test_approve_many_pages_the_list_but_takes_in_every_page(
    as_manager, operator, incident, load_case
):
    cases = [load_case(stage="late", tournament_id=f"P{n:02}") for n in range(27)]
    middle = load_case(stage="middle", tournament_id="MID")
    settlements = submitted_settlements([*cases, middle], operator)
    url = reverse("incident_approve", args=[incident.pk])
    html = assert_full_page(as_manager.get(url))
    assert html.count('aria-label="Leave out') == 25 and "Page 1 of 2" in html
    assert "Review the approval of 28" in html
    assert selection(html) == ",".join(str(s.pk) for s in settlements)
    second = assert_partial(as_manager.get(url, {"page": 2}, **HTMX), "bulk-form")
    assert second.count('aria-label="Leave out') == 3
    assert selection(second) == selection(html)
    late = assert_partial(as_manager.get(url, {"stage": "late"}, **HTMX), "bulk-form")
    assert "Review the approval of 27" in late and "MID" not in late
    # The page's links keep the filter and the left-out ones.
    left = assert_full_page(as_manager.get(url, {"stage": "late", "out": settlements[0].pk}))
    assert f"stage=late&amp;out={settlements[0].pk}&amp;page=2" in left
    job = job_of(
        as_manager.post(
            f"{url}?stage=late", {"selection": selection(late), "reason": "ok", "step": "confirm"}
        )
    )
    assert job.items.count() == 27


def test_a_paged_approval_restates_count_totals_and_skips_of_the_whole_selection(
    operator, incident, load_case, django_user_model, monkeypatch
):
    from settlements.selectors import approvals
    from tests.conftest import make_user
    from tests.views.conftest import signed_in

    both = make_user(django_user_model, "both", "operator", "tournament_manager")
    cases = [load_case(stage="late", tournament_id=f"P{n:02}") for n in range(30)]
    theirs = submitted_settlements(cases[:26], operator)
    own = submitted_settlements(cases[26:], both)
    monkeypatch.setattr(approvals, "SKIPPED_SHOWN", 3)
    client, url = signed_in(both), reverse("incident_approve", args=[incident.pk])
    html = assert_full_page(client.get(url))
    assert "Page 1 of 2" in html and html.count('aria-label="Leave out') == 25
    assert "Review the approval of 26" in html and "4 will be skipped" in html
    assert html.count("You prepared") == 3 and "and 1 more" in html
    chosen = selection(html)
    assert chosen == ",".join(str(s.pk) for s in [*theirs, *own])
    cash = sum(sum(s.totals["cash"].values()) for s in theirs)
    for confirm in (
        assert_full_page(client.post(url, {"selection": chosen})),
        assert_partial(client.post(url, {"selection": chosen}, **HTMX), "bulk-form"),
    ):
        assert "Approve 26 settlements" in confirm and f"{cash / 100:,.2f}" in confirm
        assert "4 will be skipped" in confirm and "and 1 more" in confirm
        assert 'value="confirm">Approve 26</button>' in confirm and selection(confirm) == chosen
    job = job_of(client.post(url, {"selection": chosen, "reason": "ok", "step": "confirm"}))
    assert sorted(int(key) for key in job.items.values_list("key", flat=True)) == [
        s.pk for s in theirs
    ]


def test_approve_many_refuses_a_selection_that_changed_meanwhile(
    as_manager, operator, second_manager, incident, late_cases
):
    settlements = submitted_settlements(late_cases, operator)
    url = reverse("incident_approve", args=[incident.pk])
    chosen = selection(as_manager.get(url).content.decode())
    settlement_approve(settlement=settlements[0], actor=second_manager, reason="mine")
    response = as_manager.post(url, {"selection": chosen, "reason": "r", "step": "confirm"})
    assert response.status_code == 422
    html = response.content.decode()
    assert "1 of the chosen settlements is no longer waiting" in html
    assert "Review the approval of 2" in html
    assert not Job.objects.exists()


def test_approve_many_lists_own_work_as_skipped(
    as_operator, operator, incident, late_cases, django_user_model
):
    from tests.conftest import make_user

    operator.groups.add(make_user(django_user_model, "x", "tournament_manager").groups.get())
    settlement = submitted_settlements(late_cases[:1], operator)[0]
    url = reverse("incident_approve", args=[incident.pk])
    assert "You prepared" in as_operator.get(url).content.decode()
    response = as_operator.post(url, {"selection": str(settlement.pk)})
    assert response.status_code == 422
    assert "None of the chosen settlements is one you may approve" in response.content.decode()


def test_a_selection_of_junk_chooses_nothing(as_manager, operator, incident, late_cases):
    submitted_settlements(late_cases[:1], operator)
    url = reverse("incident_approve", args=[incident.pk])
    junk = "x,-1,99999999999999999999999,١٢, ,"
    response = as_manager.post(url, {"selection": junk}, **HTMX)
    assert response.status_code == 422
    assert "None of the chosen settlements" in response.content.decode()
    page = as_manager.get(url, {"out": junk})
    assert page.status_code == 200 and "Review the approval of 1" in page.content.decode()


CONFIRM = {"step": "confirm"}


def test_a_grouped_decision_is_checked_before_it_is_recorded(as_marketing, incident, load_case):
    cases = [load_case(type="freeroll", stage="middle", tournament_id=f"FM{n}") for n in range(2)]
    url = reverse("incident_decide", args=[incident.pk])
    html = assert_full_page(as_marketing.get(url))
    when = (timezone.localtime() + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    answer = {
        "selection": selection(html),
        "option": "reschedule",
        "reason": "server fixed",
        "reschedule_at": when,
    }
    # Each answer in words, and each case under it in figures: a reschedule pays nothing now.
    table = html[html.index('id="decide-options"') :]
    assert "Played again later" in table and "nothing paid now" in table
    assert table.count('data-option="chip_equity"') == 2 and "players paid, in all" in table
    assert "Most " in table and "chip rank 1" in table
    check = assert_partial(as_marketing.post(url, answer, **HTMX), "bulk-form")
    assert "Check before you record" in check and "for 2 freeroll cases" in check
    assert "server fixed" in check and 'id="confirm-invited"' in check
    remaining = sum(case.remaining for case in cases)
    assert f"{remaining} players in all are invited, and nothing is paid now" in check
    assert 'value="confirm"' in check and 'name="reschedule_at"' in check
    assert 'id="confirm-totals"' not in check
    assert not Job.objects.exists() and not any(case.decisions.exists() for case in cases)
    back = assert_partial(as_marketing.post(url, {**answer, "step": "edit"}, **HTMX), "bulk-form")
    assert 'id="decide-previews"' in back and not Job.objects.exists()
    job = job_of(as_marketing.post(url, {**answer, **CONFIRM}))
    assert job.status == Job.Status.DONE
    assert all(case.decisions.get().invite_scope == "remaining" for case in cases)


def test_a_grouped_decision_says_what_its_answer_pays_over_every_chosen_case(
    as_marketing, incident, load_case, monkeypatch
):
    from settlements.views import bulk

    cases = [load_case(type="freeroll", stage="middle", tournament_id=f"FT{n}") for n in range(3)]
    # More cases chosen than a page shows: every one of them is added up.
    monkeypatch.setattr(bulk, "BULK_PER_PAGE", 2)
    url = reverse("incident_decide", args=[incident.pk])
    html = assert_full_page(as_marketing.get(url))
    answer = {"selection": selection(html), "option": "chip_equity", "reason": "fair"}
    check = assert_partial(as_marketing.post(url, answer, **HTMX), "bulk-form")
    paid = sum(
        preview.totals.by_unit.get("cash", 0)
        for case in cases
        for preview in cached_previews.decision_previews(case)
        if preview.option == "chip_equity"
    )
    totals = check[check.index('id="confirm-totals"') :]
    assert paid > 0 and "USD" in totals
    assert escape(format_in_unit(paid, "cash", "USD")) in totals


def test_after_one_kind_is_decided_the_next_kind_waiting_is_linked(
    as_marketing, incident, load_case
):
    for n in range(2):
        load_case(type="satellite", stage="middle", tournament_id=f"SX{n}")
    load_case(type="freeroll", stage="middle", tournament_id="FX")
    url = reverse("incident_decide", args=[incident.pk])
    html = assert_full_page(as_marketing.get(url))
    assert "Satellite tournaments at the middle stage" in html
    response = as_marketing.post(
        url, {"selection": selection(html), "option": "chip_equity", "reason": "fair", **CONFIRM}
    )
    job = job_of(response)
    page = assert_full_page(as_marketing.get(response["Location"]))
    link = page[page.index('id="job-next"') :]
    assert "Next: Freeroll, middle (1)" in link and "?group=freeroll%7Cmiddle%7C" in link
    # The kind answered has no case left: said so, with the way on to the next.
    gone = assert_full_page(as_marketing.get(url, {"group": job.params["group"]}))
    assert 'id="decide-gone"' in gone and "Next: Freeroll, middle (1)" in gone
    assert 'id="decide-previews"' not in gone


def test_a_grouped_decision_names_the_first_cases_and_counts_the_rest(
    as_marketing, incident, load_case, monkeypatch
):
    from settlements.views import bulk

    cases = [load_case(type="freeroll", stage="middle", tournament_id=f"FN{n}") for n in range(3)]
    monkeypatch.setattr(bulk, "CONFIRM_NAMED", 1)
    url = reverse("incident_decide", args=[incident.pk])
    html = assert_full_page(as_marketing.get(url))
    when = (timezone.localtime() + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    answer = {
        "selection": selection(html),
        "option": "reschedule",
        "reason": "r",
        "reschedule_at": when,
    }
    check = assert_partial(as_marketing.post(url, answer, **HTMX), "bulk-form")
    named = check[check.index('id="confirm-cases"') :]
    assert "for 3 freeroll cases" in check and named.count("<li>") == 1
    assert f"#{cases[0].pk} · FN0" in named and "and 2 more" in named
    # Every chosen case's players are counted, not only those named.
    remaining = sum(case.remaining for case in cases)
    assert f"{remaining} players in all are invited" in check


def test_decide_alike_cases_together_each_with_its_own_record(
    as_marketing, marketing_manager, incident, load_case
):
    cases = [load_case(type="satellite", stage="middle", tournament_id=f"S{n}") for n in range(3)]
    url = reverse("incident_decide", args=[incident.pk])
    html = assert_full_page(as_marketing.get(url))
    assert 'id="decide-previews"' in html and "paid" in html
    assert "Record the decision for 3 cases" in html
    left = assert_partial(as_marketing.get(url, {"out": cases[2].pk}, **HTMX), "bulk-form")
    assert "Record the decision for 2 cases" in left and "except the 1 you left out" in left
    response = as_marketing.post(
        f"{url}?out={cases[2].pk}",
        {"selection": selection(left), "option": "chip_equity", "reason": "fair", **CONFIRM},
    )
    assert job_of(response).status == Job.Status.DONE
    assert not cases[2].decisions.exists()
    for case in cases[:2]:
        assert case.decisions.get().decided_by == marketing_manager
    missing = as_marketing.post(url, {"selection": str(cases[2].pk), "reason": "fair"}, **HTMX)
    assert missing.status_code == 422 and "Choose the answer" in missing.content.decode()
    # Decided meanwhile: the post names the change and records nothing.
    stale = as_marketing.post(
        url, {"selection": f"{cases[0].pk},{cases[2].pk}", "option": "chip_equity", "reason": "x"}
    )
    assert stale.status_code == 422 and "no longer waiting" in stale.content.decode()
    assert not cases[2].decisions.exists()


def test_decide_reschedules_alike_freerolls_to_one_new_date(
    as_marketing, marketing_manager, incident, load_case
):
    cases = [load_case(type="freeroll", stage="early", tournament_id=f"FE{n}") for n in range(2)]
    url = reverse("incident_decide", args=[incident.pk])
    html = assert_full_page(as_marketing.get(url))
    assert 'name="reschedule_at"' in html
    chosen = selection(html)
    answer = {"selection": chosen, "option": "reschedule", "reason": "rerun it"}

    # The same checks as one case's decision, before any job starts.
    undated = as_marketing.post(url, answer, **HTMX)
    assert (
        undated.status_code == 422 and "A reschedule needs the new date" in undated.content.decode()
    )
    past = (timezone.localtime() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    late = as_marketing.post(url, {**answer, "reschedule_at": past}, **HTMX)
    assert late.status_code == 422 and "must be in the future" in late.content.decode()
    assert not Job.objects.exists()

    when = (timezone.localtime() + timedelta(days=3)).replace(second=0, microsecond=0)
    job = job_of(
        as_marketing.post(
            url, {**answer, "reschedule_at": when.strftime("%Y-%m-%dT%H:%M"), **CONFIRM}
        )
    )
    assert job.status == Job.Status.DONE
    for case in cases:
        decision = case.decisions.get()
        assert (decision.option, decision.reschedule_at, decision.invite_scope) == (
            "reschedule",
            when,
            "entrants",
        )
        assert decision.decided_by == marketing_manager


def test_a_date_typed_before_choosing_another_answer_is_not_recorded(
    as_marketing, incident, load_case
):
    case = load_case(type="freeroll", stage="early", tournament_id="FN")
    url = reverse("incident_decide", args=[incident.pk])
    when = (timezone.localtime() + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M")
    as_marketing.post(
        url,
        {
            "selection": str(case.pk),
            "option": "no_reschedule",
            "reason": "r",
            "reschedule_at": when,
            **CONFIRM,
        },
    )
    decision = case.decisions.get()
    assert (decision.option, decision.reschedule_at) == ("no_reschedule", None)


def test_no_date_is_asked_where_no_answer_reschedules(as_marketing, incident, load_case):
    load_case(type="satellite", stage="middle", tournament_id="SN")
    html = assert_full_page(as_marketing.get(reverse("incident_decide", args=[incident.pk])))
    assert 'id="decide-previews"' in html and 'name="reschedule_at"' not in html


def test_decide_pages_the_previews_and_answers_every_page(
    as_marketing, incident, load_case, monkeypatch
):

    cases = [
        load_case(type="freeroll", stage="middle", tournament_id=f"F{n:02}") for n in range(27)
    ]
    previewed = []
    preview = cached_previews.decision_previews_of
    monkeypatch.setattr(
        cached_previews,
        "decision_previews_of",
        lambda cases: previewed.extend(case.pk for case in cases) or preview(cases),
    )
    url = reverse("incident_decide", args=[incident.pk])
    html = assert_full_page(as_marketing.get(url))
    assert "Page 1 of 2" in html and "Record the decision for 27 cases" in html
    # Only the page's cases are previewed, the cache read once for them all.
    assert previewed == [case.pk for case in cases[:25]]
    second = assert_partial(as_marketing.get(url, {"page": 2}, **HTMX), "bulk-form")
    assert second.count('aria-label="Leave out') == 2
    assert selection(second) == ",".join(str(c.pk) for c in cases)
    previewed.clear()
    job = job_of(
        as_marketing.post(
            f"{url}?page=2",
            {"selection": selection(second), "option": "chip_equity", "reason": "r", **CONFIRM},
        )
    )
    assert job.items.filter(status=JobItem.Status.DONE).count() == 27
    # A post that starts its job shows no page, so it reads no preview.
    assert previewed == []


def test_many_snapshots_from_files_and_a_zip_each_with_its_outcome(
    as_operator, incident, snapshot_factory
):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("z1.json", snapshot_factory(tournament_id="Z1"))
        zipped.writestr("../escape.json", snapshot_factory(tournament_id="Z2"))
        zipped.writestr("broken.json", b'{"tournament": {}}')
    files = [
        SimpleUploadedFile("a.json", snapshot_factory(tournament_id="A1")),
        SimpleUploadedFile("ko.json", snapshot_factory(tournament_id="KO1", rebuys=True)),
        SimpleUploadedFile("all.zip", archive.getvalue()),
    ]
    url = reverse("incident_upload_many", args=[incident.pk])
    assert_full_page(as_operator.get(url))
    job = job_of(as_operator.post(url, {"files": files}))
    outcomes = {item.key: item for item in job.items.all()}
    assert outcomes["a.json"].status == outcomes["z1.json"].status == JobItem.Status.DONE
    assert outcomes["ko.json"].status == JobItem.Status.DONE
    assert outcomes["../escape.json"].status == JobItem.Status.FAILED
    assert "outside the archive" in outcomes["../escape.json"].message
    assert outcomes["broken.json"].status == JobItem.Status.FAILED
    assert sorted(incident.cases.values_list("tournament__operator_id", flat=True)) == [
        "A1",
        "KO1",
        "Z1",
    ]
    page = as_operator.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert "Case #" in page and "outside the archive" in page


def test_an_outage_of_more_than_a_hundred_loose_files_is_taken(as_operator, incident):
    # Django's own limit (100 files a request) refused this before the view.
    files = [SimpleUploadedFile(f"{number}.json", b"{}") for number in range(150)]
    url = reverse("incident_upload_many", args=[incident.pk])
    assert "Up to 1000 files" in as_operator.get(url).content.decode()
    job = job_of(as_operator.post(url, {"files": files}))
    assert job.items.count() == 150


def test_a_zip_with_too_many_files_is_refused_whole(settings, as_operator, incident):
    settings.ARCHIVE_MAX_FILES = 2
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for number in range(3):
            zipped.writestr(f"{number}.json", b"{}")
    url = reverse("incident_upload_many", args=[incident.pk])
    response = as_operator.post(url, {"files": [SimpleUploadedFile("x.zip", archive.getvalue())]})
    assert response.status_code == 422
    assert "holds 3 files" in response.content.decode()


def test_an_upload_of_unreadable_archives_is_a_form_error_and_starts_no_job(as_operator, incident):
    """A zip that lies about an entry's size, or is not a zip: each was a server error."""
    data = bytearray(zip_of(("lie.json", b" " * 50_000)))
    struct.pack_into("<I", data, 22, 10)
    struct.pack_into("<I", data, data.rfind(b"PK\x01\x02") + 24, 10)
    url = reverse("incident_upload_many", args=[incident.pk])
    files = [SimpleUploadedFile("a.zip", bytes(data)), SimpleUploadedFile("b.zip", b"PK")]
    response = as_operator.post(url, {"files": files})
    assert response.status_code == 422
    assert "cannot be unpacked" in response.content.decode()
    assert not Job.objects.exists()


def test_a_refused_name_is_stored_and_shown_written_out(as_operator, incident, snapshot_factory):
    archive = zip_of(("x\u202e.json", b"{}"), ("ok.json", snapshot_factory()))
    url = reverse("incident_upload_many", args=[incident.pk])
    job = job_of(as_operator.post(url, {"files": [SimpleUploadedFile("a.zip", archive)]}))
    refused = job.items.get(status=JobItem.Status.FAILED)
    assert refused.label == refused.key == "x\\u202e.json"
    page = as_operator.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert "x\\u202e.json" in page and "\u202e" not in page


def zip_of(*entries: tuple[str, bytes]) -> bytes:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as writer:
        for name, data in entries:
            writer.writestr(name, data)
    return archive.getvalue()


def test_entries_that_name_no_file_are_refused_one_by_one_not_a_server_error(
    as_operator, incident, snapshot_factory
):
    # "." and an empty name were an IndexError in the archive reader: a 500 for the whole load.
    archive = raw_zip(
        (b".", b"{}", False),
        (b"", b"{}", False),
        (b"dir/", b"{}", True),
        (b"bad\xff.json", b"{}", False),
        (b"ok.json", snapshot_factory(tournament_id="OK1"), False),
    )
    url = reverse("incident_upload_many", args=[incident.pk])
    job = job_of(as_operator.post(url, {"files": [SimpleUploadedFile("a.zip", archive)]}))
    refused = dict(job.items.filter(status=JobItem.Status.FAILED).values_list("key", "message"))
    assert set(refused) == {".", '""', "dir/", "bad\\xff.json"}
    assert "no file name" in refused["."] and "not UTF-8" in refused["bad\\xff.json"]
    assert job.items.get(key="ok.json").status == JobItem.Status.DONE
    page = as_operator.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert "bad\\xff.json" in page


def test_the_approval_list_shows_each_settlements_total_remedy_stage_and_decision(
    as_manager, operator, marketing_manager, incident, late_cases, load_case
):
    satellite = load_case(type="satellite", stage="middle", tournament_id="S-DECIDED")
    decision_record(case=satellite, actor=marketing_manager, option="chip_equity", reason="fair")
    submitted_settlements([*late_cases[:1], satellite], operator)
    html = assert_full_page(as_manager.get(reverse("incident_approve", args=[incident.pk])))
    table = html[html.index('id="approve-choice"') :]
    assert '<th scope="col">Remedy</th>' in table and "Pays in all" in table
    assert table.count("<td>Late</td>") == 1 and table.count("<td>Middle</td>") == 1
    assert table.count("<td>Chip equity split</td>") == 2
    assert table.count("<td>—</td>") == 1 and "<td>Split by chip equity</td>" in table
    assert '<td class="num" data-total><span class="amount">200.00 USD</span>' in table


def test_bulk_prepare_names_a_satellite_pool_by_the_seats_it_pays(as_operator, incident, load_case):
    load_case(stage="late", tournament_id="R-CASH")
    load_case(type="satellite", stage="late", tournament_id="S-SEATS")
    html = assert_full_page(as_operator.get(reverse("incident_prepare_ready", args=[incident.pk])))
    totals = re.search(r'<table[^>]*id="bulk-totals".*?</table>', html, re.S).group()
    rows = re.findall(r"<tr><td>USD</td><td>([^<]*)</td>", totals)
    # The regular's pool is cash; the satellite's is paid out as seats, and is never "Cash".
    assert rows == ["Cash", "Seats and T$"]
    assert "in seats and T$" in html  # the by-version column says so too


def test_the_bulk_approval_shows_bounty_money_apart_from_prizes(
    as_manager, operator, incident, load_case
):
    cases = [load_case(stage="late", tournament_id="PLAIN")]
    cases.append(load_case(stage="middle", entrants=30, tournament_id="KO", rebuys=True))
    settlements = submitted_settlements(cases, operator)
    bounties = sum(s.totals["cash"].get("bounty", 0) for s in settlements)
    cash = sum(sum(s.totals["cash"].values()) for s in settlements)
    assert bounties > 0
    url = reverse("incident_approve", args=[incident.pk])
    chosen = ",".join(str(s.pk) for s in settlements)
    html = assert_partial(as_manager.post(url, {"selection": chosen}, **HTMX), "bulk-form")
    table = html[html.index('id="approve-totals"') : html.index("</table>")]
    assert '<th scope="col" class="num">Bounties</th>' in table
    assert f'data-part="bounties">{bounties / 100:,.2f} USD<' in table
    assert f'data-part="prizes">{(cash - bounties) / 100:,.2f} USD<' in table
    assert f">{cash / 100:,.2f} USD<" in table


def test_a_file_a_load_refused_stays_on_the_incident_page_until_loaded(
    as_operator, incident, snapshot_factory
):
    url = reverse("incident_upload_many", args=[incident.pk])
    files = [
        SimpleUploadedFile("good.json", snapshot_factory(tournament_id="G1")),
        SimpleUploadedFile("broken.json", b'{"tournament": {}}'),
    ]
    job = job_of(as_operator.post(url, {"files": files}))
    why = job.items.get(key="broken.json").message
    assert why
    single = reverse("incident_upload", args=[incident.pk])
    page = as_operator.get(reverse("incident_tournaments", args=[incident.pk])).content.decode()
    refused = page.split('id="refused-files"')[1].split("</table>")[0]
    assert "broken.json" in refused and "good.json" not in refused
    assert escape(why) in refused
    assert f'href="{single}">Load it on its own' in refused
    assert "1 file not loaded" in page and ", 1 failed" in page
    job_page = as_operator.get(reverse("job_detail", args=[job.pk])).content.decode()
    assert f'href="{single}">Load it on its own' in job_page

    # The same file, fixed, taken by a later load: nothing is left out any more.
    fixed = SimpleUploadedFile("broken.json", snapshot_factory(tournament_id="B1"))
    job_of(as_operator.post(url, {"files": [fixed]}))
    page = as_operator.get(reverse("incident_tournaments", args=[incident.pk])).content.decode()
    assert 'id="refused-files"' not in page and "not loaded" not in page
