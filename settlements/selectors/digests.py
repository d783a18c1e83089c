"""What an email digest tells a person: the records waiting for them now, read as the
dashboard's "Waiting for you" reads them (``workflow.AWAITING``), an access review fallen due
for those who review access, and who may be told."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.urls import reverse

from settlements import desk_roles
from settlements.access import roles
from settlements.models import DigestEvery, Profile
from settlements.selectors.access_review import ReviewDue, access_review_due
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


@dataclass(frozen=True)
class DigestReview:
    """The access review, due on ``due`` or before, waiting for the person told."""

    review: ReviewDue
    new: bool

    @property
    def path(self) -> str:
        return reverse("access_review")


def review_key(review: ReviewDue) -> str:
    # Keyed by its due date: each time it falls due is news once, until a review is recorded.
    return f"access_review:{review.due.isoformat()}"


def review_waiting(user) -> ReviewDue | None:
    """The access review when it is due by today and ``user`` is one who reviews access."""
    if not roles.has_role(user, *desk_roles.ACCESS_REVIEWERS):
        return None
    review = access_review_due()
    return review if review.overdue else None


def digest_keys(user) -> list[str]:
    """Every record waiting for ``user`` now, as "queue:id", and an overdue access review as
    "access_review:<due date>"."""
    keys = []
    for state in AWAITING:
        if state.name in (queues := waiting_for(user)):
            pks = queues[state.name].values_list("pk", flat=True)
            keys.extend(f"{state.name}:{pk}" for pk in pks)
    if review := review_waiting(user):
        keys.append(review_key(review))
    return keys


def digest_review(user, new: set[str]) -> DigestReview | None:
    """The overdue access review waiting for ``user``, marked new when keyed in ``new``."""
    if review := review_waiting(user):
        return DigestReview(review, review_key(review) in new)
    return None


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
    something can wait for (the access review's, once it is due), and not having turned digests
    off."""
    waited_on = {state.role for state in AWAITING}
    if access_review_due().overdue:
        waited_on.update(desk_roles.ACCESS_REVIEWERS)
    users = get_user_model().objects.filter(is_active=True, groups__name__in=waited_on)
    off = Profile.objects.filter(digest_every=DigestEvery.NEVER).values("user_id")
    return list(users.exclude(email="").exclude(pk__in=off).values_list("pk", flat=True).distinct())


def digest_every(user) -> int:
    """How often ``user`` may be emailed, in minutes (0: never)."""
    chosen = Profile.objects.filter(user=user).values_list("digest_every", flat=True).first()
    return DigestEvery.HOUR if chosen is None else chosen
