"""Times on every page carry their zone; each person chooses theirs; exports stay in UTC."""

import csv
import io
from datetime import UTC, datetime, timedelta

import pytest
from django.template import TemplateSyntaxError
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as date_format

from settlements.middleware import TIME_ZONE_SESSION_KEY
from settlements.models import Incident
from settlements.services.profiles import profile_set_time_zone
from settlements.templatetags.timezones import when
from tests.conftest import DEMO_PASSWORD
from tests.views.conftest import HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


def test_times_say_their_zone_even_in_the_sites_default(as_operator, load_case, settings):
    settings.TIME_ZONE = "UTC"
    case = load_case(type="regular", stage="middle", tournament_id="T-TZ")
    html = assert_full_page(as_operator.get(reverse("case_detail", args=[case.pk])))
    assert "<dt>Crashed at</dt><dd>30 Nov 2026, 20:14:05 UTC</dd>" in html
    assert "Times in UTC</a>" in html


def test_the_settings_page_sets_the_zone_and_every_page_follows(as_operator, operator, load_case):
    case = load_case(type="regular", stage="middle", tournament_id="T-TOKYO")
    url = reverse("user_settings")
    page = assert_full_page(as_operator.get(url))
    assert '<option value="Asia/Tokyo">Asia/Tokyo</option>' in page
    response = as_operator.post(url, {"time_zone": "Asia/Tokyo"})
    assert response.status_code == 302 and response.url == url
    assert as_operator.session[TIME_ZONE_SESSION_KEY] == "Asia/Tokyo"
    settled = as_operator.get(url).content.decode()
    assert "Times are now shown in Asia/Tokyo time." in settled
    assert '<strong id="current-zone">Asia/Tokyo</strong>' in settled
    html = as_operator.get(reverse("case_detail", args=[case.pk])).content.decode()
    # 20:14 UTC is 05:14 the next morning in Tokyo.
    assert "<dt>Crashed at</dt><dd>1 Dec 2026, 05:14:05 JST</dd>" in html
    assert "Times in Asia/Tokyo</a>" in html


def test_a_bad_zone_is_named_at_its_field(as_operator):
    response = as_operator.post(reverse("user_settings"), {"time_zone": "Mars/Olympus"}, **HTMX)
    assert response.status_code == 422
    html = assert_partial(response, "settings-form")
    assert "Select a valid choice." in html


def test_signing_in_brings_back_the_chosen_zone(operator, settings):
    settings.AXES_ENABLED = False
    profile_set_time_zone(user=operator, actor=operator, time_zone="America/New_York")
    client = Client()
    assert client.login(username=operator.username, password=DEMO_PASSWORD)
    assert client.session[TIME_ZONE_SESSION_KEY] == "America/New_York"
    assert "Times in America/New_York</a>" in client.get(reverse("dashboard")).content.decode()


def test_forms_read_typed_times_in_the_users_zone(as_operator):
    as_operator.post(reverse("user_settings"), {"time_zone": "Asia/Tokyo"})
    form = as_operator.get(reverse("incident_new")).content.decode()
    assert "in Asia/Tokyo time" in form
    as_operator.post(
        reverse("incident_new"),
        {"title": "Tokyo outage", "started_at": "2026-01-15T09:00", "description": ""},
    )
    incident = Incident.objects.get(title="Tokyo outage")
    assert incident.started_at == datetime(2026, 1, 15, 0, 0, tzinfo=UTC)


def test_exports_stay_in_utc_whatever_the_readers_zone(as_auditor, auditor, load_case):
    load_case(type="regular", stage="middle", tournament_id="T-EXPORT")
    as_auditor.post(reverse("user_settings"), {"time_zone": "Asia/Tokyo"})
    assert "Times in Asia/Tokyo" in as_auditor.get(reverse("history")).content.decode()
    response = as_auditor.get(reverse("history_export"), {"view": "events"})
    assert response["Content-Disposition"].endswith('Z.csv"')
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows and all(row["at"].endswith("+00:00") for row in rows)


def test_the_when_filter(settings):
    settings.TIME_ZONE = "UTC"
    moment = datetime(2026, 11, 30, 20, 14, 5, tzinfo=UTC)
    assert when(None) == ""
    assert when(moment) == "30 Nov 2026, 20:14 UTC"
    assert when(moment, "seconds") == "30 Nov 2026, 20:14:05 UTC"
    assert when(moment, "time") == "20:14 UTC"


def test_the_hour_a_clock_goes_back_twice_names_which_one_it_is(settings):
    settings.TIME_ZONE = "Europe/Paris"
    # 27 Oct 2024: 02:30 happened once in summer time (00:30 UTC), once in winter (01:30 UTC).
    first = when(datetime(2024, 10, 27, 0, 30, tzinfo=UTC))
    second = when(datetime(2024, 10, 27, 1, 30, tzinfo=UTC))
    assert (first, second) == ("27 Oct 2024, 02:30 CEST", "27 Oct 2024, 02:30 CET")


@pytest.mark.parametrize("zone", ["UTC", "Europe/Malta", "America/St_Johns", "Asia/Kathmandu"])
def test_the_when_filter_writes_what_djangos_date_format_would(settings, zone):
    """``when`` writes its times by hand for speed; Django's formatting is the reference."""
    settings.TIME_ZONE = zone
    start = datetime(2026, 1, 1, 0, 0, 7, tzinfo=UTC)
    moments = [start + timedelta(days=31 * n, hours=7 * n, minutes=n) for n in range(12)]
    moments.append(datetime(1, 1, 2, 3, 4, 5, tzinfo=UTC))  # a year shown with four digits
    formats = {"minutes": "j M Y, H:i", "seconds": "j M Y, H:i:s", "time": "H:i"}
    for moment in moments:
        local = timezone.localtime(moment)
        for precision, format_string in formats.items():
            expected = f"{date_format(local, format_string)} {local.tzname()}"
            assert when(moment, precision) == expected


def test_the_when_filter_refuses_a_precision_it_does_not_know():
    with pytest.raises(TemplateSyntaxError):
        when(datetime(2026, 11, 30, tzinfo=UTC), "hours")
