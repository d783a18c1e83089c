"""What an incident's sealed record holds, file by file, and how a value is written in it.

One zip archive (``crashdesk-incident-<id>.zip``)::

    manifest.json        {"format", "incident", "desk", "head": {"events", "hash"},
                          "files": {name: SHA-256 of its bytes}}, written in canonical JSON
                          (sorted keys, no spaces) and nothing else
    events.jsonl         every event that seals the incident's records, the desk's first
                          event (its hash names the desk) and the head at the export, in
                          chain order: every field the event's hash covers, and that hash
    records.jsonl        each record an event seals, as it is now: {"type", "id", "fields"}:
                          the fields its events seal (times as UTC ISO text, as sealed), with
                          its release, and a settlement's or compensation's totals and counts
    snapshots/<case>.json  each case's snapshot, byte for byte as it was loaded
    rows/<kind>.jsonl    rows under a parent, one JSON list a line after a first line
                          {"fields": [...]}: entrants, payouts, confirmations (after the
                          batch event's id), settlement lines, compensation items, ICM
                          figures, and the versions of each audited model (history-<model>)

A value in ``rows/`` is JSON as it is, except what JSON cannot tell apart from text or
structure: a time is {"t": ISO 8601 text}, a date {"d": ...}, a JSON column's value {"j": ...}.
Every name in the archive is in the manifest's ``files`` or is the manifest; anything else, or
a name missing, is an error.
"""

import json
from datetime import date, datetime

FORMAT = "crashdesk-incident-record/1"
MANIFEST = "manifest.json"
EVENTS = "events.jsonl"
RECORDS = "records.jsonl"
LINES = "lines"
ITEMS = "items"
ICM = "icm"
CONFIRMATIONS_BY_BATCH = "confirmations"

# Rows under a parent not named by a seal format: (parent, the digest's columns, in order).
LINE_FIELDS = ("settlement", "line_no", "player", "kind", "unit", "amount", "source", "reversal")
ITEM_FIELDS = ("compensation", "line_no", "player", "unit", "amount")
ICM_FIELDS = (
    "settlement",
    "position",
    "player",
    "chips",
    "chip_rank",
    "value",
    "amount",
    "standard_error",
    "policy_amount",
    "difference",
)


def rows_file(kind: str) -> str:
    """The file of rows of ``kind`` (a seal format's kind, or LINES, ITEMS, ICM)."""
    return f"rows/{kind.replace(':', '-')}.jsonl"


def snapshot_file(case_id: int) -> str:
    return f"snapshots/{case_id}.json"


def canonical_json(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def dump(value):
    """A row's value as the archive writes it."""
    if isinstance(value, datetime):
        return {"t": value.isoformat(timespec="microseconds")}
    if isinstance(value, date):
        return {"d": value.isoformat()}
    if isinstance(value, dict | list):
        return {"j": value}
    return value


def load(value):
    """A row's value as it was before ``dump``; ValueError for what ``dump`` never writes."""
    if not isinstance(value, dict):
        if isinstance(value, list | float):
            raise ValueError(f"{type(value).__name__} is not a value of a row")
        return value
    if len(value) != 1:
        raise ValueError("a tagged value has one key")
    ((tag, inner),) = value.items()
    if tag == "j":
        return inner
    if tag == "t" and isinstance(inner, str):
        moment = datetime.fromisoformat(inner)
        if moment.tzinfo is None:
            raise ValueError(f"the time {inner} has no zone")
        return moment
    if tag == "d" and isinstance(inner, str):
        return date.fromisoformat(inner)
    raise ValueError(f"unknown tag {tag!r}")
