"""The attributes that static/crashdesk/app.js reads to place focus and speak after a swap,
as the pages and their htmx partials carry them. (The browser side: tests/e2e.)"""

import re

import pytest
from django.urls import reverse

from tests.views.conftest import HTMX, submitted_settlements

pytestmark = pytest.mark.django_db

FILTER_FORM = re.compile(r'<form class="filters"[^>]*>')


def test_the_live_region_is_on_every_page_and_never_in_a_partial(as_manager, late_cases, operator):
    settlement = submitted_settlements(late_cases[:1], operator)[0]
    page = as_manager.get(reverse("settlement_review", args=[settlement.pk])).content.decode()
    assert page.count('id="swap-status"') == 1
    # What a swap brings is announced by that region, so the panel it replaces is not one.
    assert "aria-live" not in page.split('id="swap-status"')[0]
    partial = as_manager.get(
        reverse("settlement_review", args=[settlement.pk]), **HTMX, HTTP_HX_TARGET="payouts"
    ).content.decode()
    assert 'id="payouts"' in partial and "swap-status" not in partial


def test_the_confirmation_swapped_in_names_its_heading_as_the_next_stop(
    as_manager, late_cases, operator
):
    settlement = submitted_settlements(late_cases[:1], operator)[0]
    partial = as_manager.get(
        reverse("settlement_reject", args=[settlement.pk]), **HTMX
    ).content.decode()
    assert re.search(
        r'<h2 id="confirm-title" tabindex="-1" data-focus-after-swap>Check before you reject',
        partial,
    )


def test_the_bulk_approval_keeps_ids_on_its_toggles_and_says_the_selection(
    as_manager, late_cases, operator, incident
):
    first, second = submitted_settlements(late_cases[:2], operator)
    url = reverse("incident_approve", args=[incident.pk])
    page = as_manager.get(url).content.decode()
    assert f'id="toggle-{first.pk}"' in page and f'id="toggle-{second.pk}"' in page
    left_out = as_manager.get(
        f"{url}?out={first.pk}", **HTMX, HTTP_HX_TARGET="bulk-form"
    ).content.decode()
    assert f'id="toggle-{first.pk}"' in left_out
    assert '<p id="approve-selection" data-announce>' in left_out


@pytest.mark.parametrize(
    "name", ["incident_approve", "incident_tournaments", "case_queue", "incident_queue"]
)
def test_filters_wait_for_their_button(name, as_manager, incident):
    args = [incident.pk] if name.startswith("incident_") and name != "incident_queue" else []
    page = as_manager.get(reverse(name, args=args)).content.decode()
    forms = FILTER_FORM.findall(page)
    assert forms
    assert not [form for form in forms if "hx-trigger" in form]
    assert re.search(r'<button class="button" type="submit"[^>]*>Filter</button>', page)


def test_wide_tables_scroll_in_a_named_focusable_box(as_manager, late_cases, operator):
    settlement = submitted_settlements(late_cases[:1], operator)[0]
    page = as_manager.get(reverse("settlement_review", args=[settlement.pk])).content.decode()
    boxes = re.findall(r'<div class="table-wrap"[^>]*>', page)
    assert boxes
    for box in boxes:
        assert 'tabindex="0"' in box and 'role="region"' in box
        assert re.search(r'aria-label="[^"]+"', box)
