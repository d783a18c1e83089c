"""PostgreSQL holds the rulebooks' rules whoever writes: a version is not approved by its
proposer, an approved version never changes but for a withdrawal before it takes effect, what
was proposed is fixed, and a case keeps the version it was linked to."""

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from settlements.models import RulebookVersion
from settlements.services import rulebooks
from tests.db.conftest import execute, postgresql_only, refused

pytestmark = [pytest.mark.django_db, postgresql_only]


@pytest.fixture
def proposed(tournament_manager):
    return rulebooks.rulebook_version_propose(
        key="eu-main",
        parameters={"pre_pct": 10},
        text="Fees first.",
        effective_from=timezone.now() + timedelta(days=7),
        actor=tournament_manager,
        reason="New policy",
    )


@pytest.fixture
def approved(proposed, second_manager):
    return rulebooks.rulebook_version_approve(version=proposed, actor=second_manager, reason="ok")


def test_the_proposer_approving_is_refused_by_the_database(proposed, app_role):
    message = refused(
        "UPDATE settlements_rulebookversion SET status = 'approved', approved_at = now(),"
        " approved_by_id = proposed_by_id WHERE id = %s",
        [proposed.pk],
        role=app_role,
    )
    assert "other than its preparer" in message


def test_an_approval_taking_effect_before_it_is_refused(proposed, second_manager):
    with (
        pytest.raises(IntegrityError, match="rulebook_effective_after_approval"),
        transaction.atomic(),
    ):
        execute(
            "UPDATE settlements_rulebookversion SET status = 'approved',"
            " approved_at = effective_from + interval '1 day', approved_by_id = %s"
            " WHERE id = %s",
            [second_manager.pk, proposed.pk],
        )


@pytest.mark.parametrize(
    "change",
    [
        "parameters = '{}'::jsonb",
        "text = 'changed'",
        "effective_from = effective_from + interval '1 day'",
        "proposal_reason = 'other'",
    ],
)
def test_what_was_proposed_is_fixed(proposed, change, app_role):
    refused(
        f"UPDATE settlements_rulebookversion SET {change} WHERE id = %s",
        [proposed.pk],
        role=app_role,
    )


@pytest.mark.parametrize(
    "change",
    ["status = 'proposed'", "approval_reason = 'edited'", "approved_at = now()"],
)
def test_an_approved_version_never_changes(approved, change, app_role):
    refused(
        f"UPDATE settlements_rulebookversion SET {change} WHERE id = %s",
        [approved.pk],
        role=app_role,
    )


def test_an_approved_version_in_force_is_not_withdrawn_and_none_is_deleted(app_role):
    first = RulebookVersion.objects.get(rulebook__key="default", number=1)
    refused(
        "UPDATE settlements_rulebookversion SET status = 'withdrawn' WHERE id = %s",
        [first.pk],
        role=app_role,
    )
    refused("DELETE FROM settlements_rulebookversion WHERE id = %s", [first.pk], role=app_role)


def test_a_withdrawn_version_is_final(approved, second_manager, app_role):
    rulebooks.rulebook_version_withdraw(version=approved, actor=second_manager, reason="no")
    refused(
        "UPDATE settlements_rulebookversion SET status = 'approved' WHERE id = %s",
        [approved.pk],
        role=app_role,
    )


def test_a_case_keeps_its_version(full_desk, approved, app_role):
    first = RulebookVersion.objects.get(rulebook__key="default", number=1)
    execute(
        "UPDATE settlements_case SET rulebook_version_id = %s WHERE rulebook_version_id IS NULL",
        [first.pk],
    )
    message = refused(
        "UPDATE settlements_case SET rulebook_version_id = %s", [approved.pk], role=app_role
    )
    assert "keeps_its_rulebook_version" in message
