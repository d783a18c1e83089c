"""What a job's batch of items stages, to be written together at its end.

The items of a bulk job run several to a transaction (``services.jobs.job_step``). The batch
locks its cases and settlements up front, one statement each, and keeps those rows: each
item's service then takes its own rows from the batch instead of reading and locking them
again (``common.lock_case``, ``common.lock_settlement``). What an item changes of those rows,
with the version it writes (its user and reason), the first versions of the audited records it
creates, the events it records, with what they seal, and the releases of the lines it
approves, are staged on the item and written for the whole
batch at its end (``batches.write_batch``): one update and one insert of versions per model
and kind of change, the releases given their places in the feed in order, the facts every
event seals read in one query per model, the events chained and inserted together. An item
that fails leaves nothing staged: its stage is dropped with its savepoint.

That is the record one item at a time writes, because no two items of a batch touch the same
row (the batch ends before an item whose case an earlier one holds) and each service records
its event after its own writes: sealed at the end, an event sees the versions it would have
seen when it was recorded.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from settlements.models import Event


@dataclass
class HeldEvent:
    """An event recorded in a batch, its facts to be completed when the batch is written:
    what it seals of ``subject`` and the versions so far of ``records``."""

    event: Event
    subject: object | None
    records: tuple
    facts: dict


@dataclass
class ItemStage:
    batch: "Batch"
    # New audited records, as they were inserted: their first versions.
    created: list = field(default_factory=list)
    updates: list[tuple[object, tuple[str, ...]]] = field(default_factory=list)
    releases: list = field(default_factory=list)
    events: list[HeldEvent] = field(default_factory=list)

    def take(self, instance) -> tuple[list, list]:
        """What this item staged of ``instance``'s row (its first version; a change and its
        version), taken off the stage to be written now, before the row is saved again: at
        most one staged write a row, and its versions in order."""
        key = (type(instance), instance.pk)

        def of_row(row) -> bool:
            return (type(row), row.pk) == key

        created = [row for row in self.created if of_row(row)]
        updates = [change for change in self.updates if of_row(change[0])]
        self.created = [row for row in self.created if not of_row(row)]
        self.updates = [change for change in self.updates if not of_row(change[0])]
        return created, updates


@dataclass
class Batch:
    # The rows the batch locked, by (model, pk): each held by one item only.
    locked: dict[tuple[type, int], object] = field(default_factory=dict)
    created: list = field(default_factory=list)
    updates: list[tuple[object, tuple[str, ...]]] = field(default_factory=list)
    releases: list = field(default_factory=list)
    events: list[HeldEvent] = field(default_factory=list)

    def hold(self, rows) -> None:
        for row in rows:
            self.locked[type(row), row.pk] = row

    @contextmanager
    def item(self) -> Iterator[ItemStage]:
        """Stage one item's writes; kept for the batch only when the item ends without error."""
        stage = ItemStage(self)
        token = _current.set(stage)
        try:
            yield stage
        finally:
            _current.reset(token)
        self.created += stage.created
        self.updates += stage.updates
        self.releases += stage.releases
        self.events += stage.events


_current: ContextVar[ItemStage | None] = ContextVar("batch_item", default=None)


def current() -> ItemStage | None:
    """The stage of the batch item being run, if any."""
    return _current.get()


def held(model: type, pk) -> object | None:
    """The row of ``model`` the running batch locked for its item, if it holds it."""
    stage = _current.get()
    return stage.batch.locked.get((model, pk)) if stage is not None else None
