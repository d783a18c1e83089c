"""Role groups and helpers; the case, settlement and compensation state machines."""

import importlib

import pytest
from django.apps import apps
from django.contrib.auth.models import Group

from settlements.access import roles
from settlements.errors import InvalidTransition, NotAllowed
from settlements.workflow import (
    CaseStatus,
    CompensationStatus,
    SettlementStatus,
    case_allows,
    case_next_status,
    compensation_next_status,
    settlement_next_status,
)
from tests.conftest import make_user


@pytest.mark.django_db
def test_the_data_migration_creates_the_four_role_groups():
    Group.objects.filter(name__in=roles.DESK_ROLES).delete()
    migration = importlib.import_module("settlements.migrations.0002_roles")
    migration.create_roles(apps, None)
    migration.create_roles(apps, None)  # running it again is harmless
    names = sorted(Group.objects.filter(name__in=roles.DESK_ROLES).values_list("name", flat=True))
    assert names == sorted(roles.DESK_ROLES)


@pytest.mark.django_db
def test_a_data_migration_creates_the_cashier_role_outside_the_desk_roles(django_user_model):
    Group.objects.filter(name=roles.CASHIER).delete()
    migration = importlib.import_module("settlements.migrations.0012_cashier_role")
    migration.create_role(apps, None)
    migration.create_role(apps, None)
    assert Group.objects.filter(name=roles.CASHIER).count() == 1
    assert roles.CASHIER not in roles.DESK_ROLES
    wallet = make_user(django_user_model, "wallet", roles.CASHIER)
    assert roles.user_roles(wallet) == {roles.CASHIER}
    assert roles.role_labels(wallet) == ["Cashier"]


@pytest.mark.django_db
def test_user_roles_follow_group_membership(django_user_model):
    both = make_user(django_user_model, "both", roles.OPERATOR, roles.TOURNAMENT_MANAGER)
    assert roles.user_roles(both) == {roles.OPERATOR, roles.TOURNAMENT_MANAGER}
    assert roles.has_role(both, roles.AUDITOR, roles.OPERATOR)
    assert not roles.has_role(both, roles.AUDITOR)
    assert roles.role_labels(both) == ["Operator", "Tournament Manager"]


@pytest.mark.django_db
def test_superusers_and_inactive_users_hold_no_business_role(django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="x")
    assert roles.user_roles(admin) == frozenset()
    former = make_user(django_user_model, "former", roles.OPERATOR, is_active=False)
    assert roles.user_roles(former) == frozenset()
    assert roles.user_roles(None) == frozenset()


@pytest.mark.django_db
def test_roles_are_cached_until_forgotten(django_user_model):
    user = make_user(django_user_model, "mover", roles.OPERATOR)
    assert roles.user_roles(user) == {roles.OPERATOR}
    user.groups.add(Group.objects.get(name=roles.AUDITOR))
    assert roles.user_roles(user) == {roles.OPERATOR}
    roles.forget_roles(user)
    assert roles.user_roles(user) == {roles.OPERATOR, roles.AUDITOR}


@pytest.mark.django_db
def test_require_role_names_who_may_act(auditor):
    with pytest.raises(NotAllowed) as refused:
        roles.require_role(
            auditor, roles.OPERATOR, roles.TOURNAMENT_MANAGER, action="propose compensation"
        )
    assert str(refused.value) == "Only Operators or Tournament Managers may propose compensation."
    roles.require_role(auditor, roles.AUDITOR)


CASE_PATH = [
    ("decide", CaseStatus.AWAITING_DECISION, CaseStatus.READY),
    ("decide", CaseStatus.READY, CaseStatus.READY),
    ("prepare", CaseStatus.READY, CaseStatus.PREPARED),
    ("submit", CaseStatus.PREPARED, CaseStatus.AWAITING_APPROVAL),
    ("approve", CaseStatus.AWAITING_APPROVAL, CaseStatus.APPROVED),
    ("reject", CaseStatus.AWAITING_APPROVAL, CaseStatus.REJECTED),
    ("prepare", CaseStatus.REJECTED, CaseStatus.PREPARED),
    ("decide", CaseStatus.REJECTED, CaseStatus.READY),
    ("resolve", CaseStatus.OPEN, CaseStatus.RESOLVED),
]


@pytest.mark.parametrize(("action", "start", "end"), CASE_PATH)
def test_legal_case_moves(action, start, end):
    assert case_next_status(start, action, label="Case #1") == end
    assert case_allows(start, action)


def test_every_other_case_move_is_refused():
    legal = {(action, start) for action, start, _ in CASE_PATH}
    for action in {action for action, _, _ in CASE_PATH}:
        for start in CaseStatus.values:
            if (action, start) in legal:
                continue
            assert not case_allows(start, action)
            with pytest.raises(InvalidTransition):
                case_next_status(start, action, label="Case #1")


def test_an_illegal_move_says_why_in_words():
    with pytest.raises(InvalidTransition) as refused:
        case_next_status(CaseStatus.APPROVED, "prepare", label="Case #7")
    assert str(refused.value) == "Cannot prepare a settlement for Case #7: it is approved."
    with pytest.raises(InvalidTransition) as refused:
        settlement_next_status(SettlementStatus.APPROVED, "approve", label="Settlement #3")
    assert str(refused.value) == "Cannot approve Settlement #3: it is approved."


def test_settlement_and_compensation_machines():
    assert settlement_next_status("prepared", "submit", label="S") == "awaiting_approval"
    assert settlement_next_status("awaiting_approval", "reject", label="S") == "rejected"
    for status in ("prepared", "approved", "rejected"):
        with pytest.raises(InvalidTransition):
            settlement_next_status(status, "approve", label="S")
    assert compensation_next_status("proposed", "approve", label="C") == "approved"
    for status in (CompensationStatus.APPROVED, CompensationStatus.REJECTED):
        with pytest.raises(InvalidTransition):
            compensation_next_status(status, "reject", label="C")
