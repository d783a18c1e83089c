"""Rulebook versions as records: proposed, approved by another Tournament Manager, withdrawn
before they take effect; every step an event; bad input refused with its field, nothing stored."""

import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from settlements import markdown
from settlements.checks import crash_policy_moved_check
from settlements.errors import DomainError, InvalidTransition, NotAllowed
from settlements.models import Event, Rulebook, RulebookVersion
from settlements.rules import DEFAULT_POLICY
from settlements.selectors.dashboard import waiting_for
from settlements.selectors.rulebooks import version_in_force
from settlements.services import rulebooks

pytestmark = pytest.mark.django_db

TEXT = "# EU main\n\nFees are **refunded** before the money."


def later(days=7):
    return timezone.now() + timedelta(days=days)


def propose(actor, key="eu-main", **changes):
    fields = {
        "key": key,
        "parameters": {"pre_pct": 10},
        "text": TEXT,
        "effective_from": later(),
        "actor": actor,
        "reason": "Align with the published policy",
    } | changes
    return rulebooks.rulebook_version_propose(**fields)


def test_the_migration_made_default_version_1_from_the_settings():
    version = RulebookVersion.objects.get(rulebook__key="default", number=1)
    assert version.status == "approved"
    assert version.parameters == DEFAULT_POLICY.parameters
    assert version_in_force("default", timezone.now()) == version


def test_a_proposal_makes_the_rulebook_fills_defaults_and_records_an_event(tournament_manager):
    version = propose(tournament_manager)
    assert version.number == 1 and version.status == "proposed"
    assert version.parameters == {**DEFAULT_POLICY.parameters, "pre_pct": 10}
    assert Rulebook.objects.filter(key="eu-main").exists()
    event = Event.objects.get(type=Event.Type.RULEBOOK_VERSION_PROPOSED)
    assert event.actor == tournament_manager and event.data["version"] == 1
    assert version.history.count() == 1
    assert version.history.first().history_change_reason == "Align with the published policy"


def test_another_manager_approves_and_the_version_takes_effect_then(
    tournament_manager, second_manager
):
    version = propose(tournament_manager)
    approved = rulebooks.rulebook_version_approve(
        version=version, actor=second_manager, reason="Checked against the simulation"
    )
    assert approved.status == "approved" and approved.approved_by == second_manager
    assert version_in_force("eu-main", timezone.now()) is None
    assert version_in_force("eu-main", later(8)) == approved
    assert Event.objects.filter(type=Event.Type.RULEBOOK_VERSION_APPROVED).count() == 1


def test_the_proposer_may_not_approve(tournament_manager):
    version = propose(tournament_manager)
    with pytest.raises(NotAllowed, match="another Tournament Manager"):
        rulebooks.rulebook_version_approve(version=version, actor=tournament_manager, reason="ok")
    version.refresh_from_db()
    assert version.status == "proposed"


@pytest.mark.parametrize("user", ["operator", "auditor", "marketing_manager"])
def test_only_tournament_managers_propose(user, request):
    with pytest.raises(NotAllowed):
        propose(request.getfixturevalue(user))
    assert not Rulebook.objects.filter(key="eu-main").exists()


def test_approved_or_withdrawn_versions_are_not_approved_again(tournament_manager, second_manager):
    version = propose(tournament_manager)
    rulebooks.rulebook_version_approve(version=version, actor=second_manager, reason="ok")
    with pytest.raises(InvalidTransition):
        rulebooks.rulebook_version_approve(version=version, actor=second_manager, reason="again")
    other = propose(tournament_manager, effective_from=later(9))
    rulebooks.rulebook_version_withdraw(version=other, actor=tournament_manager, reason="wrong")
    with pytest.raises(InvalidTransition, match="withdrawn"):
        rulebooks.rulebook_version_approve(version=other, actor=second_manager, reason="ok")


def test_an_approved_version_is_withdrawn_before_it_takes_effect_only(
    tournament_manager, second_manager
):
    version = propose(tournament_manager)
    rulebooks.rulebook_version_approve(version=version, actor=second_manager, reason="ok")
    withdrawn = rulebooks.rulebook_version_withdraw(
        version=version, actor=second_manager, reason="Regulator asked for changes"
    )
    assert withdrawn.status == "withdrawn" and withdrawn.withdrawal_reason
    assert Event.objects.filter(type=Event.Type.RULEBOOK_VERSION_WITHDRAWN).count() == 1
    in_force = RulebookVersion.objects.get(rulebook__key="default", number=1)
    with pytest.raises(InvalidTransition, match="taken effect"):
        rulebooks.rulebook_version_withdraw(version=in_force, actor=second_manager, reason="no")


def test_a_later_version_must_take_effect_after_the_one_approved(
    tournament_manager, second_manager
):
    first = propose(tournament_manager, effective_from=later(10))
    rulebooks.rulebook_version_approve(version=first, actor=second_manager, reason="ok")
    with pytest.raises(DomainError) as caught:
        propose(tournament_manager, effective_from=later(5))
    assert caught.value.field == "effective_from"
    second = propose(tournament_manager, effective_from=later(11))
    assert second.number == 2


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"key": "EU main"}, "key"),
        ({"key": ""}, "key"),
        ({"key": 7}, "key"),
        ({"parameters": {"surprise": 1}}, "parameters.surprise"),
        ({"parameters": {"pre_pct": "10"}}, "parameters.pre_pct"),
        ({"parameters": {"early_pct": 101}}, "parameters.early_pct"),
        ({"parameters": {"late_formula": "coin_flip"}}, "parameters.late_formula"),
        ({"parameters": [1]}, "parameters"),
        ({"text": ""}, "text"),
        ({"text": "Hello <script>alert(1)</script>"}, "text"),
        ({"text": '<img src=x onerror="alert(1)">'}, "text"),
        ({"text": "[x](javascript:alert(1))"}, "text"),
        ({"effective_from": timezone.now() - timedelta(minutes=1)}, "effective_from"),
        ({"effective_from": "tomorrow"}, "effective_from"),
        ({"reason": " "}, "reason"),
    ],
)
def test_bad_input_is_refused_with_its_field_and_nothing_stored(changes, field, tournament_manager):
    with pytest.raises(DomainError) as caught:
        propose(tournament_manager, **changes)
    assert caught.value.field == field
    assert not RulebookVersion.objects.exclude(rulebook__key="default").exists()
    assert not Event.objects.filter(type=Event.Type.RULEBOOK_VERSION_PROPOSED).exists()


def test_the_text_renders_without_raw_html():
    html = markdown.render("**bold** <b>raw</b>")
    assert "<strong>bold</strong>" in html
    assert "<b>" not in html and "&lt;b&gt;" in html


def test_versions_awaiting_approval_are_another_managers(tournament_manager, second_manager):
    version = propose(tournament_manager)
    assert list(waiting_for(second_manager)["rulebook_versions"]) == [version]
    assert not waiting_for(tournament_manager)["rulebook_versions"].exists()


def test_a_crash_policy_variable_still_set_is_warned_of():
    with override_settings(CRASH_POLICY={"pre_pct": "7"}):
        warnings = crash_policy_moved_check(None)
    assert [w.id for w in warnings] == ["settlements.W011"]
    assert "CRASH_POLICY_PRE_PCT" in warnings[0].msg
    with override_settings(CRASH_POLICY={}):
        assert crash_policy_moved_check(None) == []


def test_the_event_log_still_verifies(tournament_manager, second_manager):
    version = propose(tournament_manager)
    rulebooks.rulebook_version_approve(version=version, actor=second_manager, reason="ok")
    out = io.StringIO()
    call_command("verify_audit", stdout=out)
    assert "events verified" in out.getvalue()


def test_a_version_changed_behind_the_apps_back_breaks_the_log(tournament_manager):
    version = propose(tournament_manager)
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(
            "UPDATE settlements_rulebookversion SET parameters = '{}'::jsonb WHERE id = %s",
            [version.pk],
        )
        cursor.execute("SET LOCAL session_replication_role = origin")
    with pytest.raises(CommandError):
        call_command("verify_audit", stdout=io.StringIO())
