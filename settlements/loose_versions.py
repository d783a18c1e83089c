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
from settlements.row_stamps import written_since
from settlements.seals import VERSIONED_MODELS
from settlements.unaccounted import BEFORE_EVENTS

_ITERATOR_CHUNK = 10_000
# Fields a service changes without a version, by design: a sampled ICM valuation's progress.
UNVERSIONED = {IcmValuation: frozenset({"batches_done"})}


def sealed_points(labels: list[str] | None = None) -> dict[str, int]:
    """{"model:pk": the latest of its versions that any event sealed}, of every record or of
    those ``labels`` ("model:pk")."""
    points: dict[str, int] = {}
    if labels == []:
        return points
    events = Event.objects.filter(subject_facts__has_key="history")
    if labels is not None:
        events = events.filter(subject_facts__history__has_any_keys=labels)
    sealed = events.values_list("subject_facts__history", flat=True)
    for versions in sealed.iterator(chunk_size=_ITERATOR_CHUNK):
        for label, (point, _digest) in versions.items():
            if point > points.get(label, 0):
                points[label] = point
    return points


def loose_records(
    points: dict[str, int] | None = None, *, since: int | None = None
) -> dict[type, list[int]]:
    """{model: ids of its records with a version no event sealed}, in id order; ``since``:
    among the versions written after that horizon (row_stamps)."""
    if points is None:
        points = sealed_points() if since is None else recent_points(since)
    loose: dict[type, list[int]] = defaultdict(list)
    for name, model in VERSIONED_MODELS.items():
        # The versions a migration wrote of the records it made, which no event names
        # (unaccounted.BEFORE_EVENTS), until an event about the record seals them.
        before = set()
        if model in BEFORE_EVENTS:
            before = set(model.objects.filter(BEFORE_EVENTS[model]).values_list("pk", flat=True))
        versions = model.history.model.objects.all()
        if since is not None:
            versions = _recent_versions(model, since)
        latest = (
            versions.values("id")
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


def _recent_versions(model, since: int):
    history = model.history.model
    return history.objects.filter(written_since(history, since))


def records_with_versions_since(since: int) -> list[str]:
    """The "model:pk" of every record with a history version written after ``since``."""
    labels = []
    for name, model in VERSIONED_MODELS.items():
        ids = _recent_versions(model, since).order_by().values_list("id", flat=True).distinct()
        labels += [f"{name}:{pk}" for pk in ids]
    return labels


def recent_points(since: int) -> dict[str, int]:
    """``sealed_points`` of the records with a version written after the horizon ``since``."""
    return sealed_points(records_with_versions_since(since))


def first_loose_version(since: int | None = None) -> str:
    """The first version no event accounts for, named by table and key; "" when none.
    ``since``: among the versions written after that horizon (row_stamps)."""
    points = sealed_points() if since is None else recent_points(since)
    for model, pks in loose_records(points, since=since).items():
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


def first_row_off_its_version(since: int | None = None) -> str:
    """The first record whose row differs from its latest version, named by table and key with
    the fields that differ; "" when every row is its latest version. ``since``: among the
    records whose row or a version was written after that horizon (row_stamps)."""
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
        rows = model.objects.all()
        if since is None:
            parts = [(latest, rows)]
        else:
            parts = [
                (latest.filter(id__in=ids), rows.filter(pk__in=ids))
                for ids in _recent_ids(model, since)
            ]
        for part_latest, part_rows in parts:
            if off := _first_off(model, columns, part_latest, part_rows):
                return off
    return ""


def _recent_ids(model, since: int):
    """The ids of ``model``'s records whose row or a version was written after ``since``, in
    parts small enough for one query's parameters."""
    rows = model.objects.filter(written_since(model, since)).values_list("pk", flat=True)
    ids = sorted(set(rows) | set(_recent_versions(model, since).values_list("id", flat=True)))
    return [ids[start : start + _ITERATOR_CHUNK] for start in range(0, len(ids), _ITERATOR_CHUNK)]


def _first_off(model, columns: list[str], latest, rows) -> str:
    versions = latest.order_by("id").values_list(*columns).iterator(_ITERATOR_CHUNK)
    rows = rows.order_by("pk").values_list(*columns).iterator(_ITERATOR_CHUNK)
    for row, version in _paired(_by_id(rows), _by_id(versions)):
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
