"""Every member of every vocabulary, against every surface that shows or checks it: a member
added to a registry fails here where a surface does not handle it yet."""

import ast
import itertools
import typing
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib.auth.models import Group
from django.urls import reverse

from settlements import desk_roles, wording, workflow
from settlements.api import answers, openapi, urls
from settlements.models.choices import LineKind, Source, Stage, TournamentType, Unit
from settlements.money import UNIT_ORDER, UNITS, decimal_amount, format_in_unit, unit_rank
from settlements.rules import (
    POLICY_KEYS,
    Policy,
    decision_options,
    output,
    remedies,
    remedy_for,
    stage,
)
from settlements.rules.remedy_names import DECISION_OPTIONS, REMEDIES
from settlements.selectors import settlements as settlement_selectors
from settlements.statements import words
from settlements.templatetags.money import unit_name
from settlements.templatetags.navigation import NAVIGATION
from settlements.templatetags.players import line_kind, line_source
from settlements.templatetags.remedies import option_label, options_sentence, remedy_label
from settlements.templatetags.review import payout_text
from settlements.workflow import CaseStatus, RulebookVersionStatus, SettlementStatus

# The line kinds the engine writes; compensation and prize withdrawals are written by services.
ENGINE_KINDS = {kind for _, kind, *_ in output.COLUMNS}
ENGINE_SOURCES = {source for *_, source, _ in output.COLUMNS}


def _choices(annotation) -> set[str]:
    return set(typing.get_args(annotation))


def _schema_enum(schema: str, field: str) -> set[str]:
    """The values the served OpenAPI document offers for ``schema``'s ``field`` (or for each
    item of it, when a list; besides null, when it may be null)."""
    document = openapi.build(urls.urlpatterns, server_url="http://testserver")
    offered = document["components"]["schemas"][schema]["properties"][field]
    offered = offered.get("items", offered)
    # A field that may be null is "anyOf" its values and null.
    offered = next((one for one in offered.get("anyOf", ()) if "enum" in one), offered)
    return set(offered["enum"])


@pytest.mark.parametrize("kind", LineKind.values)
def test_every_line_kind_is_offered_by_the_api_and_worded(kind):
    assert kind in _choices(answers.LineKindValue)
    assert kind in _schema_enum("FeedLine", "kind")
    assert kind in _schema_enum("StatementLine", "kind")
    assert kind in words.KIND_LABELS
    assert line_kind(kind) == words.KIND_LABELS[kind].capitalize()


def test_statements_word_the_registered_line_kinds_and_sources_only():
    assert set(words.KIND_LABELS) == set(LineKind.values)
    assert set(words.SOURCE_LABELS) == set(Source.values)


def test_the_engines_line_kinds_and_sources_are_registered_and_worded():
    assert set(LineKind.values) >= ENGINE_KINDS
    assert set(Source.values) >= ENGINE_SOURCES
    assert set(words.KIND_LABELS) >= ENGINE_KINDS


@pytest.mark.parametrize("source", Source.values)
def test_every_source_is_offered_worded_and_ordered(source):
    assert source in _choices(answers.SourceValue)
    assert source in _schema_enum("FeedLine", "source")
    assert source in _schema_enum("StatementLine", "source")
    assert source in words.SOURCE_LABELS
    assert line_source(source) == words.SOURCE_LABELS[source].capitalize()
    assert source in settlement_selectors._SOURCE_ORDER


def test_units_have_one_order():
    assert tuple(Unit.values) == UNIT_ORDER == output.FIELDS
    assert dict(Unit.choices) == UNITS
    assert tuple(typing.get_args(answers.UnitValue)) == UNIT_ORDER
    assert settlement_selectors.BY_AMOUNT[: len(UNIT_ORDER)] == tuple(f"-{u}" for u in UNIT_ORDER)


@pytest.mark.parametrize("unit", Unit.values)
def test_every_unit_is_ranked_and_shown(unit):
    assert unit_rank(unit) == UNIT_ORDER.index(unit)
    row = type("Row", (), dict.fromkeys(UNIT_ORDER, 0) | {unit: 2})
    assert payout_text(row, "USD") != "nothing"
    assert unit_name(unit) == UNITS[unit]
    assert unit in _schema_enum("FeedLine", "unit")
    assert unit in _schema_enum("StatementLine", "unit")
    # What a statement writes (an unknown unit raises) and the figure an export writes.
    assert "12" in format_in_unit(12345, unit, "USD")
    assert decimal_amount(12345, unit, "USD") in {"123.45", "12345"}


@pytest.mark.parametrize("unit", Unit.values)
def test_every_unit_has_its_column_on_the_review_page(unit):
    # A column of its own: its heading and its cell.
    template = Path(settings.BASE_DIR, "templates/settlements/settlement_review.html")
    assert template.read_text().count(f'"{unit}" in units') >= 2


def test_payout_text_lists_units_in_their_order():
    row = type("Row", (), dict.fromkeys(UNIT_ORDER, 1))
    parts = payout_text(row, "USD").split(" + ")
    assert len(parts) == len(UNIT_ORDER)


@pytest.mark.parametrize("tournament_type", TournamentType.values)
def test_every_tournament_type_is_offered_worded_and_ruled(tournament_type):
    assert tournament_type in _choices(answers.TournamentTypeValue)
    assert tournament_type in _schema_enum("TournamentSummary", "type")
    assert tournament_type in words.TYPE_LABELS
    for name in Stage.values:
        assert (tournament_type, name) in remedies.TABLE


def test_stages_are_the_engines():
    assert tuple(Stage.values) == stage.STAGES


@pytest.mark.parametrize("name", Stage.values)
def test_every_stage_is_offered_by_the_api(name):
    assert name in _choices(answers.StageValue)
    for schema in ("CaseCreated", "SettlementAnswer", "StatementDocument"):
        assert name in _schema_enum(schema, "stage"), schema


@pytest.mark.parametrize(
    ("registry", "offered", "fields"),
    [
        (
            CaseStatus,
            answers.CaseStatusValue,
            [("CaseCreated", "status"), ("CaseSummary", "status")],
        ),
        (
            SettlementStatus,
            answers.SettlementStatusValue,
            [("AdjustmentAnswer", "status"), ("StatementsPage", "settlement_status")],
        ),
        (
            RulebookVersionStatus,
            answers.RulebookVersionStatusValue,
            [("RulebookVersionAnswer", "status")],
        ),
    ],
    ids=["cases", "settlements", "rulebook versions"],
)
def test_every_status_is_offered_by_the_api(registry, offered, fields):
    assert _choices(offered) == set(registry.values)
    for schema, field in fields:
        assert _schema_enum(schema, field) == set(registry.values), schema


def _every_rulebook():
    """A policy for each combination of the values RULES.md §9 names (its formulas among them);
    the numbers only move stage marks, and final_table_icm's ICM is in reachable_remedies."""
    named = [key for key in POLICY_KEYS if key.choices]
    for values in itertools.product(*(key.choices for key in named)):
        yield Policy(**{key.name: value for key, value in zip(named, values, strict=True)})


def test_every_remedy_and_option_of_the_table_is_registered():
    """Under every rulebook, each cell's options and whatever they or the cell pay by are in
    the registry; and the registry names nothing the engine never pays by or offers."""
    offered, paid = set(), set()
    for kind, name in remedies.TABLE:
        options = decision_options(kind, name)
        offered |= set(options)
        paid |= remedies.reachable_remedies(kind, name)
        for policy in _every_rulebook():
            paid |= {remedy_for(kind, name, decision=option, policy=policy) for option in options}
            if not options:
                paid.add(remedy_for(kind, name, policy=policy))
    assert offered == set(DECISION_OPTIONS)
    assert paid == set(REMEDIES)


# Where the API sends a remedy, and a decision option (alone, or a list of them).
REMEDY_FIELDS = [
    ("SettlementAnswer", "remedy"),
    ("StatementDocument", "remedy"),
    ("SimulationCase", "remedy_then"),
    ("SimulationCase", "remedy_draft"),
]
OPTION_FIELDS = [
    ("CaseCreated", "decision_options"),
    ("CaseSummary", "decision_options"),
    ("CaseSummary", "decision"),
    ("SettlementAnswer", "decision_options"),
    ("SettlementAnswer", "decision"),
    ("StatementDocument", "decision"),
]


@pytest.mark.parametrize("remedy", REMEDIES)
def test_every_remedy_is_offered_by_the_api_and_worded(remedy):
    assert remedy in _choices(answers.RemedyValue)
    for schema, field in REMEDY_FIELDS:
        assert remedy in _schema_enum(schema, field), (schema, field)
    assert remedy in wording.REMEDY_LABELS
    assert remedy_label(remedy) == wording.REMEDY_LABELS[remedy]
    # What it pays, in words, in every cell that can pay by it (a split: by its formula).
    cells = [cell for cell in remedies.TABLE if remedy in remedies.reachable_remedies(*cell)]
    assert cells
    for kind, name in cells:
        assert wording.describe(kind, name, remedy), (kind, name)


@pytest.mark.parametrize("option", DECISION_OPTIONS)
def test_every_decision_option_is_offered_by_the_api_and_worded(option):
    assert option in _choices(answers.DecisionOptionValue)
    for schema, field in OPTION_FIELDS:
        assert option in _schema_enum(schema, field), (schema, field)
    assert option in wording.OPTION_LABELS
    assert option_label(option) == options_sentence([option]) == wording.OPTION_LABELS[option]
    cells = [cell for cell in remedies.TABLE if option in decision_options(*cell)]
    assert cells
    for kind, name in cells:
        assert wording.option_description(kind, name, option), (kind, name)


def test_remedies_and_options_are_worded_from_the_registry_only():
    assert set(wording.REMEDY_LABELS) == set(REMEDIES)
    assert set(wording.OPTION_LABELS) == set(DECISION_OPTIONS)
    assert set(typing.get_args(answers.RemedyValue)) == set(REMEDIES)
    assert set(typing.get_args(answers.DecisionOptionValue)) == set(DECISION_OPTIONS)


@pytest.mark.parametrize("role", desk_roles.KNOWN_ROLES)
def test_every_role_is_labelled_and_made_by_a_migration(db, role):
    assert role in desk_roles.LABELS
    assert Group.objects.filter(name=role).exists()


def test_role_sets_name_known_roles_and_the_cashier_is_no_desk_person():
    sets = {
        name: value
        for name, value in vars(desk_roles).items()
        if isinstance(value, tuple) and name not in ("DESK_ROLES", "KNOWN_ROLES")
    }
    assert sets
    for name, members in sets.items():
        assert set(members) <= set(desk_roles.KNOWN_ROLES), name
    assert desk_roles.CASHIER not in desk_roles.DESK_ROLES
    # Reading amounts is its own set, written out: a new desk role does not get it by default.
    assert desk_roles.LEDGER_READERS is not desk_roles.DESK_ROLES
    for label, url_name, allowed in NAVIGATION:
        reverse(url_name)
        assert set(allowed) <= set(desk_roles.DESK_ROLES), label


ROLE_NAMES = {
    name for name in vars(desk_roles) if getattr(desk_roles, name) in desk_roles.KNOWN_ROLES
}
# Where a role is named alone by design: the demo's people, one per role, and the queues, each
# waiting for one role (workflow.AWAITING, a registry of its own, checked below).
NAMES_ROLES_ALONE = {"settlements/management/commands/seed_demo.py", "settlements/workflow.py"}


def _role_sets_written_inline(path: Path) -> list[int]:
    """Lines of ``path`` that list roles themselves: a role constant inside a tuple, list or
    set, or handed to a call (``role_required(roles.OPERATOR)``, ``has_role(user, …)``)."""

    def is_role(node) -> bool:
        name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
        return name in ROLE_NAMES

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            members = node.elts
        elif isinstance(node, ast.Call):
            members = node.args
        else:
            continue
        found += [member.lineno for member in members if is_role(member)]
    return found


def test_role_sets_are_written_in_desk_roles_alone():
    """Each permission, page, job and endpoint names a set of desk_roles, so who may do what is
    read, and changed, in one place."""
    root = Path(settings.BASE_DIR)
    skipped = {"settlements/desk_roles.py", *NAMES_ROLES_ALONE}
    inline = {
        relative: lines
        for path in sorted([*root.glob("settlements/**/*.py"), *root.glob("crashdesk/**/*.py")])
        if (relative := str(path.relative_to(root))) not in skipped
        and "/migrations/" not in relative
        and (lines := _role_sets_written_inline(path))
    }
    assert inline == {}


@pytest.mark.parametrize("state", workflow.AWAITING, ids=lambda state: state.name)
def test_every_waiting_state_names_a_desk_role_a_model_and_its_statuses(state):
    assert state.role in desk_roles.DESK_ROLES
    model = apps.get_model(state.model)
    statuses = {value for value, _ in model._meta.get_field("status").choices}
    assert set(state.statuses) <= statuses
    for field in (state.since, *(name for name, _ in state.where)):
        model._meta.get_field(field)
    reverse(state.opens, args=[1] * len(state.opens_with))
