"""History versions no event accounts for, and rows that are not their latest version.

Every event seals the versions so far of the records it names (``seals.history_facts_of``):
the latest version's id and a digest of every version up to it. A version written after the
last event naming its record (by a path that writes no event, or behind the app's back) is
*loose*: ``services.history_sweep`` seals those with one ``history_swept`` event, run every
``HISTORY_SWEEP_SECONDS`` by ``manage.py seal_loose_versions``; until then ``verify_audit``
names the first one. A record's row must also be its latest version: a row changed without a
version (a case set back to ``ready``, a tournament's currency) differs from it, and the
version is sealed.
"""

from collections import defaultdict

from django.db.models import Max, OuterRef, Subquery

from settlements.models import Event, IcmValuation
from settlements.seals import VERSIONED_MODELS
from settlements.unaccounted import BEFORE_EVENTS

_ITERATOR_CHUNK = 10_000
# Fields a service changes without a version, by design: a sampled ICM valuation's progress.
UNVERSIONED = {IcmValuation: frozenset({"batches_done"})}


def sealed_points() -> dict[str, int]:
    """{"model:pk": the latest of its versions that any event sealed}."""
    points: dict[str, int] = {}
    sealed = Event.objects.filter(subject_facts__has_key="history").values_list(
        "subject_facts__history", flat=True
    )
    for versions in sealed.iterator(chunk_size=_ITERATOR_CHUNK):
        for label, (point, _digest) in versions.items():
            if point > points.get(label, 0):
                points[label] = point
    return points


def loose_records(points: dict[str, int] | None = None) -> dict[type, list[int]]:
    """{model: ids of its records with a version no event sealed}, in id order."""
    points = sealed_points() if points is None else points
    loose: dict[type, list[int]] = defaultdict(list)
    for name, model in VERSIONED_MODELS.items():
        # The versions a migration wrote of the records it made, which no event names
        # (unaccounted.BEFORE_EVENTS), until an event about the record seals them.
        before = set()
        if model in BEFORE_EVENTS:
            before = set(model.objects.filter(BEFORE_EVENTS[model]).values_list("pk", flat=True))
        latest = (
            model.history.model.objects.values("id")
            .annotate(last=Max("history_id"))
            .order_by("id")
            .values_list("id", "last")
        )
        for pk, last in latest.iterator(chunk_size=_ITERATOR_CHUNK):
            point = points.get(f"{name}:{pk}")
            if point is None and pk in before:
                continue
            if last > (point or 0):
                loose[model].append(pk)
    return dict(loose)


def first_loose_version() -> str:
    """The first version no event accounts for, named by table and key; "" when none."""
    points = sealed_points()
    for model, pks in loose_records(points).items():
        history = model.history.model
        pk = pks[0]
        version = (
            history.objects.filter(
                id=pk, history_id__gt=points.get(f"{model._meta.model_name}:{pk}", 0)
            )
            .order_by("history_id")
            .values_list("history_id", flat=True)
            .first()
        )
        return f"{history._meta.db_table} version {version} ({model._meta.model_name} #{pk})"
    return ""


def _compared(model) -> list[str]:
    """The columns a version keeps of its record's row."""
    skipped = UNVERSIONED.get(model, frozenset())
    return [
        field.attname
        for field in model.history.model._meta.concrete_fields
        if not field.name.startswith("history_") and field.name not in skipped
    ]


def first_row_off_its_version() -> str:
    """The first record whose row differs from its latest version, named by table and key with
    the fields that differ; "" when every row is its latest version."""
    for model in VERSIONED_MODELS.values():
        history = model.history.model
        columns = _compared(model)
        latest = history.objects.filter(
            history_id=Subquery(
                history.objects.filter(id=OuterRef("id"))
                .order_by("-history_id")
                .values("history_id")[:1]
            )
        ).exclude(history_type="-")
        versions = latest.order_by("id").values_list(*columns).iterator(_ITERATOR_CHUNK)
        rows = model.objects.order_by("pk").values_list(*columns).iterator(_ITERATOR_CHUNK)
        versions, rows = _by_id(versions), _by_id(rows)
        for row, version in _paired(rows, versions):
            # A row with no version is a record no event accounts for (unaccounted,
            # access_record), or one a migration wrote; a version with no row, one deleted.
            if row is not None and version is not None and row != version:
                table = model._meta.db_table
                differ = [c for c, a, b in zip(columns, row, version, strict=True) if a != b]
                return f"{table} row {row[0]}, whose {', '.join(differ)} differ from its version"
    return ""


def _by_id(rows):
    return ((row[0], row) for row in rows)


def _paired(rows, versions):
    """(row, version) of each id, merged from two iterators in id order; None where absent."""
    rows, versions = iter(rows), iter(versions)
    row, version = next(rows, None), next(versions, None)
    while row is not None or version is not None:
        if version is None or (row is not None and row[0] < version[0]):
            yield row[1], None
            row = next(rows, None)
        elif row is None or version[0] < row[0]:
            yield None, version[1]
            version = next(versions, None)
        else:
            yield row[1], version[1]
            row, version = next(rows, None), next(versions, None)
