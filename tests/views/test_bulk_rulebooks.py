"""An outage whose tournaments ran under several rulebooks: the same bulk steps settle each case
under its own version, and every confirmation counts them version by version."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from settlements.models import Job, Settlement
from settlements.rules import parse_policy
from settlements.services.rulebooks import rulebook_version_approve, rulebook_version_propose
from settlements.workflow import CaseStatus, SettlementStatus
from tests.views.conftest import HTMX, assert_full_page, assert_partial, job_of, signed_in

pytestmark = pytest.mark.django_db

CONFIRM = {"step": "confirm"}


def selection(html: str) -> str:
    return re.search(r'name="selection" value="([^"]*)"', html).group(1)


def versions_table(html: str) -> str:
    return html[html.index('id="bulk-versions"') :].split("</table>")[0]


@pytest.fixture
def eu_main(tournament_manager, second_manager):
    """eu-main version 1, in force for tournaments starting a week from now: the late stage
    paid by chip position instead of chip equity."""
    effective = timezone.now() + timedelta(days=7)
    version = rulebook_version_propose(
        key="eu-main",
        parameters={"late_formula": "chip_position"},
        text="Late crashes pay by chip position.",
        effective_from=effective,
        actor=tournament_manager,
        reason="New market",
    )
    return rulebook_version_approve(version=version, actor=second_manager, reason="ok")


@pytest.fixture
def mixed_outage(load_case, eu_main):
    """Three late cases under default v1 and two under eu-main v1, in one incident."""
    starts = (eu_main.effective_from + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    default = [load_case(stage="late", tournament_id=f"D{n}") for n in range(3)]
    eu = [
        load_case(stage="late", tournament_id=f"E{n}", rulebook="eu-main", starts_at=starts)
        for n in range(2)
    ]
    return default, eu


def test_one_outage_under_two_rulebooks_settles_in_the_same_bulk_steps(
    as_operator, second_manager, incident, mixed_outage, eu_main
):
    default, eu = mixed_outage
    prepare = reverse("incident_prepare_ready", args=[incident.pk])
    html = assert_full_page(as_operator.get(prepare))
    table = versions_table(html)
    assert re.search(r"default v1</a></td>\s*<td class=\"num\">3</td>", table)
    assert re.search(r"eu-main v1</a></td>\s*<td class=\"num\">2</td>", table)
    assert "600.00 USD" in table and "400.00 USD" in table  # their prize pools
    assert job_of(as_operator.post(prepare, {"selection": selection(html), **CONFIRM}))

    # Each case settled under its own version, never the other's.
    for case in [*default, *eu]:
        case.refresh_from_db()
        settlement = Settlement.objects.get(case=case)
        assert parse_policy(settlement.policy) == parse_policy(case.rulebook_version.parameters)
        expected = "chip_position" if case in eu else "chip_equity"
        assert case.status == CaseStatus.PREPARED and settlement.remedy == expected
    assert {case.rulebook_version for case in eu} == {eu_main}

    submit = reverse("incident_submit_prepared", args=[incident.pk])
    html = assert_full_page(as_operator.get(submit))
    table = versions_table(html)
    assert ">3</td>" in table and ">2</td>" in table
    job_of(as_operator.post(submit, {"selection": selection(html), **CONFIRM}))

    as_approver = signed_in(second_manager)
    approve = reverse("incident_approve", args=[incident.pk])
    chosen = selection(assert_full_page(as_approver.get(approve)))
    check = assert_partial(as_approver.post(approve, {"selection": chosen}, **HTMX), "bulk-form")
    assert "Approve 5 settlements" in check
    table = versions_table(check)
    assert "default v1" in table and "eu-main v1" in table
    assert "600.00 USD" in table and "400.00 USD" in table
    done = as_approver.post(approve, {"selection": chosen, "reason": "checked", **CONFIRM})
    assert job_of(done).status == Job.Status.DONE
    statuses = set(Settlement.objects.values_list("status", flat=True))
    assert statuses == {SettlementStatus.APPROVED}


def test_a_grouped_decision_counts_its_cases_by_version(as_marketing, load_case, eu_main, incident):
    starts = (eu_main.effective_from + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    load_case(type="freeroll", stage="middle", tournament_id="FD")
    load_case(
        type="freeroll", stage="middle", tournament_id="FE", rulebook="eu-main", starts_at=starts
    )
    url = reverse("incident_decide", args=[incident.pk])
    html = assert_full_page(as_marketing.get(url))
    answer = {"selection": selection(html), "option": "chip_equity", "reason": "server gone"}
    check = assert_partial(as_marketing.post(url, answer, **HTMX), "bulk-form")
    assert "for 2 freeroll cases" in check
    table = versions_table(check)
    assert "default v1" in table and "eu-main v1" in table and "In all" not in table
    job = job_of(as_marketing.post(url, {**answer, **CONFIRM}))
    assert job.status == Job.Status.DONE
