"""The site's crash policy as configuration: read from CRASH_POLICY_* at start-up, refused by
a system check when bad, used for every case loaded (web, API) and recorded on it."""

import json
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from hypothesis import given
from hypothesis import strategies as st

from settlements.checks import crash_policy_check, icm_flag_check
from settlements.models import Case
from settlements.rules import DEFAULT_POLICY, Policy, assess, parse_snapshot
from settlements.services.snapshots import case_load_snapshot
from settlements.services.tokens import api_token_create
from settlements.site_policy import IcmFlag, icm_flag, policy_problems, site_policy
from tests.api.conftest import post_snapshot
from tests.conftest import build_snapshot

SITE = {"pre_pct": "10", "early_pct": "30"}
SITE_POLICY = {"pre_pct": 10, "early_pct": 30, "late_formula": "chip_equity"}


def snapshot_with(eliminated: int, *, entrants: int = 40, tournament_id: str = "SP-1") -> bytes:
    """A regular tournament of ``entrants`` with ``eliminated`` of them knocked out (three paid
    places, so a few remaining players keep it out of the late stage)."""
    remaining = entrants - eliminated
    players = [
        {"id": f"p{i:03d}", "chips": (remaining - i) * 100 if i < remaining else 0}
        for i in range(entrants)
    ]
    return json.dumps(
        build_snapshot(entrants=entrants, players=players, tournament_id=tournament_id)
    ).encode()


# --- Reading and checking the configuration --------------------------------------------------


def test_unset_variables_keep_the_published_defaults():
    assert policy_problems({}) == []
    with override_settings(CRASH_POLICY={}):
        assert site_policy() == DEFAULT_POLICY
    with override_settings(CRASH_POLICY={"late_formula": "chip_position"}):
        assert site_policy() == Policy(5, 25, "chip_position")


def test_values_from_the_environment_become_a_policy():
    with override_settings(
        CRASH_POLICY={"pre_pct": "10", "early_pct": " 30 ", "late_formula": "chip_position"}
    ):
        assert site_policy() == Policy(10, 30, "chip_position")
        assert crash_policy_check(None) == []


@pytest.mark.parametrize(
    ("config", "variable", "words"),
    [
        ({"pre_pct": "five"}, "CRASH_POLICY_PRE_PCT='five'", "whole percentage"),
        ({"pre_pct": "7.5"}, "CRASH_POLICY_PRE_PCT='7.5'", "whole percentage"),
        ({"early_pct": "101"}, "CRASH_POLICY_EARLY_PCT='101'", "from 0 to 100"),
        ({"early_pct": "-1"}, "CRASH_POLICY_EARLY_PCT='-1'", "from 0 to 100"),
        ({"pre_pct": "30", "early_pct": "20"}, "CRASH_POLICY_EARLY_PCT='20'", "at least pre_pct"),
        ({"pre_pct": "40"}, "CRASH_POLICY_EARLY_PCT", "at least pre_pct (40), not 25"),
        ({"late_formula": "equity"}, "CRASH_POLICY_LATE_FORMULA='equity'", "chip_equity or"),
        ({"pre_pct": True}, "CRASH_POLICY_PRE_PCT=True", "whole number from 0 to 100"),
        ({"pre_pc": 5}, "CRASH_POLICY", "pre_pc"),
    ],
)
def test_the_system_check_refuses_a_bad_value_naming_its_variable(config, variable, words):
    with override_settings(CRASH_POLICY=config):
        errors = crash_policy_check(None)
        assert [error.id for error in errors] == ["settlements.E001"]
        assert errors[0].msg.startswith(variable), errors[0].msg
        assert words in errors[0].msg
        assert "CRASH_POLICY_PRE_PCT, CRASH_POLICY_EARLY_PCT" in errors[0].hint
        # Nothing is ever assessed with a policy the check refuses.
        with pytest.raises(ImproperlyConfigured, match=variable.split("=")[0]):
            site_policy()


def test_every_bad_variable_is_reported_at_once():
    config = {"pre_pct": "x", "early_pct": "y", "late_formula": "z"}
    with override_settings(CRASH_POLICY=config):
        assert [error.msg.split("=")[0] for error in crash_policy_check(None)] == [
            "CRASH_POLICY_PRE_PCT",
            "CRASH_POLICY_EARLY_PCT",
            "CRASH_POLICY_LATE_FORMULA",
        ]


def run_manage(*args: str, **environment: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "DATABASE_URL": "sqlite:///:memory:", **environment}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow  # starts manage.py in a fresh interpreter
def test_a_bad_environment_variable_stops_manage_py():
    refused = run_manage("check", CRASH_POLICY_PRE_PCT="50", CRASH_POLICY_EARLY_PCT="10")
    assert refused.returncode != 0
    assert "(settlements.E001) CRASH_POLICY_EARLY_PCT='10': must be at least pre_pct (50)" in (
        refused.stderr
    )
    accepted = run_manage("check", CRASH_POLICY_PRE_PCT="10", CRASH_POLICY_LATE_FORMULA="")
    assert accepted.returncode == 0, accepted.stderr


# --- Cases loaded under the rulebook, whatever the environment says -------------------------

pytestmark_db = pytest.mark.django_db


@pytestmark_db
def test_the_environment_no_longer_stages_cases(operator):
    """The variables only seeded `default` version 1 when the migration ran (W011 warns of
    them since); a case is staged by the rulebook version in force."""
    data = snapshot_with(3)
    with override_settings(CRASH_POLICY=SITE):
        case = case_load_snapshot(actor=operator, snapshot=data)
    assert case.stage == assess(parse_snapshot(data), DEFAULT_POLICY).stage == "early"
    assert case.policy == DEFAULT_POLICY.to_dict()
    assert (case.rulebook_version.rulebook.key, case.rulebook_version.number) == ("default", 1)


@pytestmark_db
def test_the_api_loads_under_the_rulebook(operator):
    _, token = api_token_create(user=operator, name="game server")
    with override_settings(CRASH_POLICY=SITE):
        response = post_snapshot(Client(), token, snapshot_with(3))
    assert response.status_code == 201, response.content
    case = Case.objects.get(pk=response.json()["case"])
    assert case.stage == "early"


@pytest.mark.parametrize(
    ("percent", "min_amount", "words"),
    [
        (101, 1000, "ICM_FLAG_PERCENT=101"),
        (-1, 1000, "ICM_FLAG_PERCENT=-1"),
        (10, -5, "ICM_FLAG_MIN_AMOUNT=-5"),
    ],
)
def test_the_system_check_refuses_a_bad_icm_threshold(settings, percent, min_amount, words):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = percent, min_amount
    errors = icm_flag_check(None)
    assert [error.id for error in errors] == ["settlements.E002"]
    assert words in errors[0].msg
    with pytest.raises(ImproperlyConfigured, match=words):
        icm_flag()


def test_a_good_icm_threshold_passes(settings):
    settings.ICM_FLAG_PERCENT, settings.ICM_FLAG_MIN_AMOUNT = 0, 0
    assert icm_flag_check(None) == []
    assert icm_flag() == IcmFlag(percent=0, min_amount=0)


@given(
    difference=st.integers(-(10**12), 10**12),
    amount=st.integers(0, 10**12),
    percent=st.integers(0, 100),
    min_amount=st.integers(0, 10**9),
)
def test_the_flag_in_python_is_the_databases(difference, amount, percent, min_amount):
    """IcmFlag.flags and selectors.icm's query say the same, in integers."""
    flag = IcmFlag(percent=percent, min_amount=min_amount)
    in_the_database = (
        difference <= -min_amount and difference * 100 + amount * percent <= 0 and difference < 0
    )
    assert flag.flags(difference, amount) == in_the_database
