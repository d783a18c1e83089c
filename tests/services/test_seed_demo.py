"""manage.py seed_demo: users per role and a demo outage, made through the services, twice."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from settlements.access import roles
from settlements.models import (
    Case,
    Compensation,
    Event,
    PrizeWithdrawal,
    Rulebook,
    RulebookVersion,
    Settlement,
    Simulation,
)
from settlements.selectors.dashboard import waiting_for
from tests.services.helpers import row_counts

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def debug_on(settings):
    # The test runner turns DEBUG off; the command is for development sites only.
    settings.DEBUG = True


def seed(**options) -> str:
    out = StringIO()
    call_command("seed_demo", stdout=out, **options)
    return out.getvalue()


def test_seed_demo_builds_every_step_and_can_run_again():
    output = seed()
    for username in ("operator", "marketing", "manager", "manager2", "auditor", "cashier"):
        assert f"  {username} " in output
    assert "  admin " in output
    assert "crashdesk-demo" in output
    # The summary counts tournaments and cases as the incident page lists them.
    assert ": 12 tournaments hit, a crash case each (new: DEMO-" in output
    assert "; 1 individual case, a player's complaint on DEMO-REG-LATE" in output

    statuses = dict(
        Case.objects.filter(kind="crash").values_list("tournament__operator_id", "status")
    )
    assert statuses == {
        "DEMO-REG-MIDDLE": "awaiting_approval",
        "DEMO-FREE-MIDDLE": "awaiting_decision",
        "DEMO-SAT-MIDDLE": "awaiting_decision",
        "DEMO-REG-LATE": "approved",
        "DEMO-FREE-EARLY": "awaiting_decision",
        "DEMO-REG-EARLY": "ready",
        "DEMO-SAT-LATE": "prepared",
        "DEMO-REG-PRE": "rejected",
        "DEMO-KO-MIDDLE": "awaiting_approval",
        "DEMO-KO-LATE": "approved",
        "DEMO-EU-LATE": "approved",
        "DEMO-FREE-RESCHEDULED": "approved",
    }
    # A settlement that pays nobody, approved, and the chain still verifies.
    rescheduled = Case.objects.get(tournament__operator_id="DEMO-FREE-RESCHEDULED")
    assert rescheduled.settlements.get().line_count == 0
    call_command("verify_audit", stdout=StringIO())
    knock_out = Case.objects.get(tournament__operator_id="DEMO-KO-MIDDLE")
    assert knock_out.entrants_digest and knock_out.tournament.entry_bounty
    assert {c.stage for c in Case.objects.filter(kind="crash")} == {
        "pre",
        "early",
        "middle",
        "late",
    }
    assert Case.objects.filter(kind="individual", status="open").count() == 1
    assert Compensation.objects.filter(status="proposed").count() == 1
    assert PrizeWithdrawal.objects.filter(status="proposed").count() == 1
    assert Settlement.objects.filter(status="approved").count() == 4
    # Version 1, version 2 and rulebook cases settled to the ledger, for the API fuzzer.
    approved = Case.objects.filter(status="approved", kind="crash")
    assert approved.filter(tournament__entry_bounty__gt=0).exists()
    # Started under eu-main once it took effect, then crashed: never a crash before its start.
    eu = approved.get(rulebook_version__rulebook__key="eu-main")
    assert eu.rulebook_version.effective_from < eu.crashed_at <= timezone.now()
    # Built through the services: every record has its events.
    assert Event.objects.filter(type="settlement_approved").count() == 4
    assert Event.objects.filter(type="snapshot_loaded").count() == 12
    # Two rulebooks, a future version of `default` waiting for manager2, simulated.
    assert set(Rulebook.objects.values_list("key", flat=True)) == {"default", "eu-main"}
    waiting = RulebookVersion.objects.get(status="proposed")
    assert waiting.rulebook.key == "default" and waiting.proposed_by.username == "manager"
    manager2 = get_user_model().objects.get(username="manager2")
    assert waiting.effective_from > timezone.now()
    assert list(waiting_for(manager2)["rulebook_versions"]) == [waiting]
    simulation = Simulation.objects.get(version=waiting)
    assert (
        simulation.finished_at is not None
        and simulation.summary["cases"]
        == Case.objects.filter(rulebook_version__rulebook__key="default").count()
    )

    before = row_counts()
    assert "already there" in seed()
    assert row_counts() == before


def test_demo_users_can_sign_in_with_their_role():
    seed(password="another-secret-1")
    expected = {
        "operator": {roles.OPERATOR},
        "marketing": {roles.MARKETING_MANAGER},
        "manager": {roles.TOURNAMENT_MANAGER},
        "manager2": {roles.TOURNAMENT_MANAGER},
        "auditor": {roles.AUDITOR},
        "cashier": {roles.CASHIER},
    }
    users = get_user_model().objects
    for username, held in expected.items():
        user = users.get(username=username)
        assert user.check_password("another-secret-1")
        assert roles.user_roles(user) == held
    admin = users.get(username="admin")
    assert admin.check_password("another-secret-1")
    assert admin.is_superuser and roles.user_roles(admin) == frozenset()


def test_seed_demo_refuses_to_run_without_debug(settings):
    settings.DEBUG = False
    before = row_counts(), get_user_model().objects.count()
    with pytest.raises(CommandError, match="only runs with DEBUG on") as refused:
        seed()
    assert "Nothing was written" in str(refused.value)
    assert (row_counts(), get_user_model().objects.count()) == before
