"""The rulebook pages: every desk role reads them; a Tournament Manager proposes through a form
that explains every parameter and names each error by its field; another approves or
withdraws after a confirmation restating what changes and from when. Full pages and htmx."""

from datetime import timedelta

import pytest
from django.utils import timezone

from settlements.models import RulebookVersion, Simulation
from settlements.rules.policy import POLICY_KEYS
from settlements.selectors.rulebooks import simulation_differences
from settlements.services.rulebooks import rulebook_version_approve, rulebook_version_propose
from settlements.services.snapshots import case_load_snapshot
from tests.views.conftest import HTMX, signed_in

pytestmark = pytest.mark.django_db


def form_data(**changes):
    data = {
        "key": "eu-main",
        "effective_from": (timezone.now() + timedelta(days=10)).strftime("%Y-%m-%dT%H:%M"),
        "text": "Fees are refunded **first**.",
        "reason": "Published policy",
    }
    for key in POLICY_KEYS:
        value = key.default
        data[f"p_{key.name}"] = ("true" if value else "false") if key.type is bool else value
    return data | changes


@pytest.fixture
def proposed(tournament_manager):
    return rulebook_version_propose(
        key="eu-main",
        parameters={"pre_pct": 10},
        text="Fees first.\n\nSecond paragraph.",
        effective_from=timezone.now() + timedelta(days=7),
        actor=tournament_manager,
        reason="New market",
    )


@pytest.mark.parametrize("client", ["as_operator", "as_marketing", "as_manager", "as_auditor"])
def test_every_desk_role_reads_the_rulebooks(client, request):
    client = request.getfixturevalue(client)
    listed = client.get("/rulebooks/")
    assert listed.status_code == 200
    assert b"default" in listed.content
    detail = client.get("/rulebooks/default/")
    assert b"Version 1" in detail.content
    version = client.get("/rulebooks/default/versions/1/")
    assert b"pre_pct" in version.content
    assert client.get("/rulebooks/default/", **HTMX).status_code == 200


def test_nobody_without_a_role_reads_them(as_nobody):
    assert as_nobody.get("/rulebooks/").status_code == 403


def test_the_form_explains_every_parameter_with_its_default(as_manager):
    page = as_manager.get("/rulebooks/propose/")
    text = page.content.decode()
    for key in POLICY_KEYS:
        assert f'name="p_{key.name}"' in text
        assert "Default:" in text


def test_a_proposal_through_the_form(as_manager):
    answer = as_manager.post("/rulebooks/propose/", form_data(p_pre_pct="10"))
    assert answer.status_code == 302
    version = RulebookVersion.objects.get(rulebook__key="eu-main")
    assert version.parameters["pre_pct"] == 10 and version.status == "proposed"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"key": "EU main"}, "key"),
        ({"p_early_pct": "101"}, "p_early_pct"),
        ({"p_pre_pct": "30", "p_early_pct": "20"}, "p_early_pct"),
        ({"p_late_formula": "coin"}, "p_late_formula"),
        ({"text": "<script>x</script>"}, "text"),
        ({"text": '<p onmouseover="x()">hi</p>'}, "text"),
        ({"p_final_table_icm": "1"}, "p_final_table_icm"),
        ({"p_final_table_icm": "many"}, "p_final_table_icm"),
        ({"p_middle_fee_refund": "maybe"}, "p_middle_fee_refund"),
        ({"effective_from": "2020-01-01T00:00"}, "effective_from"),
        ({"reason": ""}, "reason"),
    ],
)
def test_bad_input_shows_on_its_field_and_stores_nothing(as_manager, changes, field):
    answer = as_manager.post("/rulebooks/propose/", form_data(**changes), **HTMX)
    assert answer.status_code == 422
    assert field in answer.context["form"].errors
    assert not RulebookVersion.objects.filter(rulebook__key="eu-main").exists()


def test_an_effective_time_before_the_version_approved_shows_on_its_field(
    proposed, as_manager, second_manager
):
    rulebook_version_approve(version=proposed, actor=second_manager, reason="ok")
    earlier = (proposed.effective_from - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
    answer = as_manager.post("/rulebooks/propose/", form_data(effective_from=earlier), **HTMX)
    assert answer.status_code == 422
    assert "effective_from" in answer.context["form"].errors
    assert RulebookVersion.objects.filter(rulebook__key="eu-main").count() == 1


def test_the_approval_page_restates_the_change_and_the_proposer_is_refused(
    proposed, as_manager, second_manager
):
    own = as_manager.get(f"/rulebooks/eu-main/versions/{proposed.number}/approve/")
    assert own.status_code == 403
    other = signed_in(second_manager)
    page = other.get("/rulebooks/eu-main/versions/1/approve/")
    assert page.status_code == 200
    assert "will be settled under version 1" in page.content.decode()
    done = other.post("/rulebooks/eu-main/versions/1/approve/", {"reason": "ok"}, **HTMX)
    assert done.status_code == 200 and done["HX-Redirect"]
    proposed.refresh_from_db()
    assert proposed.status == "approved"


def test_a_version_shows_its_diff_against_the_one_it_replaces(
    proposed, tournament_manager, second_manager, as_auditor
):
    rulebook_version_approve(version=proposed, actor=second_manager, reason="ok")
    rulebook_version_propose(
        key="eu-main",
        parameters={"pre_pct": 12},
        text="Fees first.\n\nThird paragraph.",
        effective_from=timezone.now() + timedelta(days=9),
        actor=tournament_manager,
        reason="Tweak",
    )
    page = as_auditor.get("/rulebooks/eu-main/versions/2/").content.decode()
    assert "+Third paragraph." in page and "-Second paragraph." in page
    assert "<strong>12</strong>" in page


def test_the_text_is_rendered_without_raw_html(tournament_manager, as_auditor):
    rulebook_version_propose(
        key="eu-main",
        parameters={},
        text="**Bold** <b>raw</b>",
        effective_from=timezone.now() + timedelta(days=7),
        actor=tournament_manager,
        reason="x",
    )
    page = as_auditor.get("/rulebooks/eu-main/versions/1/").content.decode()
    assert "<strong>Bold</strong>" in page and "&lt;b&gt;raw&lt;/b&gt;" in page


def test_withdrawal_with_a_reason(proposed, as_manager):
    done = as_manager.post("/rulebooks/eu-main/versions/1/withdraw/", {"reason": "wrong"})
    assert done.status_code == 302
    proposed.refresh_from_db()
    assert proposed.status == "withdrawn"
    missing = as_manager.post("/rulebooks/eu-main/versions/1/withdraw/", {"reason": ""})
    assert missing.status_code in (403, 422)


def test_the_case_page_and_review_name_the_rulebook_version(operator, as_auditor, snapshot_factory):
    case = case_load_snapshot(actor=operator, snapshot=snapshot_factory(stage="early"))
    page = as_auditor.get(f"/cases/{case.pk}/").content.decode()
    assert "Rulebook default, version 1" in page
    assert "/rulebooks/default/versions/1/" in page


def test_the_policy_page_names_the_version_in_force(as_auditor):
    page = as_auditor.get("/policy/").content.decode()
    assert "rulebook default, version 1" in page


def test_waiting_for_you_lists_versions_for_another_manager_only(
    proposed, as_manager, second_manager, as_operator
):
    other = signed_in(second_manager).get("/").content.decode()
    assert "Rulebook versions to approve" in other
    assert "/rulebooks/eu-main/versions/1/approve/" in other
    # Its proposer sees the list empty; an operator, who approves nothing, not at all.
    own = as_manager.get("/").content.decode()
    assert 'Rulebook versions to approve <span class="muted">(0)</span>' in own
    assert "/rulebooks/eu-main/versions/1/approve/" not in own
    assert "Rulebook versions to approve" not in as_operator.get("/").content.decode()


def test_the_history_shows_each_step(proposed, second_manager, as_auditor):
    rulebook_version_approve(version=proposed, actor=second_manager, reason="ok")
    events = as_auditor.get("/history/?view=events").content.decode()
    assert "Rulebook version proposed" in events and "Rulebook version approved" in events
    changes = as_auditor.get("/history/?model=rulebookversion").content.decode()
    assert "New market" in changes and "Rulebook version" in changes


def test_a_simulation_from_the_version_page_shows_on_the_approval_page(
    proposed, operator, snapshot_factory, as_manager, second_manager
):
    case_load_snapshot(actor=operator, snapshot=snapshot_factory(stage="late", tournament_id="L"))
    started = as_manager.post("/rulebooks/eu-main/versions/1/simulate/", {"rulebook": "default"})
    assert started.status_code == 302
    simulation_url = started["Location"]
    page = as_manager.get(simulation_url)
    assert page.status_code == 200 and "Case #" in page.content.decode()
    assert as_manager.get(simulation_url, **HTMX).status_code == 200
    csv = b"".join(as_manager.get(simulation_url.rstrip("/") + ".csv").streaming_content)
    assert csv.startswith(b"case,tournament,stage_then")
    approval = signed_in(second_manager).get("/rulebooks/eu-main/versions/1/approve/")
    assert "Better off" in approval.content.decode()


def test_a_simulation_over_no_case_says_so(proposed, as_manager):
    answer = as_manager.post("/rulebooks/eu-main/versions/1/simulate/", {"incident": "999"})
    assert answer.status_code == 302 and answer["Location"].endswith("/versions/1/")


def test_a_finished_simulation_charts_the_differences_per_player(
    proposed, operator, snapshot_factory, as_manager, django_assert_num_queries
):
    for tournament in ("L", "M"):
        case_load_snapshot(
            actor=operator, snapshot=snapshot_factory(stage="late", tournament_id=tournament)
        )
    started = as_manager.post("/rulebooks/eu-main/versions/1/simulate/", {"rulebook": "default"})
    simulation = Simulation.objects.get(pk=started["Location"].rstrip("/").rsplit("/", 1)[1])
    assert simulation.finished_at is not None
    page = as_manager.get(started["Location"]).content.decode()
    assert "Differences per player" in page
    assert 'class="difference-chart"' in page and "Difference per player, Cash" in page
    # The chart's text alternative: its summary and a table of every bar with its count.
    assert "Cash: of " in page and "players by difference</caption>" in page
    # Each case's totals are money as the desk writes it, not minor units.
    cases = page[page.index('aria-label="Cases simulated"') :]
    assert "<td>Late, " in cases and " USD" in cases
    # So are the summary's, the cases being in one currency.
    summary = page[page.index('aria-label="Simulation summary"') : page.index("Cases simulated")]
    assert '<th scope="row">Cash</th>' in summary and " USD</td>" in summary
    # However many cases, the differences are read in one query.
    with django_assert_num_queries(1):
        by_unit, currency = simulation_differences(simulation)
    assert list(by_unit)[0] == "cash" and currency == "USD"
