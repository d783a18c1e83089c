"""The cashier's API under hostile and clumsy input: every refusal is a 4xx naming where the
problem is, nothing of a refused confirmation is written, and what is recorded can be read back
on the pages and exports that show it."""

import json
import re
from datetime import UTC, datetime

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from settlements import player_ids
from settlements.api.ledger import encode_cursor
from settlements.models import Event, PaymentConfirmation
from settlements.selectors.payments.lines import approved_lines
from tests.api.test_ledger import item, post

pytestmark = pytest.mark.django_db


# --- GET /api/v1/ledger --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("?limit=%C2%B2", "?limit"),  # "²": isdigit() says yes, int() fails
        ("?limit=%D9%A1", "?limit"),  # "١": int() reads it as 1
        ("?limit=-1", "?limit"),
        ("?limit=" + "9" * 40, "?limit"),
        ("?limit=1e3", "?limit"),
        ("?limit=%201", "?limit"),
        ("?after=" + "A" * 10_000, "?after"),
        ("?after=%00", "?after"),
        ("?limit=%00", "?limit"),
        # Cursors this feed never gave out: other text, a negative place, a place with more
        # digits than any line number could have, another script's digits.
        ("?after=" + encode_cursor(0).replace("bGVkZ2Vy", "Y2FzZXM6"), "?after"),
        ("?after=bGVkZ2VyOi0x", "?after"),
        ("?after=bGVkZ2VyOjk5OTk5OTk5OTk5OTk5OTk5OTk5OQ", "?after"),
        ("?after=bGVkZ2VyOtmh", "?after"),  # "ledger:١"
    ],
)
def test_feed_parameters_a_client_did_not_get_from_the_feed_are_refused(
    api, wallet, desk, query, path
):
    response = api.get(f"/api/v1/ledger{query}", **wallet)
    assert response.status_code == 400
    assert [error["path"] for error in response.json()["errors"]] == [path]


def test_a_forged_cursor_past_the_end_gives_an_empty_page(api, wallet, desk):
    response = api.get(f"/api/v1/ledger?after={encode_cursor(10**17)}", **wallet)
    assert response.status_code == 200
    assert (response.json()["lines"], response.json()["more"]) == ([], False)


# --- POST /api/v1/ledger/confirmations ------------------------------------------------------


def only(api, wallet, confirmation) -> dict:
    response = post(api, wallet, {"confirmations": [confirmation]})
    assert response.status_code == 200, response.content
    return response.json()["results"][0]


@pytest.mark.parametrize(
    "at",
    [
        # A minute east of UTC on the first day: year 0 in UTC. It was recorded, and every
        # page listing it then failed.
        "0001-01-01T00:00:00+00:01",
        "0000-01-01T00:00:00Z",
        "10000-01-01T00:00:00Z",
        "9999-12-31T23:59:59-23:59",
        "2026-11-01T09:30:00",  # no zone
        "2026-11-01 09:30:00Z",
        "2026-02-30T09:30:00Z",
        "2026-11-01T24:00:00Z",
        # What datetime.fromisoformat also read: not RFC 3339.
        "2026-W44-7T09:30:00Z",
        "20261101T093000Z",
        "2026-11-01T09:30Z",
        "２０２６-11-01T09:30:00Z",
        "",
        "2026-11-01T09:30:00Z\x00",
    ],
)
def test_a_time_that_cannot_be_stored_and_shown_is_refused_at_its_path(api, wallet, desk, at):
    line = next(approved_lines())
    result = only(api, wallet, item(line, at=at))
    assert (result["outcome"], result["errors"][0]["path"]) == ("refused", "confirmations[0].at")
    assert not PaymentConfirmation.objects.exists()


@pytest.mark.parametrize(
    ("at", "stored"),
    [
        # A leap second is the next minute's first instant, as PostgreSQL reads it.
        ("2016-12-31T23:59:60Z", datetime(2017, 1, 1, tzinfo=UTC)),
        # Offsets up to 23:59 are RFC 3339; PostgreSQL takes at most 15:59, so it gets UTC.
        ("2026-11-01T23:30:00+23:59", datetime(2026, 10, 31, 23, 31, tzinfo=UTC)),
        ("0001-01-02T00:00:00Z", datetime(1, 1, 2, tzinfo=UTC)),
    ],
)
def test_an_edge_time_is_recorded_in_utc_and_shown_again(api, wallet, desk, auditor, at, stored):
    line = next(approved_lines())
    assert only(api, wallet, item(line, at=at))["outcome"] == "recorded"
    assert PaymentConfirmation.objects.get().at == stored
    client = Client()
    client.force_login(auditor)
    for url in (reverse("payments_audit"), reverse("payments"), reverse("history")):
        assert client.get(url).status_code == 200
    export = client.get(reverse("payments_audit_export"))
    assert stored.isoformat()[:10] in b"".join(export.streaming_content).decode()


@pytest.mark.parametrize(
    "reference",
    [
        "tx\x00",  # was a database error
        "tx\x1b[31m",
        "tx-\u202e1",  # a right-to-left override makes it read as another reference
        "tx\u200b",
        "cafe\u0301",  # not in composed form: looks like "café", compares unequal to it
        " " * 5,
        "x" * 201,
    ],
)
def test_an_external_reference_that_is_not_what_it_looks_like_is_refused(
    api, wallet, desk, reference
):
    line = next(approved_lines())
    result = only(api, wallet, item(line, external_reference=reference))
    assert (result["outcome"], result["errors"][0]["path"]) == (
        "refused",
        "confirmations[0].external_reference",
    )
    assert not PaymentConfirmation.objects.exists()


@pytest.mark.parametrize(
    "amount", [2**63, -(2**63) - 1, 2**70, 10.0, "10", True, None, [10], {"minor": 10}]
)
def test_an_amount_that_is_not_the_lines_whole_number_is_refused(api, wallet, desk, amount):
    line = next(approved_lines())
    result = only(api, wallet, item(line, amount=amount))
    assert result["errors"][0]["path"] == "confirmations[0].amount"
    assert not PaymentConfirmation.objects.exists()


@pytest.mark.parametrize(
    "key", ["1-1\x00", "9" * 10_000, f"{2**64}-1", f"1-{2**64}", f"C{2**64}-1", "١-١", ""]
)
def test_a_key_of_no_line_is_refused_without_a_lookup_error(api, wallet, desk, key):
    result = only(api, wallet, item(next(approved_lines()), idempotency_key=key))
    assert (result["outcome"], result["errors"][0]["path"]) == (
        "refused",
        "confirmations[0].idempotency_key",
    )


def _variants(key: str) -> list[str]:
    """Texts that int() reads as ``key``'s numbers but the feed never wrote."""
    prefix, record, line = re.fullmatch(r"([CWR]?)(\d+)-(\d+)", key).groups()
    return [
        f"{prefix}0{record}-{line}",  # "02-5"
        f"{prefix}{record}-000{line}",  # "2-0006" for line 6
        f"{prefix}{record}-0{line}",
        f"{prefix.lower() or 'S'}{record}-{line}",
        f"{prefix}+{record}-{line}",
        f" {key}",
        f"{key} ",
        f"{key}\n",
        f"{prefix}{record}\u2010{line}",  # a hyphen that is not "-"
        f"{prefix}{record}-{line}".replace("-", "--"),
        f"{prefix}{record}_{line}",
    ]


@pytest.mark.parametrize("record", ["settlement", "compensation"])
def test_a_key_is_taken_only_byte_for_byte_as_the_feed_wrote_it(api, wallet, desk, record):
    line = next(
        line for line in approved_lines() if line.key.startswith("C") == (record != "settlement")
    )
    sent = _variants(line.key)
    body = post(
        api, wallet, {"confirmations": [item(line, idempotency_key=key) for key in sent]}
    ).json()
    assert body["refused"] == len(sent)
    for index, (key, result) in enumerate(zip(sent, body["results"], strict=True)):
        assert result["idempotency_key"] == key
        [error] = result["errors"]
        assert error["path"] == f"confirmations[{index}].idempotency_key"
        # The refusal names the key as sent, spaces and control characters written out.
        assert f'"{player_ids.escaped(key) or key}"' in error["message"], error["message"]
    assert not PaymentConfirmation.objects.exists()
    assert only(api, wallet, item(line))["outcome"] == "recorded"
    assert list(PaymentConfirmation.objects.values_list("idempotency_key", flat=True)) == [line.key]


def test_a_huge_key_is_named_cut_short(api, wallet, desk):
    result = only(api, wallet, item(next(approved_lines()), idempotency_key="1" * 5000))
    message = result["errors"][0]["message"]
    assert "1" * 60 + "… (5,000 characters)" in message
    assert len(message) < 200


@pytest.mark.parametrize(
    ("field", "value"), [("status", "PAID"), ("status", "refunded"), ("status", "paid\x00")]
)
def test_a_status_other_than_paid_or_failed_is_refused(api, wallet, desk, field, value):
    result = only(api, wallet, item(next(approved_lines()), **{field: value}))
    assert result["errors"][0]["path"] == "confirmations[0].status"


def test_a_field_name_that_only_looks_like_one_is_not_a_field(api, wallet, desk):
    confirmation = item(next(approved_lines()))
    confirmation["ѕtatus"] = confirmation.pop("status")  # a Cyrillic ѕ
    result = only(api, wallet, confirmation)
    assert result["errors"][0]["path"] == "confirmations[0].ѕtatus"


LEFT_OUT = object()


@pytest.mark.parametrize(
    ("changes", "path", "message"),
    [
        ({"idempotency_key": LEFT_OUT}, ".idempotency_key", "is required"),
        ({"note": "paid early"}, ".note", "is not a field of a confirmation"),
        ({"": "x"}, '[""]', "is not a field of a confirmation"),
        ({"amount": "9" * 10_000}, ".amount", "must be an integer, not a string"),
        ({"amount": 1e300}, ".amount", "must be an integer, not a decimal number"),
        ({"at": 20261101}, ".at", "must be a string, not a number"),
        ({"status": ["paid"]}, ".status", "must be a string, not a list"),
    ],
)
def test_an_item_that_is_not_a_confirmation_is_refused_alone_at_its_path(
    api, wallet, desk, changes, path, message
):
    first, second = list(approved_lines())[:2]
    sent = {**item(second), **changes}
    confirmation = {name: value for name, value in sent.items() if value is not LEFT_OUT}
    body = post(api, wallet, {"confirmations": [item(first), confirmation]}).json()
    assert body["results"][0]["outcome"] == "recorded"
    assert body["results"][1]["errors"] == [{"path": f"confirmations[1]{path}", "message": message}]
    assert (body["recorded"], body["refused"]) == (1, 1)
    assert list(PaymentConfirmation.objects.values_list("idempotency_key", flat=True)) == [
        first.key
    ]


@pytest.mark.parametrize("confirmation", ["paid", None, 7, [], {}])
def test_an_item_that_is_not_an_object_or_is_empty_names_no_key(api, wallet, desk, confirmation):
    result = only(api, wallet, confirmation)
    assert (result["idempotency_key"], result["outcome"]) == (None, "refused")
    assert result["errors"][0]["path"].startswith("confirmations[0]")
    assert not PaymentConfirmation.objects.exists()


def test_one_key_many_times_in_a_batch_is_recorded_once(api, wallet, desk):
    line = next(approved_lines())
    batch = [
        item(line),
        item(line),
        item(line, external_reference="tx-other"),
        item(line, status="failed", external_reference="declined"),
    ]
    body = post(api, wallet, {"confirmations": batch}).json()
    assert [result["outcome"] for result in body["results"]] == [
        "recorded",
        "already_recorded",
        "refused",
        "refused",
    ]
    assert PaymentConfirmation.objects.count() == 1
    assert Event.objects.filter(type=Event.Type.PAYMENTS_CONFIRMED).count() == 1


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the decoder's stack: was a server error
        b'{"confirmations": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}",
        b'{"confirmations": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        b'{"confirmations": [1e999]}',
        b"\xff\xfe{}",
        b'{"confirmations": [{}], "confirmations": 1}',
    ],
)
def test_a_body_that_is_not_a_batch_is_refused_whole(api, wallet, desk, body):
    response = post(api, wallet, body)
    assert response.status_code == 400
    assert not PaymentConfirmation.objects.exists()


def test_a_hundred_thousand_confirmations_are_refused_unread(api, wallet, desk):
    body = b'{"confirmations": [' + b",".join([b"{}"] * 100_000) + b"]}"
    response = post(api, wallet, body)
    assert response.status_code == 400
    assert "at most 5,000" in response.json()["errors"][0]["message"]


def test_a_length_in_another_scripts_digits_is_not_a_server_error(api, wallet, desk):
    response = api.post(
        "/api/v1/ledger/confirmations",
        data=b"{}",
        content_type="application/json",
        CONTENT_LENGTH="\u00b2",
        **wallet,
    )
    assert response.status_code == 400


_JSON = st.recursive(
    # Only what JSON can say: Python writes an infinity as "Infinity", which is not JSON (the API
    # rightly refuses such a body whole).
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=6,
)


@settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_value_in_any_field_is_answered_and_only_valid_ones_are_written(
    api, wallet, desk, data
):
    lines = list(approved_lines())
    line = data.draw(st.sampled_from(lines))
    confirmation = item(line)
    for field in data.draw(st.sets(st.sampled_from(sorted(confirmation)), min_size=1)):
        confirmation[field] = data.draw(
            _JSON
            | st.text(st.characters(codec="utf-8"))
            | st.sampled_from(["0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01"])
        )
    with transaction.atomic():
        result = only(api, wallet, confirmation)
        recorded = list(PaymentConfirmation.objects.all())
        if result["outcome"] == "recorded":
            [row] = recorded
            assert row.amount == line.amount and row.at.tzinfo is not None
            assert json.dumps(row.external_reference)
        else:
            assert recorded == []
        transaction.set_rollback(True)
