"""`manage.py verify_audit`: recompute the event log's hash chain and everything it seals.

Prints the number of events and the head hash, and exits 0 when every event matches; otherwise
exits 1 naming the first event that does not (changed, missing, out of order, or sealing rows
that have changed since: a ledger, payouts, entrants, a snapshot, a release, confirmations,
who approved or rejected what, the history versions), or the payment tally that no longer
counts what its confirmations say.

By default it goes on from the last checkpoint (settlements.checkpoints): the events after it,
a sample of older ones drawn at random, and the rows written since, with the older events
sealing them and any no event names; ``--full`` reads the whole chain and every row. Every
checkpoint's signature is checked, and a verification that finds nothing wrong ends with a new
one.

The chain alone cannot tell a rewrite with fresh hashes: keep its head outside the database.
``--export-head FILE`` writes the head once verified (on a schedule: docs/operations.md);
``--head FILE`` takes such a file back (or the auditor's ``audit-head.json``) and fails unless
that head is still in the chain, at the number it had.
"""

import json
import os
from pathlib import Path

from django.core.cache import cache
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from settlements import audit_log, checkpoints
from settlements.models import AuditCheckpoint, Event
from settlements.services.checkpoints import checkpoint_record


class Command(BaseCommand):
    help = (
        "Verify the event log's hash chain and every row it seals; optionally check a head "
        "exported earlier, or export the head."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--head",
            metavar="FILE",
            help="a head exported earlier (JSON with 'events' and 'head'): fail unless it is "
            "still in the chain",
        )
        parser.add_argument(
            "--export-head",
            metavar="FILE",
            help="once verified, write the head to FILE (replaced whole, never half-written)",
        )

        parser.add_argument(
            "--full",
            action="store_true",
            help="read the whole chain, not only what came after the last checkpoint",
        )

    def handle(self, **options):
        kept = _read_head(options["head"]) if options["head"] else None
        outcome = checkpoints.verify(full=options["full"])
        result = outcome.verification
        # The auditor's page shows this outcome until the log grows.
        full_at = None if outcome.full else _last_full_at()
        audit_log.remember(result, cache=cache, full_at=full_at)
        if not result.ok:
            held = (
                f"\nThe chain holds up to event {result.count - 1}."
                if result.event_id is not None
                else ""
            )
            raise CommandError(f"{result.problem}{held}")
        if kept is not None:
            _check_head(*kept)
        if options["export_head"]:
            _write_head(Path(options["export_head"]), result)
        checkpoint = checkpoint_record(outcome=outcome)
        if outcome.full:
            read = "the whole chain read"
        else:
            read = (
                f"events {outcome.first} to {result.count} read after checkpoint "
                f"#{outcome.since.pk}, {len(outcome.sampled)} older events drawn at random, "
                + (
                    "and every row for changes no event records"
                    if outcome.rows_since is None
                    else f"and the rows written since, with the {len(outcome.reread)} older "
                    "events sealing them"
                )
            )
        self.stdout.write(f"{result.count} events verified; head {result.head}")
        self.stdout.write(f"Read: {read}. Checkpoint #{checkpoint.pk} written.")


def _last_full_at() -> str | None:
    last = AuditCheckpoint.objects.filter(full=True).order_by("-pk").first()
    return last.at.isoformat() if last else None


def _read_head(name: str) -> tuple[int, str]:
    try:
        kept = json.loads(Path(name).read_text())
        count, head = kept["events"], kept["head"]
    except (OSError, ValueError, KeyError, TypeError) as problem:
        raise CommandError(f"Cannot read the head in {name}: {problem}") from None
    if not isinstance(count, int) or isinstance(count, bool) or not isinstance(head, str):
        raise CommandError(f"{name} does not hold a head: 'events' and 'head' are expected.")
    return count, head


def _check_head(count: int, head: str) -> None:
    """The kept head must be the hash of event number ``count``, which verify has just shown
    to be chained from the first event: so nothing up to it was rewritten."""
    if count == 0:
        return
    now = Event.objects.filter(seq=count).values_list("hash", flat=True).first()
    if now is None:
        raise CommandError(
            f"The kept head (event {count}, {head}) is no longer in the chain: the log is "
            "shorter than it was."
        )
    if now != head:
        raise CommandError(
            f"The kept head (event {count}, {head}) is no longer in the chain: event {count} "
            f"now has hash {now}. The log was rewritten."
        )


def _write_head(path: Path, result: audit_log.Verification) -> None:
    text = json.dumps(
        {
            "events": result.count,
            "head": result.head,
            # The first event's hash names the desk: a head from another desk is told apart.
            "desk": Event.objects.filter(seq=1).values_list("hash", flat=True).first(),
            "verified": True,
            "exported_at": timezone.now().isoformat(),
        },
        indent=2,
    )
    # Written beside and renamed over: a reader never sees half a file.
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text + "\n")
    os.replace(partial, path)
