"""Seal formats: which fields of which rows an event's digests cover, and how each value is
written for the hash. Every event records the format it was sealed in (``Event.seal_format``)
and is verified under that format, whatever columns the tables have by then: a release that adds
a column to a sealed model does not change what an old event sealed.

Each format names, per kind of sealed rows, the fields it digests, in order:

- ``entrants``: a case's entrant rows, its id first, in snapshot position order;
- ``payouts``: a settlement's payout rows, its id first, in position order;
- ``confirmations``: a batch's payment confirmations, in the order they were written;
- ``history:<model>``: every version of an audited record, in version order.

Format 1 (every event written before formats were recorded): entrants and payouts as the
``repr`` of each row's tuple, confirmations and versions as the row's cells joined by tabs
(``seals.cell``: text length-prefixed, ``~`` for None, ``T``/``F``, times in UTC). Its field
lists are those the code digested when it was named, frozen here.

Format 2 (the current one) writes every value tagged with its type and prefixed with its
length, nothing left to a language's text for a value::

    value   = tag length ":" payload
    length  = the number of characters (Unicode code points) of payload, in decimal
    tag     n  None          payload empty: "n0:"
            b  bool          "1" or "0": "b1:1"
            i  int           decimal digits, "-" first if negative: "i3:-42"
            s  text          the text itself: "s5:héllo"
            t  time          ISO 8601 in UTC with microseconds:
                             "t32:2026-01-02T03:04:05.000006+00:00"
            d  date          ISO 8601: "d10:2026-01-02"
            j  JSON          sorted keys, no spaces, non-ASCII kept: 'j10:{"cash":1}'

Any other type is refused rather than guessed at. A row is its values' encodings one after
another and a newline. The digest is SHA-256 over the UTF-8 of a header row (the text
``crashdesk-seal``, the format's number, the kind and each field name, encoded as above) and
then the rows. Since each value says how long it is, no value can imitate a boundary, and the
header binds the digest to the fields it names.

A field renamed by a migration keeps the name the formats give it: ``RENAMED`` maps it to the
model's current field. Adding a new format is described in docs/operations.md ("Seal formats").
"""

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime

CURRENT = 2
HEADER = "crashdesk-seal"

# (model name, field name a format uses): the model's field that holds it now, once renamed.
RENAMED: dict[tuple[str, str], str] = {}

ENTRANTS = "entrants"
PAYOUTS = "payouts"
CONFIRMATIONS = "confirmations"


def history(model_name: str) -> str:
    return f"history:{model_name}"


def current_name(model_name: str, name: str) -> str:
    """The model's field now holding what formats call ``name``."""
    return RENAMED.get((model_name, name), name)


@dataclass(frozen=True)
class Format:
    version: int
    # "cells" (format 1: repr and tab-joined cells) or "tagged" (length-prefixed, type-tagged)
    encoding: str
    fields: dict[str, tuple[str, ...]]

    def header(self, kind: str) -> str:
        """The first row of a digest of ``kind`` ("" in format 1, which had none)."""
        if self.encoding != "tagged":
            return ""
        return encode_row((HEADER, self.version, kind, *self.fields[kind]))


_HISTORY = ("history_id", "history_date", "history_change_reason", "history_type")
_HISTORY_USER = ("history_user_id",)
_REVIEWED = ("reviewed_at", "review_reason")
_BY = ("approved_by_id", "rejected_by_id")

# The versions' fields as format 1 digested them: every plain column of each history table
# when formats were named, in table order (JSON columns are sealed elsewhere).
_HISTORY_V1 = {
    "settlement": (
        "id",
        "kind",
        "status",
        "currency",
        "stage",
        "remedy",
        "decision",
        "engine_version",
        "entrants",
        "eliminated",
        "remaining",
        "pool",
        "pool_distributed",
        "line_count",
        "payout_count",
        "ledger_digest",
        "note",
        "prepared_at",
        "submitted_at",
        *_REVIEWED,
        "case_id",
        "corrects_id",
        "loaded_by_id",
        "prepared_by_id",
        "submitted_by_id",
        *_BY,
        *_HISTORY,
        *_HISTORY_USER,
    ),
    "compensation": (
        "id",
        "status",
        "currency",
        "reason",
        "proposed_at",
        *_REVIEWED,
        "items_digest",
        "case_id",
        "proposed_by_id",
        *_BY,
        *_HISTORY,
        *_HISTORY_USER,
    ),
    "prizewithdrawal": (
        "id",
        "player",
        "prize",
        "unit",
        "amount",
        "outcome",
        "reason",
        "decided_at",
        "status",
        *_REVIEWED,
        "case_id",
        "decided_by_id",
        *_BY,
        *_HISTORY,
        *_HISTORY_USER,
    ),
    "reissue": (
        "id",
        "original_line_no",
        "original_key",
        "player",
        "kind",
        "unit",
        "amount",
        "source",
        "currency",
        "status",
        "reason",
        "proposed_at",
        *_REVIEWED,
        "original_release_id",
        "case_id",
        "incident_id",
        "proposed_by_id",
        *_BY,
        *_HISTORY,
        *_HISTORY_USER,
    ),
    "case": (
        "id",
        "kind",
        "status",
        "crashed_at",
        "started",
        "stage",
        "entrants",
        "eliminated",
        "remaining",
        "paid_places",
        "pool",
        "decision",
        "engine_version",
        "entrants_digest",
        "description",
        "outcome",
        "resolved_at",
        "withdrawn_at",
        "withdrawal_reason",
        "created_at",
        "updated_at",
        "incident_id",
        "tournament_id",
        "snapshot_id",
        "resolved_by_id",
        "withdrawn_by_id",
        "created_by_id",
        *_HISTORY,
        *_HISTORY_USER,
    ),
    "decision": (
        "id",
        "role",
        "option",
        "reason",
        "decided_at",
        "reschedule_at",
        "invite_scope",
        "case_id",
        "decided_by_id",
        *_HISTORY,
        *_HISTORY_USER,
    ),
    "incident": (
        "id",
        "title",
        "started_at",
        "description",
        "reported_at",
        "closed_at",
        "reported_by_id",
        "closed_by_id",
        *_HISTORY,
        *_HISTORY_USER,
    ),
    "tournament": (
        "id",
        "operator_id",
        "name",
        "type",
        "currency",
        "buy_in",
        "fee",
        "guarantee",
        "fpp_buy_in",
        "prize_pool",
        "seat_value",
        "entry_bounty",
        "add_on",
        "add_on_fee",
        "scheduled_start",
        "created_at",
        *_HISTORY,
        *_HISTORY_USER,
    ),
}

_ENTRANTS = ("case", "position", "player", "chips", "entries", "add_ons", "bounty")
_PAYOUTS = (
    "settlement",
    "position",
    "player",
    "chips",
    "cash",
    "tdollars",
    "tickets",
    "fpp",
    "guaranteed",
    "share",
    "exact",
    "capped",
    "rounding_cent",
    "weight",
    "place_first",
    "place_last",
)
_CONFIRMATIONS = (
    "release",
    "line_no",
    "idempotency_key",
    "player",
    "unit",
    "amount",
    "status",
    "external_reference",
    "at",
    "recorded_at",
    "recorded_by",
)

# Audited records that came after format 1 was named: format 2 seals their versions too.
_HISTORY_SINCE_V2 = {
    "rulebook": ("id", "key", "created_at", *_HISTORY, *_HISTORY_USER),
    "rulebookversion": (
        "id",
        "number",
        "status",
        "text",
        "effective_from",
        "proposed_at",
        "proposal_reason",
        "approved_at",
        "approval_reason",
        "withdrawn_at",
        "withdrawal_reason",
        "rulebook_id",
        "proposed_by_id",
        "approved_by_id",
        "withdrawn_by_id",
        *_HISTORY,
        *_HISTORY_USER,
    ),
    "simulation": (
        "id",
        "requested_at",
        "case_count",
        "finished_at",
        "version_id",
        "job_id",
        "requested_by_id",
        *_HISTORY,
        *_HISTORY_USER,
    ),
    # Audited before, sealed from issue 41 on: no event of format 2 had sealed their versions,
    # so format 2 takes them without changing what any event sealed (docs/operations.md).
    "apitoken": (
        "id",
        "name",
        "prefix",
        "token_hash",
        "created_at",
        "revoked_at",
        "expires_at",
        "scopes",
        "user_id",
        *_HISTORY,
        *_HISTORY_USER,
    ),
    "icmvaluation": (
        "id",
        "method",
        "status",
        "players",
        "prizes_in_play",
        "seed",
        "samples",
        "digest",
        "started_at",
        "finished_at",
        "settlement_id",
        *_HISTORY,
        *_HISTORY_USER,
    ),
}

_FIELDS = {
    ENTRANTS: _ENTRANTS,
    PAYOUTS: _PAYOUTS,
    CONFIRMATIONS: _CONFIRMATIONS,
    **{history(name): fields for name, fields in _HISTORY_V1.items()},
}
FORMATS = {
    1: Format(1, "cells", _FIELDS),
    2: Format(
        2,
        "tagged",
        _FIELDS | {history(name): fields for name, fields in _HISTORY_SINCE_V2.items()},
    ),
}


def get(version: int | None = None) -> Format:
    """Format ``version``; the current one for None."""
    try:
        return FORMATS[CURRENT if version is None else version]
    except KeyError:
        raise ValueError(f"no seal format {version}") from None


# --- Format 2's encoding ---------------------------------------------------------------------


def encode(value) -> str:
    """One value, tagged with its type and prefixed with its length (the table above)."""
    if value is None:
        return "n0:"
    if isinstance(value, bool):
        return "b1:1" if value else "b1:0"
    if isinstance(value, int):
        text, tag = str(int(value)), "i"
    elif isinstance(value, str):
        text, tag = value, "s"
    elif isinstance(value, datetime):
        if value.tzinfo is None:
            raise TypeError("a time without a zone cannot be sealed")
        text, tag = value.astimezone(UTC).isoformat(timespec="microseconds"), "t"
    elif isinstance(value, date):
        text, tag = value.isoformat(), "d"
    elif isinstance(value, dict | list):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        tag = "j"
    else:
        raise TypeError(f"a seal format has no encoding for {type(value).__name__}")
    return f"{tag}{len(text)}:{text}"


def encode_row(row: Sequence) -> str:
    return "".join(map(encode, row)) + "\n"


def rows_encoder(kinds: Sequence[str]) -> Callable[[Sequence[tuple]], str]:
    """What ``encode_row`` writes for a chunk of rows, a column at a time: ``kinds`` says of
    each column whether it always holds an int ("int"), always text ("str"), or anything
    ("any"). The first two are formatted at C speed, which 300,000 entrants need; the text is
    the same as ``encode_row``'s (tests/services/test_seal_formats.py)."""
    template = "".join({"int": "i%d:%s", "str": "s%d:%s"}.get(kind, "%s") for kind in kinds) + "\n"

    def text(rows: Sequence[tuple]) -> str:
        if not rows:
            return ""
        parts: list = []
        for kind, column in zip(kinds, zip(*rows, strict=True), strict=True):
            if kind == "int":
                digits = list(map(str, column))
                parts += (map(len, digits), digits)
            elif kind == "str":
                parts += (map(len, column), column)
            else:
                parts.append(map(encode, column))
        return "".join(map(template.__mod__, zip(*parts, strict=True)))

    return text


# --- Format 1's cells, and the digests of lines, items and ICM figures ----------------------
# Pure, like the rest of this module: the offline verifier (settlements.audit) recomputes them.

# Rows hashed per encode/update: whole-string work instead of a call per line.
_CHUNK = 20_000


def cell(value) -> str:
    """One value as digested: types cannot be mistaken for each other (``None`` is not "",
    ``True`` is not 1) and a time is the same instant whatever zone it was read in."""
    if value is None:
        return "~"
    if isinstance(value, str):
        return f"{len(value)}:{value}"
    if isinstance(value, bool):
        return "T" if value else "F"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"j{len(text)}:{text}"


def row_line(row: Iterable) -> str:
    return "\t".join(map(cell, row))


def ledger_digest(lines: Iterable[tuple]) -> str:
    """SHA-256 over (line_no, player, kind, unit, amount, source, reversal) rows, in line order.

    The player id is length-prefixed so that no id can imitate a field boundary.
    """
    digest = hashlib.sha256()
    chunk: list[str] = []
    for line_no, player, kind, unit, amount, source, reversal in lines:
        chunk.append(
            f"{line_no}\t{len(player)}:{player}\t{kind}\t{unit}\t{amount}\t{source}\t{reversal:d}\n"
        )
        if len(chunk) == _CHUNK:
            digest.update("".join(chunk).encode())
            chunk.clear()
    digest.update("".join(chunk).encode())
    return digest.hexdigest()


def items_digest(items: Iterable[tuple]) -> str:
    """SHA-256 over compensation items (line_no, player, unit, amount), in line order."""
    return ledger_digest(
        (line_no, player, "compensation", unit, amount, "house", False)
        for line_no, player, unit, amount in items
    )


def icm_digest(rows: Iterable[tuple]) -> str:
    """SHA-256 over ICM rows (position, player, chips, chip_rank, value, amount,
    standard_error, policy_amount, difference), in position order."""
    digest = hashlib.sha256()
    for position, player, *figures in rows:
        rest = "\t".join(map(str, figures))
        digest.update(f"{position}\t{len(player)}:{player}\t{rest}\n".encode())
    return digest.hexdigest()


def event_bytes(content: dict, seal_format: int) -> bytes:
    """The bytes an event's hash covers (``audit_log.canonical`` gathers its ``content``). The
    seal format is covered from format 2 on; events of format 1 were hashed without it."""
    if seal_format != 1:
        content = content | {"seal_format": seal_format}
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
