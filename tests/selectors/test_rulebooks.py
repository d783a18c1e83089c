"""Reads of rulebooks for their pages: by key, a version by number, the version one replaces,
a simulation by id; None where there is none, for the page to answer 404."""

from datetime import timedelta

import pytest
from django.utils import timezone

from settlements.selectors import rulebooks
from settlements.services import rulebooks as rulebook_services

pytestmark = pytest.mark.django_db


def _approved(proposer, approver, *, days: int):
    version = rulebook_services.rulebook_version_propose(
        key="eu-main",
        parameters={"pre_pct": 10 + days},
        text="# EU main",
        effective_from=timezone.now() + timedelta(days=days),
        actor=proposer,
        reason="Published policy",
    )
    return rulebook_services.rulebook_version_approve(
        version=version, actor=approver, reason="Checked"
    )


def test_a_rulebook_is_found_by_its_key_with_its_versions(tournament_manager, second_manager):
    first = _approved(tournament_manager, second_manager, days=5)
    second = _approved(tournament_manager, second_manager, days=9)
    found = rulebooks.rulebook_named("eu-main", with_versions=True)
    assert [version.number for version in found.versions.all()] == [second.number, first.number]
    assert rulebooks.rulebook_named("eu-mian") is None


def test_a_version_is_found_by_rulebook_and_number(tournament_manager, second_manager):
    version = _approved(tournament_manager, second_manager, days=5)
    assert rulebooks.version_numbered("eu-main", version.number) == version
    assert rulebooks.version_numbered("eu-main", version.number + 1) is None
    assert rulebooks.version_numbered("default", version.number + 1) is None


def test_a_version_replaces_the_approved_one_taking_effect_last_before_it(
    tournament_manager, second_manager
):
    first = _approved(tournament_manager, second_manager, days=5)
    second = _approved(tournament_manager, second_manager, days=9)
    third = _approved(tournament_manager, second_manager, days=12)
    assert rulebooks.replaced_version(third) == second
    assert rulebooks.replaced_version(second) == first
    assert rulebooks.replaced_version(first) is None


def test_an_unknown_simulation_is_none():
    assert rulebooks.simulation_numbered(999_999) is None
