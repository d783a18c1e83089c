"""Bad input never hurts: hypothesis throws mutated snapshots at the web upload and the API.

Each example starts from a valid snapshot of some type and stage, damages its structure
(wrong types, missing and extra fields, nulls, huge numbers, unicode and NUL in ids, empty
and giant lists, nested garbage) and then, sometimes, its bytes (broken or truncated JSON,
NaN, duplicate keys, a byte-order mark, UTF-16, invalid UTF-8, lone surrogates), and posts
the result to both entry points. Whatever it is, the answer is never a server error, a
refusal names the path of every problem, and a refusal leaves every table as it was.
"""

import json
import re
from datetime import timedelta

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from settlements.models import Case
from settlements.services.incidents import incident_report
from settlements.services.tokens import api_token_create
from tests.api.conftest import post_snapshot
from tests.conftest import build_snapshot

pytestmark = pytest.mark.django_db

BASES = [
    build_snapshot(type=type_, stage=stage, entrants=12, tournament_id=f"FZ-{type_}-{stage}")
    for type_ in ("regular", "freeroll", "satellite")
    for stage in ("pre", "early", "middle", "late")
]

FIELD_NAMES = (
    "format",
    "tournament",
    "players",
    "crashed_at",
    "id",
    "name",
    "type",
    "currency",
    "started",
    "buy_in",
    "fee",
    "guarantee",
    "fpp_buy_in",
    "prize_pool",
    "payouts",
    "seat_value",
    "chips",
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=12,
)
edge_values = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        -1,
        1.0,
        1.5,
        -0.0,
        1e308,
        2**63 - 1,
        2**63,
        -(2**63) - 1,
        10**15 + 1,
        10**18 + 1,
        10**40,
        "",
        " ",
        "1000",
        "USD",
        "regular",
        "crash-snapshot/1",
        [],
        {},
        [None],
        [0],
        [-1],
        [10**40],
        {"id": None},
        "\x00",
        "\u202e",
        "🂡" * 100,
    ]
)
garbage = st.one_of(
    json_values,
    edge_values,
    st.integers(min_value=-(2**200), max_value=2**200),
    st.text(st.characters(codec="utf-8"), max_size=300),
)
identifiers = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=40),
    st.text(min_size=190, max_size=260),
    st.sampled_from(["", " ", "\x00", "p\x00", "a" * 201, "ü" * 200, "\u200b", "😀" * 60]),
)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def _at(doc, path):
    for step in path:
        doc = doc[step]
    return doc


def _parent(doc, path):
    return _at(doc, path[:-1])


def _mutate(doc, data):
    """One structural change at a path drawn from the document."""
    paths = list(_paths(doc))
    kind = data.draw(
        st.sampled_from(["replace", "delete", "add", "giant", "empty", "ids", "duplicate"])
    )
    if kind == "replace":
        path = data.draw(st.sampled_from(paths))
        value = data.draw(garbage)
        if not path:
            return value
        _parent(doc, path)[path[-1]] = value
    elif kind == "delete" and len(paths) > 1:
        path = data.draw(st.sampled_from(paths[1:]))
        del _parent(doc, path)[path[-1]]
    elif kind == "add":
        dicts = [path for path in paths if isinstance(_at(doc, path), dict)]
        if dicts:
            path = data.draw(st.sampled_from(dicts))
            key = data.draw(st.sampled_from(FIELD_NAMES) | st.text(max_size=12))
            _at(doc, path)[key] = data.draw(garbage | st.integers(0, 10**6))
    elif kind in ("giant", "empty"):
        lists = [path for path in paths if path and isinstance(_at(doc, path), list)]
        if lists:
            path = data.draw(st.sampled_from(lists))
            size = 0 if kind == "empty" else data.draw(st.integers(1_000, 20_000))
            if path[-1] == "players":
                value = [{"id": f"g{i}", "chips": (i * 7919) % 5} for i in range(size)]
            else:
                value = [data.draw(st.integers(0, 10**6))] * size
            _parent(doc, path)[path[-1]] = value
    elif kind == "ids":
        targets = [path for path in paths if path and path[-1] == "id"]
        if targets:
            path = data.draw(st.sampled_from(targets))
            _parent(doc, path)["id"] = data.draw(identifiers)
    elif kind == "duplicate":
        players = doc.get("players") if isinstance(doc, dict) else None
        if isinstance(players, list) and players:
            players.append(players[data.draw(st.integers(0, len(players) - 1))])
    return doc


def _damage(text: str, data) -> bytes:
    """Sometimes, damage the encoded document itself."""
    kind = data.draw(
        st.sampled_from(
            [
                "none",
                "none",
                "none",
                "truncate",
                "insert",
                "nan",
                "duplicate key",
                "bom",
                "utf-16",
                "invalid utf-8",
                "lone surrogate",
                "trailing",
                "empty",
                "not json",
            ]
        )
    )
    raw = text.encode("utf-8")
    position = data.draw(st.integers(0, max(len(raw) - 1, 0)))
    if kind == "truncate":
        return raw[:position]
    if kind == "insert":
        return raw[:position] + data.draw(st.binary(min_size=1, max_size=8)) + raw[position:]
    if kind == "nan":
        number = data.draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e3", "01000"]))
        return text.replace("1000", number, 1).encode()
    if kind == "duplicate key":
        return text.replace("{", '{"format": "crash-snapshot/1", ', 1).encode()
    if kind == "bom":
        return b"\xef\xbb\xbf" + raw
    if kind == "utf-16":
        return text.encode("utf-16")
    if kind == "invalid utf-8":
        return raw[:position] + b"\xc3\x28" + raw[position:]
    if kind == "lone surrogate":
        return text.replace('"id": "', '"id": "\\ud800', 1).encode()
    if kind == "trailing":
        return raw + data.draw(st.sampled_from([b" {}", b",", b"\x00", b"]", b" garbage"]))
    if kind == "empty":
        return data.draw(st.sampled_from([b"", b" ", b"\n\t"]))
    if kind == "not json":
        return data.draw(st.binary(max_size=64))
    return raw


def _row_counts() -> tuple[int, ...]:
    """Rows of every table of every installed model, in one query."""
    quote = connection.ops.quote_name
    tables = sorted({model._meta.db_table for model in apps.get_models(include_auto_created=True)})
    counts = ", ".join(f"(SELECT COUNT(*) FROM {quote(table)})" for table in tables)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {counts}")
        return tuple(cursor.fetchone())


# "$", or a field name, then any number of `.name`, `[index]` and `["odd key"]` steps.
WELL_FORMED_PATH = re.compile(r'(\$|[A-Za-z_]\w*)(\.[A-Za-z_]\w*|\[\d+\]|\["(?:[^"\\]|\\.)*"\])*')


def _assert_paths(problems: list[tuple[object, object]]) -> None:
    assert problems, "a refusal without any problem listed"
    for where, message in problems:
        assert isinstance(where, str) and WELL_FORMED_PATH.fullmatch(where), (
            f"a problem without a proper path: {where!r}: {message}"
        )
        assert isinstance(message, str) and message.strip(), f"{where}: no message"


def _through_the_api(client: Client, token: str, body: bytes) -> None:
    before = _row_counts()
    response = post_snapshot(client, token, body)
    event(f"api: {response.status_code}")
    assert response.status_code in (201, 400), response.content[:500]
    assert response["Content-Type"] == "application/json"
    if response.status_code == 201:
        assert Case.objects.filter(pk=response.json()["case"]).exists()
        return
    _assert_paths([(e.get("path"), e.get("message")) for e in response.json()["errors"]])
    assert _row_counts() == before, "a refused snapshot changed the database"


def _through_the_upload(client: Client, url: str, body: bytes, paste: bool) -> None:
    before = _row_counts()
    if paste:
        form = {"text": body.decode("utf-8")}
    else:
        form = {"file": SimpleUploadedFile("snapshot.json", body, "application/json")}
    response = client.post(url, form)
    event(f"upload: {response.status_code}")
    assert response.status_code in (302, 422), response.content[:500]
    if response.status_code == 302:
        assert response["Location"].startswith("/cases/")
        return
    problems = [(p.path, p.message) for p in response.context["problems"]]
    if not problems:
        # Only a form-level refusal has no JSON path: nothing was given at all (an empty
        # file, or pasted text that is all whitespace, Unicode's included), or pasted text
        # with a NUL character, which no text field takes. It names the form field instead.
        given = body.decode("utf-8").strip() if paste else body
        assert not given or (paste and "\x00" in given), response.context["form"].errors
        problems = [
            (field, " ".join(errors)) for field, errors in response.context["form"].errors.items()
        ]
    _assert_paths(problems)
    assert _row_counts() == before, "a refused upload changed the database"


@pytest.fixture
def endpoints(operator):
    incident = incident_report(
        actor=operator, title="Fuzzing", started_at=timezone.now() - timedelta(hours=1)
    )
    _, token = api_token_create(user=operator, name="fuzzer")
    web = Client()
    web.force_login(operator)
    return Client(), token, web, f"/incidents/{incident.pk}/upload/"


@settings(
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(data=st.data())
def test_mutated_snapshots_never_hurt_the_upload_or_the_api(endpoints, data):
    api, token, web, upload_url = endpoints
    doc = json.loads(json.dumps(data.draw(st.sampled_from(BASES))))
    for _ in range(data.draw(st.integers(1, 4))):
        doc = _mutate(doc, data)
    text = json.dumps(doc, ensure_ascii=data.draw(st.booleans()))
    body = _damage(text, data)
    paste = data.draw(st.booleans())
    can_paste = _is_utf8(body)

    # Each entry point gets the same document in a clean database: what one stores is
    # rolled back before the other (and the next example) runs.
    for send in ("api", "upload"):
        with transaction.atomic():
            if send == "api":
                _through_the_api(api, token, body)
            else:
                _through_the_upload(web, upload_url, body, paste and can_paste)
            transaction.set_rollback(True)


def _is_utf8(body: bytes) -> bool:
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@pytest.mark.parametrize(
    ("key", "where", "path"),
    [
        ("", "top", '$[""]'),
        (" ", "tournament", 'tournament[" "]'),
        ("a.b", "player", 'players[2]["a.b"]'),
        ("\n", "top", '$["\\n"]'),
        ("bogus", "tournament", "tournament.bogus"),
    ],
)
def test_odd_keys_are_reported_at_paths_that_name_them(endpoints, key, where, path):
    """Found by the test above: an unknown key "" was reported at an empty path, and "a.b"
    at a path that reads as two fields."""
    api, token, _, _ = endpoints
    doc = build_snapshot()
    {"top": doc, "tournament": doc["tournament"], "player": doc["players"][2]}[where][key] = 1
    response = post_snapshot(api, token, json.dumps(doc).encode())
    assert response.status_code == 400
    assert [error["path"] for error in response.json()["errors"]] == [path]
