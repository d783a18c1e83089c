"""The email digest's setting on the settings page: full page and htmx swap."""

import pytest
from django.urls import reverse

from settlements.models import DigestEvery, Profile
from tests.views.conftest import HTMX, assert_full_page, assert_partial

pytestmark = pytest.mark.django_db


def test_the_settings_page_offers_the_digest_and_its_off_switch(as_manager):
    html = assert_full_page(as_manager.get(reverse("user_settings")))
    assert 'id="digest-form"' in html
    assert "Never: I look at the dashboard" in html
    assert "no email address" in html
    assert_partial(as_manager.get(reverse("user_digest"), **HTMX), "digest-form")


def test_a_person_chooses_how_often_or_never(as_manager, tournament_manager):
    url = reverse("user_digest")
    response = as_manager.post(url, {"digest_every": DigestEvery.DAY}, **HTMX)
    assert response.status_code == 200 and response["HX-Redirect"] == reverse("user_settings")
    assert Profile.objects.get(user=tournament_manager).digest_every == DigestEvery.DAY
    as_manager.post(url, {"digest_every": DigestEvery.NEVER})
    assert Profile.objects.get(user=tournament_manager).digest_every == DigestEvery.NEVER
    html = assert_partial(as_manager.post(url, {"digest_every": "7"}, **HTMX), "digest-form")
    assert "Select a valid choice" in html
    assert Profile.objects.get(user=tournament_manager).digest_every == DigestEvery.NEVER
