"""GET /api/v1/ledger and POST /api/v1/ledger/confirmations: the cashier's side of the desk."""

import json

import pytest
from django.utils import timezone

from settlements.api.ledger import decode_cursor, encode_cursor
from settlements.models import PaymentConfirmation
from settlements.selectors.payments.lines import approved_lines
from tests.services.helpers import approved

pytestmark = pytest.mark.django_db


def walk(api, wallet, limit: int, after: str | None = None) -> tuple[list[dict], str, int]:
    """Every line from ``after`` on, a page at a time: (lines, last cursor, pages read)."""
    lines, pages = [], 0
    while True:
        query = f"?limit={limit}" + (f"&after={after}" if after else "")
        response = api.get(f"/api/v1/ledger{query}", **wallet)
        assert response.status_code == 200, response.content
        assert response["Cache-Control"] == "no-store, private"
        body = response.json()
        pages += 1
        lines += body["lines"]
        assert len(body["lines"]) <= limit
        after = body["cursor"]
        assert (
            body["next"].endswith(f"after={after}&limit={limit}")
            or f"after={after}" in (body["next"])
        )
        if not body["more"]:
            return lines, after, pages


def test_the_feed_gives_every_line_once_in_order(api, wallet, desk):
    expected = list(approved_lines())
    lines, cursor, pages = walk(api, wallet, limit=7)
    assert [line["idempotency_key"] for line in lines] == [line.key for line in expected]
    assert [line["sequence"] for line in lines] == list(range(1, len(expected) + 1))
    assert pages == -(-len(expected) // 7)
    assert decode_cursor(cursor) == len(expected)
    # Read again from the end: nothing new, the same cursor to poll with.
    body = api.get(f"/api/v1/ledger?after={cursor}", **wallet).json()
    assert (body["lines"], body["cursor"], body["more"]) == ([], cursor, False)


def test_a_line_says_everything_the_cashier_needs(api, wallet, desk):
    lines = api.get("/api/v1/ledger", **wallet).json()["lines"]
    first, *_, cash, points = lines
    stored = desk.lines.order_by("line_no").first()
    assert first == {
        "sequence": 1,
        "idempotency_key": f"{desk.pk}-1",
        "player": stored.player,
        "kind": stored.kind,
        "unit": stored.unit,
        "amount": stored.amount,
        "currency": "USD",
        "source": stored.source,
        "record": "settlement",
        "record_id": desk.pk,
        "settlement": desk.pk,
        "compensation": None,
        "case": desk.case_id,
        "incident": desk.case.incident_id,
        "tournament": desk.case.tournament.operator_id,
        "reissue_of": None,
        "approved_at": first["approved_at"],
    }
    assert first["approved_at"].endswith("Z") or "+00:00" in first["approved_at"]
    assert (cash["kind"], cash["amount"], cash["currency"], cash["source"]) == (
        "compensation",
        250,
        "USD",
        "house",
    )
    assert (points["unit"], points["currency"], points["settlement"]) == ("fpp", None, None)
    assert points["record"] == "compensation" and points["idempotency_key"].endswith("-2")


def test_lines_approved_later_follow_the_cursor(
    api, wallet, desk, operator, tournament_manager, snapshot_factory
):
    _, cursor, _ = walk(api, wallet, limit=1000)
    later = approved(operator, tournament_manager, snapshot_factory, tournament_id="T-LATE")
    lines, _, _ = walk(api, wallet, limit=1000, after=cursor)
    assert [line["idempotency_key"] for line in lines] == [
        f"{later.pk}-{n}" for n in range(1, later.line_count + 1)
    ]


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("?after=abc", "?after"),
        (f"?after={encode_cursor(5)[:-2]}", "?after"),
        ("?after=", "?after"),
        ("?limit=0", "?limit"),
        ("?limit=10001", "?limit"),
        ("?limit=ten", "?limit"),
    ],
)
def test_bad_parameters_are_refused_by_name(api, wallet, query, path):
    response = api.get(f"/api/v1/ledger{query}", **wallet)
    assert response.status_code == 400
    assert [error["path"] for error in response.json()["errors"]] == [path]


def test_cursors_are_opaque_and_round_trip():
    for position in (0, 1, 810_000, 10**17):
        cursor = encode_cursor(position)
        assert str(position) not in cursor
        assert decode_cursor(cursor) == position
    assert decode_cursor("bGVkZ2VyOi0x") is None  # "ledger:-1"


# --- Confirmations -------------------------------------------------------------------------


def post(api, wallet, document) -> object:
    body = json.dumps(document).encode() if not isinstance(document, bytes) else document
    return api.post(
        "/api/v1/ledger/confirmations",
        data=body,
        content_type="application/json",
        CONTENT_LENGTH=str(len(body)),
        **wallet,
    )


def item(line, **changes) -> dict:
    return {
        "idempotency_key": line.key,
        "status": "paid",
        "external_reference": f"tx-{line.key}",
        "at": "2026-11-01T09:30:00Z",
        "amount": line.amount,
        **changes,
    }


def test_a_batch_is_answered_in_the_order_sent(api, wallet, desk):
    lines = list(approved_lines())
    batch = [
        item(lines[0]),
        item(lines[1], status="failed", external_reference="declined"),
        item(lines[2], amount=lines[2].amount + 1),
        {**item(lines[3]), "amount": "12.50"},
        {"idempotency_key": lines[4].key, "status": "paid"},
        "not an object",
        {**item(lines[5]), "currency": "USD"},
        item(lines[6], at="2026-12-01 09:30"),
        item(lines[7], idempotency_key="0-1"),
    ]
    response = post(api, wallet, {"confirmations": batch})
    assert response.status_code == 200
    body = response.json()
    assert (body["recorded"], body["already_recorded"], body["refused"]) == (2, 0, 7)
    results = body["results"]
    assert [result["outcome"] for result in results] == ["recorded"] * 2 + ["refused"] * 7
    paths = [result["errors"][0]["path"] for result in results[2:]]
    assert paths == [
        "confirmations[2].amount",
        "confirmations[3].amount",
        "confirmations[4].external_reference",
        "confirmations[5]",
        "confirmations[6].currency",
        "confirmations[7].at",
        "confirmations[8].idempotency_key",
    ]
    assert "differs" in results[2]["errors"][0]["message"]
    assert results[5]["idempotency_key"] is None
    assert PaymentConfirmation.objects.count() == 2
    assert PaymentConfirmation.objects.get(status="paid").at.isoformat() == (
        "2026-11-01T09:30:00+00:00"
    )

    again = post(api, wallet, {"confirmations": batch[:2]}).json()
    assert [result["outcome"] for result in again["results"]] == ["already_recorded"] * 2
    assert PaymentConfirmation.objects.count() == 2


@pytest.mark.parametrize(
    "document",
    [b"not json", [], {"confirmations": []}, {"confirmations": {}}, {"items": []}],
)
def test_a_document_of_the_wrong_shape_is_refused_whole(api, wallet, document):
    response = post(api, wallet, document)
    assert response.status_code == 400
    assert response.json()["errors"][0]["path"] in ("$", "confirmations")


def test_a_batch_too_large_is_refused_unread(api, wallet, monkeypatch):
    from settlements.api import ledger as module

    monkeypatch.setattr(module, "CONFIRMATIONS_MAX_BYTES", 100)
    response = post(api, wallet, {"confirmations": [{"x": "y" * 200}]})
    assert response.status_code == 413


def test_too_many_confirmations_at_once(api, wallet, monkeypatch):
    from settlements.api import ledger as module

    monkeypatch.setattr(module, "MAX_CONFIRMATIONS", 2)
    response = post(api, wallet, {"confirmations": [{}, {}, {}]})
    assert response.status_code == 400
    assert "at most 2" in response.json()["errors"][0]["message"]


def test_a_confirmation_from_the_future_is_refused(api, wallet, desk):
    line = next(approved_lines())
    later = (timezone.now() + timezone.timedelta(days=1)).isoformat()
    result = post(api, wallet, {"confirmations": [item(line, at=later)]}).json()["results"][0]
    assert (result["outcome"], result["errors"][0]["path"]) == ("refused", "confirmations[0].at")
