"""Fixtures shared by every test folder: a user per role and a snapshot factory, and the
hypothesis profiles.

Snapshots come from ``settlements.demo.build_snapshot`` (any type, any stage); the
``snapshot_factory`` fixture returns them as bytes, ready for ``case_load_snapshot``.
"""

import importlib
import os
import time

import pytest
from django.conf import settings as django_settings
from django.contrib.auth.models import Group
from django.core.cache import caches
from django.db import transaction
from django.test import Client
from hypothesis import settings as hypothesis_settings

from settlements.access import roles, second_factor
from settlements.demo import build_snapshot, snapshot_bytes

__all__ = ["build_snapshot", "snapshot_bytes"]

DEMO_PASSWORD = "crashdesk-test"
# The TOTP secret of users who sign in through the form with a second factor (base32).
TEST_TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

# A few dozen examples per property keep the local loop quick; CI (CI=true, as most CI
# services set it, or HYPOTHESIS_PROFILE=ci) looks 200 deep: deeper held the suite past CI's
# 15 minutes on two cores once the round's seal and archive tests joined it. Tests state only
# what else they need (deadline, health checks), so every property follows the profile.
hypothesis_settings.register_profile("dev", max_examples=30)
hypothesis_settings.register_profile("ci", max_examples=200)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE")
    or ("ci" if os.environ.get("CI", "").lower() in ("true", "1") else "dev")
)


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """The production hasher is slow on purpose; tests create many users."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def make_user(django_user_model, username: str, *role_names: str, **fields):
    """A user in the given role groups (the groups are created if a flush removed them), in one
    transaction with the events recording its access, as PostgreSQL requires."""
    with transaction.atomic():
        user, _ = django_user_model.objects.get_or_create(username=username, defaults=fields)
        user.set_password(DEMO_PASSWORD)
        user.save()
        for name in role_names:
            group, _ = Group.objects.get_or_create(name=name)
            user.groups.add(group)
    return user


@pytest.fixture(autouse=True)
def force_login_proves_second_factor(monkeypatch):
    """``Client.force_login`` signs a user in fully, as after the sign-in form and the second
    factor: the session counts the factor as proved just then. Tests of the second factor
    itself sign in through the form, or take the stamp away (``without_second_factor``)."""
    original = Client.force_login

    def force_login(self, user, backend=None):
        original(self, user, backend)
        prove_second_factor(self)

    monkeypatch.setattr(Client, "force_login", force_login)


def prove_second_factor(client: Client) -> Client:
    """``client``'s session as just after the second factor; child processes that sign in
    with the plain ``force_login`` call this themselves."""
    session = client.session
    second_factor.stamp_proof(session)
    session.save()
    client.cookies[django_settings.SESSION_COOKIE_NAME] = session.session_key
    return client


def without_second_factor(client: Client) -> Client:
    """``client``'s session as just after the password: no second factor proved yet."""
    session = client.session
    session.pop(second_factor.PROVED_AT_KEY, None)
    session.save()
    client.cookies[django_settings.SESSION_COOKIE_NAME] = session.session_key
    return client


def proved_ago(client: Client, seconds: float) -> Client:
    """``client``'s session as if the second factor was last proved ``seconds`` ago."""
    session = client.session
    session[second_factor.PROVED_AT_KEY] = time.time() - seconds
    session.save()
    client.cookies[django_settings.SESSION_COOKIE_NAME] = session.session_key
    return client


@pytest.fixture
def snapshot_factory():
    """``snapshot_factory(**kwargs)`` -> snapshot bytes; see ``build_snapshot``."""
    return snapshot_bytes


@pytest.fixture
def operator(django_user_model):
    return make_user(django_user_model, "operator", roles.OPERATOR)


@pytest.fixture
def second_operator(django_user_model):
    return make_user(django_user_model, "operator2", roles.OPERATOR)


@pytest.fixture
def marketing_manager(django_user_model):
    return make_user(django_user_model, "marketing", roles.MARKETING_MANAGER)


@pytest.fixture
def tournament_manager(django_user_model):
    return make_user(django_user_model, "manager", roles.TOURNAMENT_MANAGER)


@pytest.fixture
def second_manager(django_user_model):
    return make_user(django_user_model, "manager2", roles.TOURNAMENT_MANAGER)


@pytest.fixture
def auditor(django_user_model):
    return make_user(django_user_model, "auditor", roles.AUDITOR)


@pytest.fixture
def cashier(django_user_model):
    """The wallet system's user: reads the ledger feed and confirms payments, nothing else."""
    return make_user(django_user_model, "wallet", roles.CASHIER)


@pytest.fixture
def no_role_user(django_user_model):
    return make_user(django_user_model, "nobody")


@pytest.fixture
def users(
    operator, marketing_manager, tournament_manager, second_manager, auditor, cashier, no_role_user
):
    """Every kind of user by role name (plus "second_manager" and "none")."""
    return {
        roles.OPERATOR: operator,
        roles.MARKETING_MANAGER: marketing_manager,
        roles.TOURNAMENT_MANAGER: tournament_manager,
        "second_manager": second_manager,
        roles.AUDITOR: auditor,
        roles.CASHIER: cashier,
        "none": no_role_user,
    }


def clear_caches() -> None:
    """Empty every cache: a first view draws its fragments again."""
    for alias in django_settings.CACHES:
        caches[alias].clear()


@pytest.fixture(autouse=True)
def fresh_page_cache():
    # The database cache is rolled back with each test; the in-memory one outlives it.
    caches["pages"].clear()


@pytest.fixture(autouse=True)
def immediate_tasks(settings):
    """Background jobs run inside the request in tests; the tests of the worker itself
    switch back to the database backend."""
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}


@pytest.fixture
def database_tasks(settings, immediate_tasks):
    """Tasks queued in django-tasks-db's table, as the workers read them (PostgreSQL only: the
    worker shares the test database there)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the worker shares the test database only on PostgreSQL")
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}
    }


@pytest.fixture(autouse=True)
def default_rulebook(request):
    """A transactional test's flush empties the tables, the `default` rulebook that migration
    0044 wrote included: it is written again as the migration writes it. The database cache
    starts empty too."""
    marker = request.node.get_closest_marker("django_db")
    fixtures = set(request.fixturenames)
    if marker is None and not fixtures & {"db", "transactional_db", "live_server"}:
        return
    # A flush by an earlier transactional test on this worker (a live server's included) leaves
    # the next test without it, whichever kind that test is.
    transactional = bool(marker and marker.kwargs.get("transaction")) or bool(
        fixtures & {"transactional_db", "live_server"}
    )
    request.getfixturevalue("transactional_db" if transactional else "db")
    from django.apps import apps

    from settlements.models import Rulebook

    if not Rulebook.objects.filter(key="default").exists():
        importlib.import_module("settlements.migrations.0044_default_rulebook").forwards(apps, None)
    # A live server's request still answering when its test ended commits to the cache after
    # the flush: a verified head of that test's log, read as this test's, fails verification.
    caches["default"].clear()
