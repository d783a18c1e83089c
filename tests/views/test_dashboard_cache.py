"""The dashboard never shows an answer older than the data.

Each test changes the data between two views of the same user and expects the second view to
show the change (the dashboard once kept fragments under a desk-wide mark; these guard that
nothing cached in its place ever goes stale).
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from settlements.access import roles
from settlements.models import Incident, Tournament
from settlements.services import settlements as settlement_services
from settlements.services.incidents import incident_close, incident_report
from settlements.services.snapshots import case_load_snapshot, case_withdraw
from settlements.templatetags.timezones import when
from tests.conftest import make_user
from tests.views.conftest import signed_in

pytestmark = pytest.mark.django_db

TO_APPROVE = 'Settlements to approve <span class="muted">({})</span>'


def _main(response) -> str:
    html = response.content.decode()
    return html[html.index("<main") : html.index("</main>")]


def _dashboard(client, **params) -> str:
    return client.get(reverse("dashboard"), params).content.decode()


def test_an_approval_shows_on_the_very_next_view(
    as_manager, operator, tournament_manager, load_case
):
    case = load_case(type="regular", stage="middle", tournament_id="T-APP")
    settlement = settlement_services.settlement_prepare(case=case, actor=operator)
    settlement_services.settlement_submit(settlement=settlement, actor=operator)
    before = _dashboard(as_manager)
    cached = _dashboard(as_manager)
    start = before.index('id="counts-title"')
    assert cached[start : cached.index("</main>")] == before[start : before.index("</main>")]
    assert TO_APPROVE.format(1) in before
    assert '<span class="stat__value" data-count="approved">0</span>' in before

    settlement_services.settlement_approve(settlement=settlement, actor=tournament_manager)
    after = _dashboard(as_manager)
    assert TO_APPROVE.format(0) in after
    assert '<span class="stat__value" data-count="awaiting_approval">0</span>' in after
    assert '<span class="stat__value" data-count="approved">1</span>' in after
    assert 'data-status="approved">Approved</span>' in after


def test_a_withdrawal_and_a_closed_incident_show_at_once(as_operator, operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-WD")
    assert f'href="{reverse("case_detail", args=[case.pk])}"' in _dashboard(as_operator)
    case_withdraw(case=case, actor=operator, reason="Loaded the wrong tournament")
    html = _dashboard(as_operator)
    assert 'data-status="withdrawn">' in html
    assert 'Settlements to prepare <span class="muted">(0)</span>' in html

    incident_close(incident=case.incident, actor=operator)
    html = _dashboard(as_operator)
    assert "Cluster B outage" not in html
    assert '<span class="stat__value" data-count="open_incidents">0</span>' in html


def test_users_with_other_roles_never_get_each_others_queues(
    as_operator, as_marketing, as_manager, load_case
):
    load_case(type="satellite", stage="middle", tournament_id="S-DECIDE")
    marketing = _dashboard(as_marketing)  # cached first, for the marketing role alone
    operator = _dashboard(as_operator)
    manager = _dashboard(as_manager)
    assert 'Decisions to make <span class="muted">(1)</span>' in marketing
    assert "Settlements to prepare" not in marketing
    assert "Decisions to make" not in operator and "Settlements to prepare" in operator
    assert "Decisions to make" not in manager and "Settlements to approve" in manager


def test_a_manager_never_gets_another_managers_queue(django_user_model, incident, snapshot_factory):
    # Same roles, different people: each may approve only what the other prepared.
    first, second = (
        make_user(django_user_model, name, roles.OPERATOR, roles.TOURNAMENT_MANAGER)
        for name in ("first_both", "second_both")
    )
    case = case_load_snapshot(
        actor=first, snapshot=snapshot_factory(type="regular", stage="middle"), incident=incident
    )
    settlement = settlement_services.settlement_prepare(case=case, actor=first)
    settlement_services.settlement_submit(settlement=settlement, actor=first)
    assert TO_APPROVE.format(1) in _dashboard(signed_in(second))
    assert TO_APPROVE.format(0) in _dashboard(signed_in(first))


def test_corrections_made_outside_the_services_show_at_once(as_operator, operator, incident):
    _dashboard(as_operator)
    # An edit outside the services (a shell, say).
    incident.title = "Cluster B power outage"
    incident.save()
    operator.username = "renamed_operator"
    operator.save()
    html = _dashboard(as_operator)
    assert "Cluster B power outage" in html
    assert "reported by renamed_operator" in html


def test_each_incident_page_is_its_own_entry(as_operator, operator):
    for number in range(12):
        incident_report(
            actor=operator,
            title=f"Outage {number:02d}",
            started_at=timezone.now() - timedelta(minutes=number),
        )
    first = _dashboard(as_operator)
    second = _dashboard(as_operator, page=2)
    beyond = _dashboard(as_operator, page=9)
    assert "Outage 00" in first and "Outage 10" not in first
    assert "Outage 10" in second and "Outage 00" not in second
    assert "Page 2 of 2" in beyond and "Outage 11" in beyond


@pytest.mark.parametrize("with_work", [False, True], ids=["empty desk", "work waiting"])
def test_every_role_can_view_the_dashboard_again(django_user_model, users, load_case, with_work):
    """The second view reads what the first cached: an empty queue list (an auditor's) is a
    value to show, not a miss."""
    if with_work:
        load_case(type="satellite", stage="middle", tournament_id="S-AGAIN")
    # The others are refused (403): a user with no role, and the cashier, which has no page.
    viewers = {role: user for role, user in users.items() if role not in ("none", roles.CASHIER)}
    viewers["every role"] = make_user(django_user_model, "all_roles", *roles.DESK_ROLES)
    for role, user in viewers.items():
        client = signed_in(user)
        first = client.get(reverse("dashboard"))
        again = client.get(reverse("dashboard"))
        assert (first.status_code, again.status_code) == (200, 200), role
        assert _main(again) == _main(first), role


def test_the_incident_list_changes_at_once(
    as_operator, operator, tournament_manager, incident, load_case
):
    case = load_case(type="regular", stage="middle", tournament_id="T-FRAG")
    first = _dashboard(as_operator)
    assert 'data-status="ready">' in first

    # A business change: the case's status in the list changes on the very next view.
    settlement_services.settlement_prepare(case=case, actor=operator)
    after = _dashboard(as_operator)
    assert 'data-status="ready">' not in after
    assert 'data-status="prepared">' in after

    # A new incident shows at once too.
    incident_report(
        actor=operator, title="Cluster C outage", started_at=timezone.now() - timedelta(minutes=5)
    )
    assert "Cluster C outage" in _dashboard(as_operator)


def test_the_incident_list_depends_on_who_looks_and_how(
    as_operator, as_manager, operator, incident
):
    # An incident without cases offers operators, and only them, to add its tournaments.
    offer = "Add the tournaments it hit"
    assert offer in _dashboard(as_operator)
    assert offer not in _dashboard(as_manager)
    assert offer in _dashboard(as_operator)
    # A renamed reporter shows at once.
    operator.username = "olivia_renamed"
    operator.save()
    assert "reported by olivia_renamed" in _dashboard(as_manager)


def test_the_incident_list_shows_each_reader_their_own_time_zone(
    as_operator, django_user_model, incident
):
    """Two operators of the same desk in two zones: each reads times in their own."""
    in_japan = signed_in(make_user(django_user_model, "kenji", roles.OPERATOR))
    in_japan.post(reverse("user_settings"), {"time_zone": "Asia/Tokyo"})
    with timezone.override("UTC"):
        in_utc = f"Started {when(incident.started_at)} · reported by"
    with timezone.override("Asia/Tokyo"):
        in_tokyo = f"Started {when(incident.started_at)} · reported by"
    assert in_utc != in_tokyo
    assert in_utc in _dashboard(as_operator)
    assert in_tokyo in _dashboard(in_japan)
    assert in_utc in _dashboard(as_operator)


def test_writes_behind_the_orms_back_show_at_once(as_operator, load_case):
    """An entry is keyed by the versions of the rows it shows, which every write changes: an
    update that sends no signal and a statement in SQL are seen like a service's write."""
    case = load_case(type="regular", stage="middle", tournament_id="T-RAW")
    assert "T-RAW" in _incident_list(as_operator)
    Tournament.objects.filter(pk=case.tournament_id).update(operator_id="T-BULK")
    assert "T-BULK" in _incident_list(as_operator)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE settlements_incident SET title = 'Retitled in SQL' WHERE id = %s",
            [case.incident_id],
        )
    assert "Retitled in SQL" in _incident_list(as_operator)


def _incident_list(client) -> str:
    """The list of open incidents alone (the queues above it are read afresh each view)."""
    html = _dashboard(client)
    return html[html.index('id="incident-list"') :]


def test_a_second_view_draws_kept_entries_without_reading_their_cases(as_operator, load_case):
    load_case(type="regular", stage="middle", tournament_id="T-KEPT")
    with CaptureQueriesContext(connection) as first:
        drawn = as_operator.get(reverse("dashboard"))
    with CaptureQueriesContext(connection) as second:
        kept = as_operator.get(reverse("dashboard"))
    assert _main(kept) == _main(drawn)
    assert len(second) == len(first) - 1
    assert not [query for query in second if "settlements_case.stage" in _unquoted(query)]


def _unquoted(query) -> str:
    return query["sql"].replace('"', "")


def test_a_write_between_reading_the_key_and_the_entry_never_leaves_it_stale(as_operator, incident):
    """A write can land between the page's reads. Whichever of the entry's key and its content
    is read first, the write comes right after it; the next view must show the write."""
    wrote = []

    def write_after_the_first_read(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        # The key's read names row versions; the entries' read counts each incident's cases.
        if not wrote and ("xmin" in sql or '"case_count"' in sql):
            wrote.append(sql)
            Incident.objects.filter(pk=incident.pk).update(title="Retitled meanwhile")
        return result

    with connection.execute_wrapper(write_after_the_first_read):
        _incident_list(as_operator)
    assert wrote
    assert "Retitled meanwhile" in _incident_list(as_operator)


def test_a_case_added_and_a_reporter_renamed_quietly_show_at_once(as_operator, operator, load_case):
    """The other rows an entry shows: a case joining the incident, and its reporter's row."""
    load_case(type="regular", stage="middle", tournament_id="T-FIRST")
    assert "T-SECOND" not in _incident_list(as_operator)
    load_case(type="regular", stage="late", tournament_id="T-SECOND")
    assert "T-SECOND" in _incident_list(as_operator)
    type(operator).objects.filter(pk=operator.pk).update(username="quietly_renamed")
    assert "reported by quietly_renamed" in _incident_list(as_operator)
