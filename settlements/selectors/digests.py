"""What an email digest tells a person: the records waiting for them now, read as the
dashboard's "Waiting for you" reads them (``workflow.AWAITING``), and who may be told."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.urls import reverse

from settlements.models import DigestEvery, Profile
from settlements.selectors.dashboard import waiting_for, waiting_records, waiting_rows
from settlements.workflow import AWAITING

# A digest names the oldest few of each queue and counts the rest: the link to the queue's
# page answers for them all.
DIGEST_ROWS_SHOWN = 10


@dataclass(frozen=True)
class DigestQueue:
    """One queue of the digest: its title, how many records wait in it, and the first
    ``rows`` (each with ``key``, ``label``, ``operator_id``, ``url`` and ``new``)."""

    name: str
    title: str
    count: int
    rows: list[dict]

    @property
    def path(self) -> str:
        return reverse("queue", args=[self.name])

    @property
    def more(self) -> int:
        return self.count - len(self.rows)


def digest_keys(user) -> list[str]:
    """Every record waiting for ``user`` now, as "queue:id"."""
    keys = []
    for state in AWAITING:
        if state.name in (queues := waiting_for(user)):
            pks = queues[state.name].values_list("pk", flat=True)
            keys.extend(f"{state.name}:{pk}" for pk in pks)
    return keys


def digest_queues(user, new: set[str]) -> list[DigestQueue]:
    """What waits for ``user``, queue by queue, the records keyed in ``new`` marked so."""
    queues = []
    waiting = waiting_for(user)
    for state in AWAITING:
        if state.name not in waiting:
            continue
        records = waiting_records(state, user)
        count = records.count()
        if not count:
            continue
        shown = list(records[:DIGEST_ROWS_SHOWN])
        rows = waiting_rows(state, shown)
        for record, row in zip(shown, rows, strict=True):
            row["key"] = f"{state.name}:{record.pk}"
            row["new"] = row["key"] in new
        queues.append(DigestQueue(state.name, state.title, count, rows))
    return queues


def digest_recipients() -> list[int]:
    """The ids of the people a digest may go to: active, with an email address, holding a role
    something can wait for, and not having turned digests off."""
    roles = {state.role for state in AWAITING}
    users = get_user_model().objects.filter(is_active=True, groups__name__in=roles)
    off = Profile.objects.filter(digest_every=DigestEvery.NEVER).values("user_id")
    return list(users.exclude(email="").exclude(pk__in=off).values_list("pk", flat=True).distinct())


def digest_every(user) -> int:
    """How often ``user`` may be emailed, in minutes (0: never)."""
    chosen = Profile.objects.filter(user=user).values_list("digest_every", flat=True).first()
    return DigestEvery.HOUR if chosen is None else chosen
