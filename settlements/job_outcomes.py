"""What a background job came to, as its ``job_finished`` event seals it: the job's status,
error and end, and a digest of every item's outcome (position, key, status, message) in
position order, encoded as seal format 2 writes values (settlements.seal_formats).

A failed job may be retried and finish again, so only a job's latest ``job_finished`` event is
compared with the job as it is now (``audit_log.Facts.of``); earlier ones are the chain's.
"""

import hashlib
from itertools import groupby
from operator import itemgetter

from settlements import seal_formats
from settlements.models import Job, JobItem

_ITERATOR_CHUNK = 10_000
ITEM_FIELDS = ("position", "key", "status", "message")


def outcomes(job_ids) -> dict[int, dict]:
    """{job id: {"outcome": its status, error, end, item count and items' digest}}."""
    items: dict[int, tuple[int, str]] = {}
    rows = (
        JobItem.objects.filter(job_id__in=job_ids)
        .order_by("job_id", "position")
        .values_list("job_id", *ITEM_FIELDS)
    )
    for job_id, group in groupby(rows.iterator(chunk_size=_ITERATOR_CHUNK), itemgetter(0)):
        digest, count = hashlib.sha256(), 0
        for row in group:
            digest.update(seal_formats.encode_row(row[1:]).encode())
            count += 1
        items[job_id] = (count, digest.hexdigest())
    empty = (0, hashlib.sha256().hexdigest())
    found = {}
    jobs = Job.objects.filter(pk__in=job_ids).values_list("pk", "status", "error", "finished_at")
    for pk, status, error, finished_at in jobs.iterator(chunk_size=_ITERATOR_CHUNK):
        count, digest = items.get(pk, empty)
        found[pk] = {
            "outcome": {
                "status": status,
                "error": error,
                "finished_at": finished_at.isoformat() if finished_at else None,
                "items": count,
                "items_digest": digest,
            }
        }
    return found
