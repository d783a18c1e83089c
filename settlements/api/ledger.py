"""The cashier's side of the desk: GET /api/v1/ledger, the approved lines in feed order, and
POST /api/v1/ledger/confirmations, what the wallet paid or failed to pay. The formats are
described in the README ("The cashier's API")."""

import base64
import binascii
from collections.abc import Sequence
from typing import Annotated, Any

import msgspec
from django.http import HttpRequest, HttpResponse, JsonResponse

from settlements import bounds, problems
from settlements.access import permissions
from settlements.api.answers import ConfirmationResults, FeedPage, Refusal
from settlements.api.base import answer, api_endpoint, next_page
from settlements.api.reading import read_object, read_query
from settlements.exports.ledger import line_document
from settlements.models import TokenScope
from settlements.rules import InvalidInput, Problem
from settlements.selectors.payments.lines import approved_lines, last_position
from settlements.services import payments

FEED_PAGE_SIZE = 1000
FEED_MAX_PAGE_SIZE = 10_000
_CURSOR_TAG = b"ledger:"

MAX_CONFIRMATIONS = 5000
# About 150 bytes a confirmation; a full batch with room to spare.
CONFIRMATIONS_MAX_BYTES = 4 * 1024 * 1024


# --- GET /api/v1/ledger ------------------------------------------------------------------------


class FeedQuery(msgspec.Struct, kw_only=True, frozen=True):
    """``after``: the ``cursor`` of the last page read (opaque); none for the first page."""

    after: Annotated[
        str | None,
        msgspec.Meta(description="The `cursor` of the last page read; none for the first page."),
    ] = None
    limit: Annotated[
        int, msgspec.Meta(ge=1, le=FEED_MAX_PAGE_SIZE, description="Lines a page.")
    ] = FEED_PAGE_SIZE


@api_endpoint(
    "GET",
    "HEAD",
    scope=TokenScope.LEDGER_READ,
    allowed=permissions.CASHIERS,
    query=FeedQuery,
    answers={200: FeedPage},
    links={200: {"next_page": ("ledger", {"after": "$response.body#/cursor"})}},
)
def ledger(request: HttpRequest, user) -> HttpResponse:
    """The approved ledger lines in feed order, a page at a time.

    ``limit`` lines after the opaque ``after`` cursor. A line's place is given under the lock
    that orders commits, so every place up to the last one visible is committed: a page never
    skips a line that appears later, and the cursor after it never repeats one. Following the
    cursors, every approved line is read exactly once.
    """
    query = read_query(request.GET, FeedQuery)
    after = 0 if query.after is None else decode_cursor(query.after)
    if after is None:
        return problems.refusal(400, "?after", "is not a cursor this feed gave out")

    limit = query.limit
    page = approved_lines(after=after, until=after + limit)
    lines = [line_document(line) for line in page]
    last = after + len(lines)
    cursor = encode_cursor(last)
    body = {
        "lines": lines,
        "cursor": cursor,
        "more": len(lines) == limit and last_position() > last,
        "next": next_page(request, after=cursor),
    }
    return answer(body, FeedPage)


def encode_cursor(position: int) -> str:
    return base64.urlsafe_b64encode(_CURSOR_TAG + str(position).encode()).decode().rstrip("=")


def decode_cursor(raw: str) -> int | None:
    """The place a cursor stands after; None for anything this feed did not give out."""
    if not raw or len(raw) > 40:
        return None
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
    except (binascii.Error, ValueError):
        return None
    number = text.removeprefix(_CURSOR_TAG)
    if number == text or not number.isdigit() or len(number) > 18:
        return None
    return int(number)


# --- POST /api/v1/ledger/confirmations ------------------------------------------------------------


class Confirmation(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """What the cashier says about one line: every field is required, no other is accepted."""

    # The line's key from the feed.
    idempotency_key: str
    # "paid" or "failed" (for a negative line, "paid" means the amount was collected); the
    # payment service refuses any other.
    status: str
    # The wallet's own reference: a transaction id, or why the payment failed.
    external_reference: str
    # RFC 3339 with seconds and a zone (bounds.parse_rfc3339): when the wallet paid or gave up.
    at: str
    # In minor units; it must be the line's.
    amount: int


class ConfirmationBatch[Item](msgspec.Struct, forbid_unknown_fields=True):
    """The body: ``ConfirmationBatch[Confirmation]``, 1 to MAX_CONFIRMATIONS of them. It is
    read as ``ConfirmationBatch[Any]``, each item then on its own: an item of the wrong shape
    is refused alone, and the others are still answered."""

    confirmations: list[Item]


_BATCH = msgspec.json.Decoder(ConfirmationBatch[Any])
_NOT_A_FIELD = "is not a field of a confirmation"


@api_endpoint(
    "POST",
    scope=TokenScope.CONFIRMATIONS_WRITE,
    allowed=permissions.CASHIERS,
    body=ConfirmationBatch[Confirmation],
    answers={200: ConfirmationResults, 413: Refusal},
    example={
        "confirmations": [
            {
                "idempotency_key": "42-1",
                "status": "paid",
                "external_reference": "wal-000981",
                "at": "2026-11-30T21:30:00Z",
                "amount": 1000,
            }
        ]
    },
)
def ledger_confirmations(request: HttpRequest, user) -> JsonResponse:
    """What the wallet paid or failed to pay, a batch of lines at a time.

    Each confirmation is answered in ``results``, in the order sent; the batch is refused as a
    whole (400) only when it is not a ConfirmationBatch. Sending a batch again writes nothing:
    each confirmation already recorded answers ``already_recorded``."""
    declared = bounds.whole_number(request.META.get("CONTENT_LENGTH", "").strip())
    if declared is not None and declared > CONFIRMATIONS_MAX_BYTES:
        return _batch_too_large()
    body = request.read(CONFIRMATIONS_MAX_BYTES + 1)
    if len(body) > CONFIRMATIONS_MAX_BYTES:
        return _batch_too_large()
    items = _batch_items(body)

    results: list[dict | None] = [None] * len(items)
    entries: list[tuple[int, payments.ConfirmationEntry]] = []
    for index, item in enumerate(items):
        try:
            entries.append((index, _entry(item, f"confirmations[{index}]")))
        except InvalidInput as invalid:
            key = item.get("idempotency_key") if isinstance(item, dict) else None
            results[index] = _refused(key if isinstance(key, str) else None, invalid.problems)
    if entries:
        answers = payments.payment_confirm(actor=user, confirmations=[e for _, e in entries])
        for (index, _), given in zip(entries, answers, strict=True):
            results[index] = _answered(index, given)
    counts = {outcome: 0 for outcome in ("recorded", "already_recorded", "refused")}
    for result in results:
        counts[result["outcome"]] += 1
    return answer({"results": results, **counts}, ConfirmationResults)


def _batch_too_large() -> JsonResponse:
    message = f"Send at most {CONFIRMATIONS_MAX_BYTES:,} bytes in one batch."
    return problems.refusal(413, "$", message)


def _batch_items(body: bytes) -> list:
    """The items of the batch ``body``, not yet read; InvalidInput when it is no batch."""
    try:
        batch = _BATCH.decode(body)
    # Arrays nested some thousands deep exhaust the decoder's stack: not a batch either.
    except (msgspec.DecodeError, RecursionError) as error:
        # msgspec checks the shape while it reads, so a number it cannot read (1e999) is a
        # ValidationError too: the body is JSON only if it also reads without a type.
        if isinstance(error, msgspec.ValidationError) and _reads_as_json(body):
            raise InvalidInput.at("$", 'Send {"confirmations": [...]} and nothing else.') from None
        raise InvalidInput.at("$", "The body is not a JSON document.") from None
    if not batch.confirmations:
        raise InvalidInput.at("confirmations", "List at least one confirmation.")
    if len(batch.confirmations) > MAX_CONFIRMATIONS:
        raise InvalidInput.at(
            "confirmations", f"Send at most {MAX_CONFIRMATIONS:,} confirmations at once."
        )
    return batch.confirmations


def _reads_as_json(body: bytes) -> bool:
    try:
        msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return False
    return True


def _entry(item: Any, root: str) -> payments.ConfirmationEntry:
    """The item as the payment service takes it; InvalidInput at the first problem found."""
    confirmation = read_object(item, Confirmation, root=root, unknown_field=_NOT_A_FIELD)
    # The snapshot's own rule for times: RFC 3339 with its zone, and within what can be
    # stored and read back (a year-1 time a minute east of UTC was recorded, then broke
    # every page that listed it; an offset past 15:59 was a database error).
    try:
        at = bounds.parse_rfc3339(confirmation.at)
    except ValueError as problem:
        raise InvalidInput.at(f"{root}.at", str(problem)) from None
    return payments.ConfirmationEntry(
        confirmation.idempotency_key,
        confirmation.status,
        confirmation.external_reference.strip(),
        at,
        confirmation.amount,
    )


def _answered(index: int, answer: payments.ConfirmationAnswer) -> dict:
    """The result of a confirmation the payment service judged."""
    if answer.outcome != answer.REFUSED:
        return {"idempotency_key": answer.idempotency_key, "outcome": answer.outcome}
    where = f"confirmations[{index}].{answer.field}"
    return _refused(answer.idempotency_key, [Problem(where, answer.message)])


def _refused(key: str | None, refusals: Sequence[Problem]) -> dict:
    return {"idempotency_key": key, "outcome": "refused", "errors": problems.errors(refusals)}
