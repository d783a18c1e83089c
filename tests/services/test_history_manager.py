"""The versions' manager is one class, built once, with simple-history's queryset methods."""

import pytest
from django.utils import timezone

from settlements.models import Case, Incident
from settlements.services.incidents import incident_report
from settlements.triggers import VersionManager

pytestmark = pytest.mark.django_db


def test_reading_the_history_manager_builds_no_new_class():
    assert type(Case.history) is VersionManager
    assert type(Incident.history) is type(Case.history)


def test_versions_written_and_read_through_it(operator):
    incident = incident_report(actor=operator, title="DC1", started_at=timezone.now())
    versions = incident.history.all()
    assert [version.history_user for version in versions] == [operator]
    assert Incident.history.latest_of_each().count() == 1
    assert incident.history.as_of(timezone.now()).title == "DC1"
