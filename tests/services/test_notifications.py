"""Email digests: what starts waiting for a person comes to them, at most once per the interval
they chose, with links straight to where they answer; off when they say so; a failed send is
tried again and never holds up the workflow."""

from datetime import timedelta
from smtplib import SMTPException

import pytest
from django.core import mail
from django.core.mail.backends.base import BaseEmailBackend
from django.urls import reverse
from django.utils import timezone

from settlements.access import roles
from settlements.errors import DomainError
from settlements.models import DigestEvery, Profile
from settlements.selectors import digests
from settlements.services import notifications
from settlements.services.access_review import access_review_complete
from settlements.services.profiles import profile_set_digest
from settlements.services.settlements import settlement_prepare, settlement_submit
from settlements.services.snapshots import case_load_snapshot
from settlements.tasks import send_digest
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


class RefusingBackend(BaseEmailBackend):
    """An SMTP server that is down."""

    def send_messages(self, email_messages):
        raise SMTPException("421 service not available")


@pytest.fixture
def manager(django_user_model):
    return make_user(
        django_user_model, "tm-mail", roles.TOURNAMENT_MANAGER, email="tm@desk.example"
    )


@pytest.fixture
def submit(operator, snapshot_factory, django_capture_on_commit_callbacks):
    """``submit(tournament_id)`` -> a settlement submitted for approval, what follows its
    commit run as after a real commit."""

    def go(tournament_id: str):
        case = case_load_snapshot(
            actor=operator, snapshot=snapshot_factory(stage="late", tournament_id=tournament_id)
        )
        with django_capture_on_commit_callbacks(execute=True):
            settlement = settlement_prepare(case=case, actor=operator)
            return settlement_submit(settlement=settlement, actor=operator)

    return go


def test_a_settlement_submitted_emails_the_manager_a_link_to_its_review(
    manager, operator, submit, settings
):
    settlement = submit("T-MAIL-1")
    assert len(mail.outbox) == 1
    email = mail.outbox[0]
    assert email.to == ["tm@desk.example"]
    assert "1 new for you to answer" in email.subject
    review = f"{settings.SITE_URL}{reverse('settlement_review', args=[settlement.pk])}"
    assert review in email.body
    assert "[new]" in email.body and "Settlements to approve (1)" in email.body
    assert f"{settings.SITE_URL}{reverse('user_settings')}" in email.body
    # The operator who submitted it has nothing waiting on it, and no address besides.
    assert all(message.to == ["tm@desk.example"] for message in mail.outbox)


def test_at_most_one_digest_per_interval_and_only_with_news(manager, submit):
    first = submit("T-MAIL-1")
    second = submit("T-MAIL-2")
    assert len(mail.outbox) == 1  # the second came within the hour
    due = notifications.digest_send(user_id=manager.pk)
    assert due == Profile.objects.get(user=manager).digest_sent_at + timedelta(hours=1)
    later = timezone.now() + timedelta(hours=1, seconds=1)
    assert notifications.digest_send(user_id=manager.pk, now=later) == notifications.SENT
    body = mail.outbox[1].body
    assert "Settlements to approve (2)" in body
    # Only the second is news; the first was told already.
    new_line = next(line for line in body.splitlines() if "[new]" in line)
    assert f"#{second.pk}" in new_line or str(second) in new_line
    assert str(first) not in new_line
    # Nothing new since: nothing sent, however long after.
    much_later = later + timedelta(days=2)
    assert notifications.digest_send(user_id=manager.pk, now=much_later) == (
        notifications.NOTHING_NEW
    )
    assert len(mail.outbox) == 2


def test_a_person_turns_digests_off(manager, submit):
    profile_set_digest(user=manager, actor=manager, every=DigestEvery.NEVER)
    submit("T-MAIL-1")
    assert mail.outbox == []
    assert notifications.digest_send(user_id=manager.pk) == notifications.OFF


def test_a_failed_send_never_holds_up_the_workflow(manager, submit, settings):
    settings.MAILERS = {"default": {"BACKEND": f"{__name__}.RefusingBackend"}}
    settlement = submit("T-MAIL-1")
    settlement.refresh_from_db()
    assert settlement.status == "awaiting_approval"
    # Nothing recorded as told: the next try sends it.
    assert not Profile.objects.filter(user=manager, digest_sent_at__isnull=False).exists()


@pytest.mark.usefixtures("database_tasks")
def test_a_failed_send_is_tried_again_later(manager, submit, settings):
    from django_tasks_db.models import DBTaskResult

    submit("T-MAIL-1")
    queued = DBTaskResult.objects.filter(task_path=send_digest.module_path)
    # One digest waits for the worker, whatever number of events the submit wrote.
    assert [task.args_kwargs["kwargs"] for task in queued] == [
        {"user_id": manager.pk, "attempt": 0}
    ]
    settings.MAILERS = {"default": {"BACKEND": f"{__name__}.RefusingBackend"}}
    assert send_digest.call(user_id=manager.pk, attempt=0) == {"sent": False, "retry": 1}
    retry = queued.get(args_kwargs__kwargs__attempt=1)
    assert retry.run_after > timezone.now() + timedelta(seconds=50)
    settings.MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
    assert send_digest.call(user_id=manager.pk, attempt=1)["sent"] is True
    assert len(mail.outbox) == 1


def test_digests_may_be_set_to_the_offered_intervals_only(manager):
    profile = profile_set_digest(user=manager, actor=manager, every=DigestEvery.DAY)
    assert profile.digest_every == 1440
    assert profile.history.first().history_change_reason == "Email digest: At most once a day"
    with pytest.raises(DomainError):
        profile_set_digest(user=manager, actor=manager, every=7)


@pytest.fixture
def reviewer(django_user_model):
    return make_user(django_user_model, "auditor-mail", roles.AUDITOR, email="au@desk.example")


def test_an_access_review_due_reaches_the_auditor_with_its_link(reviewer, submit, settings):
    # No review recorded yet: it is due today, and the next digest queued carries it.
    submit("T-MAIL-1")
    [email] = [message for message in mail.outbox if message.to == ["au@desk.example"]]
    assert "1 new for you to answer" in email.subject
    assert "Access review due" in email.body and "no review recorded yet" in email.body
    assert f"{settings.SITE_URL}{reverse('access_review')}" in email.body
    told = Profile.objects.get(user=reviewer).digest_told
    assert told == [f"access_review:{timezone.localdate().isoformat()}"]


def test_a_review_recorded_leaves_the_next_digest(django_user_model, submit, settings):
    # A Tournament Manager who is an auditor too: settlements keep coming after the review.
    both = make_user(
        django_user_model, "tm-au-mail", roles.TOURNAMENT_MANAGER, roles.AUDITOR, email="b@d.ex"
    )
    link = f"{settings.SITE_URL}{reverse('access_review')}"
    submit("T-MAIL-1")
    assert link in mail.outbox[0].body
    today = timezone.localdate()
    access_review_complete(actor=both, start=today, end=today, note="All in order.")
    submit("T-MAIL-2")
    later = timezone.now() + timedelta(hours=1, seconds=1)
    assert notifications.digest_send(user_id=both.pk, now=later) == notifications.SENT
    body = mail.outbox[-1].body
    assert "Settlements to approve (2)" in body
    assert link not in body and "Access review" not in body


def test_without_the_role_the_access_review_never_comes(manager, operator, submit, settings):
    operator.email = "op@desk.example"
    operator.save()
    submit("T-MAIL-1")
    assert ["tm@desk.example"] in [message.to for message in mail.outbox]
    assert all(reverse("access_review") not in message.body for message in mail.outbox)
    for person in (manager, operator):
        assert not any(key.startswith("access_review") for key in digests.digest_keys(person))
