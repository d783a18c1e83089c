"""Verify an incident's sealed record with no database: every file against the manifest,
every event's hash, the chain between consecutive events, every seal of every event against
the rows in the archive (in the seal format the event was written in), and every settlement
re-settled by the engine under its recorded policy and compared with its recorded lines.

Standard library, the engine and ``settlements.seal_formats`` only (an import contract says
so): it runs where the auditor is, with no Django and no access to the desk.
"""

import hashlib
import json
import zipfile
import zlib
from collections import defaultdict
from dataclasses import dataclass, field

from settlements import seal_formats
from settlements.audit import layout
from settlements.rules import ENGINE_VERSION, InvalidInput, Policy, parse_snapshot, settle

GENESIS = "0" * 64
# What zipfile raises for an archive, or an entry, it cannot read: damaged or cut short.
_UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError)


class Problem(Exception):
    """What keeps the archive from verifying, said in a sentence."""


@dataclass
class Report:
    incident: int = 0
    desk: str = ""
    head: tuple[int, str] = (0, GENESIS)
    checked: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def lines(self) -> list[str]:
        said = [
            f"Incident #{self.incident} of the desk whose first event is {self.desk}",
            f"Chain head at the export: event {self.head[0]}, {self.head[1]}",
        ]
        said += [f"  {what}: {number}" for what, number in self.checked.items()]
        return said


def verify(path: str, *, head: dict | None = None) -> Report:
    """Check the archive at ``path`` (and that ``head``, a head file's content, belongs to
    its desk); the report of what was checked, or ``Problem`` naming the first thing wrong."""
    try:
        with zipfile.ZipFile(path) as archive:
            return _Archive(archive).verify(head)
    except _UNREADABLE as error:
        raise Problem(
            f"{path} is not a readable zip archive (damaged or cut short: {error})"
        ) from None


class _Archive:
    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive
        self.report = Report()

    def read(self, name: str) -> bytes:
        try:
            return self.archive.read(name)
        except KeyError:
            raise Problem(f"The archive has no {name}") from None
        except _UNREADABLE as error:
            raise Problem(f"{name} in the archive is damaged ({error})") from None

    def verify(self, head: dict | None) -> Report:
        manifest = self._manifest()
        self._files(manifest["files"])
        events = self._events(manifest)
        if head is not None:
            _check_head(head, manifest)
        self.records = self._records()
        self.rows = {
            name.removeprefix("rows/").removesuffix(".jsonl"): self._rows(name)
            for name in manifest["files"]
            if name.startswith("rows/")
        }
        for event in events:
            self._seals(event)
        self._resettle()
        return self.report

    # --- The files ---------------------------------------------------------------------------

    def _manifest(self) -> dict:
        data = self.read(layout.MANIFEST)
        try:
            manifest = json.loads(data)
        except ValueError:
            raise Problem(f"{layout.MANIFEST} is not JSON") from None
        if not isinstance(manifest, dict) or manifest.get("format") != layout.FORMAT:
            raise Problem(f"{layout.MANIFEST} does not describe a {layout.FORMAT} archive")
        if layout.canonical_json(manifest) != data:
            raise Problem(f"{layout.MANIFEST} was changed: it is not as the export wrote it")
        files, head_at = manifest.get("files"), manifest.get("head")
        if not isinstance(files, dict) or not isinstance(head_at, dict):
            raise Problem(f"{layout.MANIFEST} lacks its list of files or the head")
        self.report.incident = manifest.get("incident")
        self.report.desk = manifest.get("desk")
        self.report.head = (head_at.get("events"), head_at.get("hash"))
        return manifest

    def _files(self, files: dict) -> None:
        names = {info.filename for info in self.archive.infolist()} - {layout.MANIFEST}
        if extra := sorted(names - files.keys()):
            raise Problem(f"The archive holds {extra[0]}, which its manifest does not list")
        for name, expected in sorted(files.items()):
            if hashlib.sha256(self.read(name)).hexdigest() != expected:
                raise Problem(f"{name} was changed: its SHA-256 is not the manifest's")
        self.report.checked["files checked against the manifest"] = len(files)

    def _jsonl(self, name: str) -> list:
        try:
            return [json.loads(line) for line in self.read(name).decode().splitlines()]
        except ValueError as error:
            raise Problem(f"{name} is not JSON lines ({error})") from None

    def _events(self, manifest: dict) -> list[dict]:
        events = self._jsonl(layout.EVENTS)
        previous = None
        for event in events:
            try:
                content = {k: v for k, v in event.items() if k not in ("id", "hash", "seal_format")}
                digest = hashlib.sha256(seal_formats.event_bytes(content, event["seal_format"]))
                seq, prev = event["seq"], event["prev"]
            except (KeyError, TypeError, AttributeError):
                raise Problem(f"{layout.EVENTS} holds a line that is not an event") from None
            if digest.hexdigest() != event["hash"]:
                raise Problem(f"{_name(event)} was changed: its hash no longer matches")
            if previous is not None and seq == previous["seq"] + 1 and prev != previous["hash"]:
                raise Problem(f"{_name(event)} does not follow the event before it")
            if previous is not None and seq <= previous["seq"]:
                raise Problem(f"{_name(event)} is out of chain order")
            previous = event
        first = events[0] if events else {}
        if first.get("seq") != 1 or first.get("prev") != GENESIS:
            raise Problem("The archive lacks the desk's first event")
        if manifest.get("desk") != first["hash"]:
            raise Problem("The manifest names another desk than its first event's")
        count, head = self.report.head
        if previous["seq"] != count or previous["hash"] != head:
            raise Problem(f"The manifest's head (event {count}) is not its last event's")
        self.report.checked["events: hashes recomputed, links checked"] = len(events)
        return events

    def _records(self) -> dict[tuple[str, int], dict]:
        records = {}
        for record in self._jsonl(layout.RECORDS):
            try:
                records[record["type"], record["id"]] = record["fields"]
            except (KeyError, TypeError):
                raise Problem(f"{layout.RECORDS} holds a line that is not a record") from None
        return records

    def _rows(self, name: str) -> tuple[list[str], list[list]]:
        lines = self._jsonl(name)
        try:
            fields = lines[0]["fields"]
            return fields, [[layout.load(value) for value in row] for row in lines[1:]]
        except (IndexError, KeyError, TypeError, ValueError) as error:
            raise Problem(f"{name} does not hold rows ({error})") from None

    # --- The seals ------------------------------------------------------------------------

    def _seals(self, event: dict) -> None:
        sealed = event["facts"]
        if not sealed:
            return
        subject_type, subject_id = event["subject"]
        expected = self._facts(event, subject_type, subject_id)
        for key, value in sorted(sealed.items()):
            if key == "history":
                for label, (point, digest) in sorted(value.items()):
                    name, pk = label.split(":")
                    kind = seal_formats.history(name)
                    rows = self._group(kind, "id", int(pk), event["seal_format"], upto=point)
                    if rows is None or _digest(kind, event["seal_format"], rows) != digest:
                        raise Problem(f"{_name(event)}: the versions of {name} #{pk} changed")
                    self.report.checked["versions' seals checked"] += 1
                continue
            if key not in expected:
                raise Problem(f"{_name(event)} seals {key}, which the archive does not hold")
            if expected[key] != value:
                raise Problem(f"{_name(event)}: {key} no longer matches what it sealed")
            self.report.checked["sealed facts checked"] += 1

    def _facts(self, event: dict, subject_type: str, subject_id: int | None) -> dict:
        """What the archive's rows say of what ``event`` seals, digested in its format."""
        version = event["seal_format"]
        if not subject_type:
            batch = self._group(seal_formats.CONFIRMATIONS, "event", event["id"], version)
            rows = batch or []
            digest = _digest(seal_formats.CONFIRMATIONS, version, rows)
            return {"confirmations": digest, "confirmation_count": len(rows)}
        facts = dict(self.records.get((subject_type, subject_id), {}))
        if subject_type == "settlement":
            lines = self._plain(layout.LINES, "settlement", subject_id)
            facts["ledger"] = seal_formats.ledger_digest(row[1:] for row in lines)
            if icm := self._plain(layout.ICM, "settlement", subject_id):
                facts["icm"] = seal_formats.icm_digest(row[1:] for row in icm)
            payouts = self._group(seal_formats.PAYOUTS, "settlement", subject_id, version)
            facts["payout_rows"] = _digest(seal_formats.PAYOUTS, version, payouts or [])
        elif subject_type == "compensation":
            items = self._plain(layout.ITEMS, "compensation", subject_id)
            facts["items"] = seal_formats.items_digest(row[1:] for row in items)
        elif subject_type == "case":
            try:
                text = self.archive.read(layout.snapshot_file(subject_id))
                facts["snapshot"] = hashlib.sha256(text).hexdigest()
            except KeyError:
                pass
            entrants = self._group(seal_formats.ENTRANTS, "case", subject_id, version)
            facts["entrant_rows"] = _digest(seal_formats.ENTRANTS, version, entrants or [])
        return facts

    def _group(self, kind, parent, key, version, upto=None) -> list[list] | None:
        """The rows of ``kind`` under ``parent`` ``key``, with the fields format ``version``
        names, in order (up to the version ``upto`` for history); None when there are none
        at ``upto``."""
        fields, rows = self.rows.get(layout.rows_file(kind)[5:-6], ([], []))
        names = seal_formats.get(version).fields.get(kind)
        if names is None or any(name not in fields for name in (parent, *names)):
            raise Problem(f"The archive's {kind} rows lack a field seal format {version} names")
        at, columns = fields.index(parent), [fields.index(name) for name in names]
        chosen = [[row[i] for i in columns] for row in rows if row[at] == key]
        if upto is None:
            return chosen
        point = fields.index("history_id")
        ids = [row[point] for row in rows if row[at] == key]
        return chosen[: ids.index(upto) + 1] if upto in ids else None

    def _plain(self, kind: str, parent: str, key: int) -> list[list]:
        fields, rows = self.rows.get(kind, ([], []))
        if parent not in fields:
            return []
        at = fields.index(parent)
        return [row for row in rows if row[at] == key]

    # --- The engine ------------------------------------------------------------------------

    def _resettle(self) -> None:
        for (subject_type, pk), fields in sorted(self.records.items()):
            if subject_type != "settlement" or fields.get("kind") != "settlement":
                continue
            try:
                text = self.archive.read(layout.snapshot_file(fields["case"]))
            except KeyError:
                raise Problem(f"Settlement #{pk}: the archive lacks its case's snapshot") from None
            try:
                result = settle(
                    parse_snapshot(text),
                    decision=fields["decision"] or None,
                    policy=Policy(**fields["policy"]),
                )
            except (InvalidInput, KeyError, TypeError) as error:
                raise Problem(f"Settlement #{pk}: the engine cannot settle it ({error})") from None
            settled = [
                [pk, number, line.player, line.kind, line.unit, line.amount, line.source, False]
                for number, line in enumerate(result.lines, start=1)
            ]
            recorded = self._plain(layout.LINES, "settlement", pk)
            if settled != recorded:
                engine = fields.get("engine_version")
                raise Problem(
                    f"Settlement #{pk}: the engine ({ENGINE_VERSION}; the record was settled by "
                    f"{engine}) settles its snapshot into {len(settled)} lines that differ "
                    f"from the {len(recorded)} recorded"
                )
            self.report.checked["settlements re-settled by the engine, lines equal"] += 1


def _digest(kind: str, version: int, rows: list[list]) -> str:
    """The digest of ``rows`` of ``kind`` as seal format ``version`` writes them."""
    form = seal_formats.get(version)
    digest = hashlib.sha256(form.header(kind).encode())
    if form.encoding == "tagged":
        text = "".join(map(seal_formats.encode_row, rows))
    elif kind in (seal_formats.ENTRANTS, seal_formats.PAYOUTS):
        text = "".join("(" + ", ".join(map(repr, row)) + ")\n" for row in rows)
    else:
        text = "".join(seal_formats.row_line(row) + "\n" for row in rows)
    digest.update(text.encode())
    return digest.hexdigest()


def _name(event: dict) -> str:
    return f"Event #{event.get('id')} (number {event.get('seq')}, {event.get('type')})"


def _check_head(head: dict, manifest: dict) -> None:
    """A head file kept by the auditor (``verify_audit --export-head``) must be this desk's;
    one taken at the same event must have the same hash."""
    if not isinstance(head, dict) or not isinstance(head.get("events"), int):
        raise Problem("The head file does not hold a head ('events' and 'head' are expected)")
    if head.get("desk") not in (None, manifest["desk"]):
        raise Problem("The head file is another desk's: its first event is not this archive's")
    if (
        head["events"] == manifest["head"]["events"]
        and head.get("head") != manifest["head"]["hash"]
    ):
        raise Problem(
            f"The head file says event {head['events']} has hash {head.get('head')}; the "
            "archive's head differs: the chain was rewritten"
        )
