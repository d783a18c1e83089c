"""The sealed record of one incident, as one zip archive an auditor takes away and verifies
with no database (``python -m settlements.audit verify``; the layout is
``settlements.audit.layout``).

Everything is read in one repeatable-read transaction, so the rows agree with the head read
first even while the desk goes on writing; events appended meanwhile are left out.
"""

import hashlib
import json
import tempfile
import zipfile
from collections.abc import Iterable
from itertools import chain
from typing import IO

from django.db import connection, transaction
from django.db.models import Q
from django.http import FileResponse

from settlements import audit_log, seal_formats, seals
from settlements.audit import layout
from settlements.models import (
    CasePlayer,
    CompensationItem,
    Event,
    IcmValuation,
    IcmValue,
    Incident,
    PaymentConfirmation,
    Settlement,
    SettlementLine,
    SettlementPayout,
    Snapshot,
    Tournament,
)
from settlements.seal_formats import CONFIRMATIONS, ENTRANTS, PAYOUTS

_CHUNK = 10_000


# Figures of a record that its events seal beside its fields (audit_log.subjects_facts).
def file_name(incident: Incident) -> str:
    return f"crashdesk-incident-{incident.pk}.zip"


def record_download(incident: Incident) -> FileResponse:
    """The archive as a download, written to a temporary file first (it may be larger than
    memory) and sent from there; the file goes when the response is closed."""
    spool = tempfile.TemporaryFile()  # noqa: SIM115 - the response closes it, after sending
    write_incident_record(incident, spool)
    spool.seek(0)
    response = FileResponse(
        spool, as_attachment=True, filename=file_name(incident), content_type="application/zip"
    )
    response["Cache-Control"] = "no-store"
    return response


def write_incident_record(incident: Incident, out: IO[bytes]) -> None:
    """Write the archive of ``incident`` to ``out`` (a seekable binary file)."""
    # Only a transaction of its own can be made repeatable-read (not one already under way).
    own = not connection.in_atomic_block
    with transaction.atomic():
        if own and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            _Writer(archive).write(incident)


class _Writer:
    def __init__(self, archive) -> None:
        self.archive = archive
        self.files: dict[str, str] = {}

    def put(self, name: str, lines: Iterable[bytes]) -> None:
        digest = hashlib.sha256()
        with self.archive.open(name, "w") as handle:
            for line in lines:
                digest.update(line)
                handle.write(line)
        self.files[name] = digest.hexdigest()

    def put_rows(self, kind: str, fields: Iterable[str], rows: Iterable[tuple]) -> None:
        header = layout.canonical_json({"fields": list(fields)}) + b"\n"
        body = (layout.canonical_json([layout.dump(v) for v in row]) + b"\n" for row in rows)
        self.put(layout.rows_file(kind), chain([header], body))

    def write(self, incident: Incident) -> None:
        count, head = audit_log.head()
        events = _events(incident, count)
        self.put(layout.EVENTS, (layout.canonical_json(_event(e)) + b"\n" for e in events))
        subjects: dict[str, set[int]] = {}
        history: dict[str, set[int]] = {}
        for event in events:
            if event.subject_type and event.subject_facts:
                subjects.setdefault(event.subject_type, set()).add(event.subject_id)
            for label in event.subject_facts.get("history", {}):
                name, pk = label.split(":")
                history.setdefault(name, set()).add(int(pk))
        self.put(layout.RECORDS, _records(subjects))
        cases = sorted(subjects.get("case", ()))
        snapshots = Snapshot.objects.filter(case__in=cases).values_list("case", "text")
        for case_id, text in snapshots.iterator(chunk_size=20):
            self.put(layout.snapshot_file(case_id), [text.encode()])
        settlements = sorted(subjects.get("settlement", ()))
        self._sealed_rows(ENTRANTS, CasePlayer, "case_id", cases)
        self._sealed_rows(PAYOUTS, SettlementPayout, "settlement_id", settlements)
        batches = [e.pk for e in events if e.type == Event.Type.PAYMENTS_CONFIRMED]
        fields = _union(CONFIRMATIONS)
        rows = PaymentConfirmation.objects.filter(event_id__in=batches).order_by("event_id", "id")
        self.put_rows(
            CONFIRMATIONS,
            ("event", *fields),
            _iterate(rows.values_list("event_id", *_attnames(PaymentConfirmation, fields))),
        )
        self._plain_rows(layout.LINES, SettlementLine, layout.LINE_FIELDS, settlements)
        items = CompensationItem.objects.filter(
            compensation_id__in=subjects.get("compensation", ())
        )
        self.put_rows(
            layout.ITEMS,
            layout.ITEM_FIELDS,
            _iterate(
                items.order_by("compensation_id", "line_no").values_list(
                    *_attnames(CompensationItem, layout.ITEM_FIELDS)
                )
            ),
        )
        icm = IcmValue.objects.filter(
            valuation__settlement_id__in=settlements, valuation__status=IcmValuation.Status.DONE
        ).order_by("valuation__settlement_id", "position")
        self.put_rows(
            layout.ICM,
            layout.ICM_FIELDS,
            _iterate(icm.values_list("valuation__settlement_id", *layout.ICM_FIELDS[1:])),
        )
        for name, pks in sorted(history.items()):
            kind = seal_formats.history(name)
            model = seals.VERSIONED_MODELS[name].history.model
            fields = _union(kind)
            versions = model.objects.filter(id__in=pks).order_by("id", "history_id")
            self.put_rows(
                kind, fields, _iterate(versions.values_list(*_attnames(model, fields, name)))
            )
        manifest = {
            "format": layout.FORMAT,
            "incident": incident.pk,
            "desk": events[0].hash if events and events[0].seq == 1 else None,
            "head": {"events": count, "hash": head},
            "files": self.files,
        }
        self.archive.writestr(layout.MANIFEST, layout.canonical_json(manifest))

    def _sealed_rows(self, kind: str, model, parent: str, parents: list[int]) -> None:
        fields = _union(kind)
        rows = model.objects.filter(**{f"{parent}__in": parents}).order_by(parent, "position")
        self.put_rows(kind, fields, _iterate(rows.values_list(*_attnames(model, fields))))

    def _plain_rows(self, kind: str, model, fields, parents: list[int]) -> None:
        rows = model.objects.filter(settlement_id__in=parents).order_by("settlement_id", "line_no")
        self.put_rows(kind, fields, _iterate(rows.values_list(*_attnames(model, fields))))


def _events(incident: Incident, upto: int) -> list[Event]:
    """The events of the incident and its cases, the batches that confirmed payments of its
    lines, the first event (naming the desk) and the head, in chain order."""
    batches = PaymentConfirmation.objects.filter(release__case__incident=incident)
    chosen = Event.objects.filter(
        Q(incident=incident)
        | Q(case__incident=incident)
        | Q(pk__in=batches.values("event_id"))
        | Q(seq__in=(1, upto))
    )
    return list(chosen.filter(seq__lte=upto).order_by("seq"))


def _event(event: Event) -> dict:
    """Every field the event's hash covers (as ``audit_log.canonical`` names them), its hash."""
    content = json.loads(audit_log.canonical(event))
    return content | {"id": event.pk, "hash": event.hash, "seal_format": event.seal_format}


def _records(subjects: dict[str, set[int]]) -> Iterable[bytes]:
    """Each sealed record's fields as its events seal them, in type and id order."""
    for name in sorted(subjects):
        model = seals.SEALED_MODELS.get(name)
        if model is None or model is Tournament:
            continue
        ids = sorted(subjects[name])
        found = seals.current_records(model, ids)
        figures = audit_log.SEALED_FIGURES.get(name, ())
        extra = {}
        if figures:
            rows = model.objects.filter(pk__in=ids).values("pk", *figures)
            extra = {row.pop("pk"): row for row in rows}
        if model is Settlement:
            for pk, run in audit_log.icm_runs(ids).items():
                extra.setdefault(pk, {})["icm_run"] = run["run"]
        for pk in ids:
            if pk in found:
                fields = found[pk] | extra.get(pk, {})
                yield layout.canonical_json({"type": name, "id": pk, "fields": fields}) + b"\n"


def _union(kind: str) -> tuple[str, ...]:
    """The fields any seal format names for ``kind``, in the order they are first named."""
    names: dict[str, None] = {}
    for form in seal_formats.FORMATS.values():
        names.update(dict.fromkeys(form.fields.get(kind, ())))
    return tuple(names)


def _attnames(model, fields: Iterable[str], label: str | None = None) -> list[str]:
    """The columns of ``model`` now holding ``fields`` (seal_formats.RENAMED)."""
    label = label or model._meta.model_name
    return [model._meta.get_field(seal_formats.current_name(label, f)).attname for f in fields]


def _iterate(rows) -> Iterable[tuple]:
    return rows.iterator(chunk_size=_CHUNK)
