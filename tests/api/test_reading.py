"""The typed readers (settlements/api/reading.py): a query string or a JSON object into a Struct,
or every problem at its path in the snapshot parser's words."""

from typing import Annotated
from urllib.parse import quote

import msgspec
import pytest
from django.http import QueryDict

from settlements.api.ledger import Confirmation
from settlements.api.reading import Id, read_object, read_query
from settlements.api.statements import StatementsQuery
from settlements.rules import InvalidInput, Problem
from settlements.workflow import CaseStatus


class Query(msgspec.Struct, kw_only=True, frozen=True):
    after: Id | None = None
    limit: Annotated[int, msgspec.Meta(ge=1, le=10)] = 5
    status: CaseStatus | None = None
    name: str | None = None
    code: Annotated[str, msgspec.Meta(max_length=3)] | None = None


def problems_of(query: str, type_=Query) -> list[Problem]:
    with pytest.raises(InvalidInput) as refused:
        read_query(QueryDict(query), type_)
    return refused.value.problems


# --- Query strings ---------------------------------------------------------------------------


def test_what_is_not_sent_takes_its_default_and_what_is_not_declared_is_left_alone():
    assert read_query(QueryDict("format=json&after_x=1"), Query) == Query()


def test_values_arrive_typed():
    query = read_query(QueryDict("after=7&limit=10&status=ready&name=T-1"), Query)
    assert query == Query(after=7, limit=10, status=CaseStatus.READY, name="T-1")
    assert query.status is CaseStatus.READY


def test_the_last_of_a_repeated_parameter_counts_as_for_any_django_view():
    assert read_query(QueryDict("limit=ten&limit=3"), Query).limit == 3
    assert problems_of("limit=3&limit=ten") == [
        Problem("?limit", "must be a whole number above zero, in digits 0-9")
    ]


@pytest.mark.parametrize(
    "raw",
    # msgspec alone would read "1e3", "5.0" and "-1" as numbers; int() would read " 1", "+1"
    # and other scripts' digits.
    ["", "0", "-1", "+1", " 1", "1 ", "1e3", "5.0", "1_0", "0x1", "²", "١", "１", "9" * 40]
    + [str(2**63), "1\x00"],
)
def test_a_number_is_ascii_digits_and_nothing_else(raw):
    assert problems_of(f"after={quote(raw)}") == [
        Problem("?after", "must be a whole number above zero, in digits 0-9")
    ]


def test_leading_zeros_and_the_largest_stored_number_are_numbers():
    assert read_query(QueryDict("after=007"), Query).after == 7
    assert read_query(QueryDict(f"after={2**63 - 1}"), Query).after == 2**63 - 1


@pytest.mark.parametrize("raw", ["11", "9" * 18, str(2**63 - 1)])
def test_a_number_above_the_maximum_says_the_maximum(raw):
    assert problems_of(f"limit={raw}") == [Problem("?limit", "must be at most 10")]


@pytest.mark.parametrize("raw", ["lost", "", "READY", "ready ", "ready\x00"])
def test_a_choice_lists_the_choices(raw):
    choices = ", ".join(CaseStatus.values)
    assert problems_of(f"status={quote(raw)}") == [Problem("?status", f"must be one of {choices}")]


def test_any_text_is_text_however_long():
    assert read_query(QueryDict(f"name={'x' * 100_000}"), Query).name == "x" * 100_000
    assert read_query(QueryDict("name="), Query).name == ""


def test_other_constraints_are_refused_in_the_snapshot_parsers_way():
    [problem] = problems_of("code=long")
    assert problem.path == "?code" and "3" in problem.message


def test_every_parameter_that_does_not_fit_is_a_problem_in_the_types_order():
    problems = problems_of("status=lost&limit=0&after=x&code=long&name=fine")
    assert [problem.path for problem in problems] == ["?after", "?limit", "?status", "?code"]


def test_a_rule_between_parameters_is_asked_once_each_fits():
    assert problems_of("player=p1&limit=5", StatementsQuery) == [
        Problem("?player", "asks for one statement: leave out ?after and ?limit")
    ]
    assert problems_of("player=p1&after=", StatementsQuery)[0].path == "?player"
    assert [problem.path for problem in problems_of("player=p1&limit=0", StatementsQuery)] == [
        "?limit"
    ]
    assert read_query(QueryDict("player=p1"), StatementsQuery).page_size == 100


# --- JSON objects ----------------------------------------------------------------------------


def confirmation(**changes) -> dict:
    return {
        "idempotency_key": "1-1",
        "status": "paid",
        "external_reference": "tx-1",
        "at": "2026-11-01T09:30:00Z",
        "amount": 100,
        **changes,
    }


def refusal(value, **kwargs) -> Problem:
    with pytest.raises(InvalidInput) as refused:
        read_object(value, Confirmation, root="confirmations[2]", **kwargs)
    [problem] = refused.value.problems
    return problem


def test_an_object_that_fits_is_read():
    assert read_object(confirmation(), Confirmation, root="$") == Confirmation(
        "1-1", "paid", "tx-1", "2026-11-01T09:30:00Z", 100
    )


@pytest.mark.parametrize(
    ("changes", "path", "message"),
    [
        ({"amount": "100"}, "amount", "must be an integer, not a string"),
        ({"amount": 100.0}, "amount", "must be an integer, not a decimal number"),
        ({"amount": True}, "amount", "must be an integer, not true/false"),
        ({"amount": [100]}, "amount", "must be an integer, not a list"),
        ({"status": 1}, "status", "must be a string, not a number"),
        ({"at": {"utc": "now"}}, "at", "must be a string, not an object"),
        ({"idempotency_key": None}, "idempotency_key", "must be a string, not null"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused_at_its_path(changes, path, message):
    problem = refusal(confirmation(**changes))
    assert problem.path == f"confirmations[2].{path}"
    assert problem.message.startswith(message)


def test_a_missing_field_is_required():
    document = confirmation()
    del document["at"]
    assert refusal(document) == Problem("confirmations[2].at", "is required")


@pytest.mark.parametrize(
    ("key", "path"),
    [
        ("currency", "confirmations[2].currency"),
        ("ѕtatus", "confirmations[2].ѕtatus"),  # a Cyrillic ѕ: the path the client wrote
        ("", 'confirmations[2][""]'),
        ("a.b", 'confirmations[2]["a.b"]'),
        ("x" * 10_000, f"confirmations[2].{'x' * 10_000}"),
    ],
)
def test_a_field_the_type_does_not_declare_is_refused_by_name(key, path):
    assert refusal({**confirmation(), key: 1}) == Problem(
        path, "is not a known field (check the spelling)"
    )
    words = "is not a field of a confirmation"
    assert refusal({key: 1}, unknown_field=words) == Problem(path, words)


@pytest.mark.parametrize("value", ["text", 1, None, [], [confirmation()]])
def test_something_else_than_an_object_is_refused_whole(value):
    problem = refusal(value)
    assert problem.path == "confirmations[2]"
    assert problem.message.startswith("must be an object, not ")


def test_any_integer_is_an_integer_however_large():
    # What an amount must be is the payment service's to say (the line's amount).
    assert read_object(confirmation(amount=2**70), Confirmation, root="$").amount == 2**70
