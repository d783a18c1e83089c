"""Email digests: work comes to the person it waits for.

When a business event is written, something may have started waiting for someone (a settlement
submitted, compensation proposed, a case awaiting its decision): once the transaction commits,
``common.events_committed`` is sent, and the tasks module queues a digest for each person who
may be told (``settlements.tasks.send_digest``), one at a time per person. The digest itself
decides: it names what waits for the person now, read as their dashboard's "Waiting for you"
reads it (an access review fallen due included, for those who review access), and is sent
only when something in it is new to them, and at most once per the interval they chose
(``Profile.digest_every``). A failed send raises, for the task to try
again later; nothing of it ever holds up the event that started it.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import timezone

from settlements.models import DigestEvery, Profile
from settlements.selectors import digests
from settlements.services.profiles import locked_profile

SENT = "sent"
NOTHING_NEW = "nothing new"
OFF = "off"


def digest_recipients() -> list[int]:
    """The ids of the people a digest may go to (selectors.digests.digest_recipients)."""
    return digests.digest_recipients()


@transaction.atomic
def digest_send(*, user_id: int, now: datetime | None = None) -> str | datetime:
    """Email the person what waits for them, if something in it is new to them and their
    interval allows; SENT, NOTHING_NEW, OFF, or the time from which it may be sent. Raises what
    the mail backend raises, having recorded nothing, so that a retry sends it again."""
    now = now or timezone.now()
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    if user is None or not user.email:
        return OFF
    profile = locked_profile(user, reason="Email digests begun")
    if profile.digest_every == DigestEvery.NEVER:
        return OFF
    keys = digests.digest_keys(user)
    new = set(keys) - set(profile.digest_told)
    if not new:
        # What was answered meanwhile is forgotten, so it is news again if it comes back.
        Profile.objects.filter(pk=profile.pk).update(digest_told=keys)
        return NOTHING_NEW
    if profile.digest_sent_at is not None:
        due = profile.digest_sent_at + timedelta(minutes=profile.digest_every)
        if now < due:
            return due
    queues = digests.digest_queues(user, new)
    context = {
        "user": user,
        "queues": queues,
        "access_review": digests.digest_review(user, new),
        "new": len(new),
        "total": len(keys),
        "site": settings.SITE_URL,
        "every": DigestEvery(profile.digest_every).label.lower(),
    }
    send_mail(
        subject=render_to_string("settlements/email/digest_subject.txt", context).strip(),
        message=render_to_string("settlements/email/digest.txt", context),
        from_email=None,
        recipient_list=[user.email],
    )
    Profile.objects.filter(pk=profile.pk).update(digest_sent_at=now, digest_told=keys)
    return SENT
