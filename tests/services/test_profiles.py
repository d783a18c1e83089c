"""A user's own settings: the time zone of their pages, with its history."""

import pytest

from settlements.errors import DomainError, NotAllowed
from settlements.models import Event, Profile
from settlements.services.profiles import profile_set_time_zone

pytestmark = pytest.mark.django_db


def test_a_user_sets_their_time_zone_with_a_history_version(operator):
    # Giving the user their role was itself recorded (services.access_changes); count from here.
    events = Event.objects.count()
    profile = profile_set_time_zone(user=operator, actor=operator, time_zone="Europe/Paris")
    assert Profile.objects.get(user=operator).time_zone == "Europe/Paris" == profile.time_zone
    version = profile.history.get()
    assert version.history_user == operator
    assert version.history_change_reason == "Time zone: Europe/Paris"
    # Back to the site's zone; choosing the same again writes nothing.
    profile_set_time_zone(user=operator, actor=operator, time_zone="")
    profile_set_time_zone(user=operator, actor=operator, time_zone="")
    assert profile.history.count() == 2
    assert Profile.objects.get(user=operator).time_zone == ""
    # A display setting is not a business event: the desk's event log is left alone.
    assert Event.objects.count() == events


@pytest.mark.parametrize("name", ["Mars/Olympus", "UTC+1", "../etc/passwd", "localtime"])
def test_only_real_zone_names_are_taken(operator, name):
    with pytest.raises(DomainError, match="not a time zone name") as refused:
        profile_set_time_zone(user=operator, actor=operator, time_zone=name)
    assert refused.value.field == "time_zone"
    assert not Profile.objects.exists()


def test_nobody_sets_another_persons_zone(operator, auditor):
    with pytest.raises(NotAllowed):
        profile_set_time_zone(user=operator, actor=auditor, time_zone="Asia/Tokyo")
    assert not Profile.objects.exists()
