"""The history browser computes once per page what it used to compute once per row."""

from unittest import mock

import pytest
from django.urls import reverse
from django.urls.resolvers import URLResolver

from settlements.selectors.audit import HISTORY_MODELS
from settlements.services.settlements import settlement_prepare, settlement_submit
from settlements.views import rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def busy_history(operator, tournament_manager, load_case):
    """Versions of several record types, more than one page of them."""
    for number in range(9):
        case = load_case(type="regular", stage="middle", tournament_id=f"T-ROWS-{number}")
        settlement = settlement_prepare(case=case, actor=operator)
        settlement_submit(settlement=settlement, actor=operator)
    return case


def _reversals(client, url: str) -> tuple[int, int]:
    """(URLs reversed, table rows) of one view of `url`: reverse() and {% url %} alike."""
    real = URLResolver._reverse_with_prefix
    calls = []

    def counting(self, *args, **kwargs):
        calls.append(args[0])
        return real(self, *args, **kwargs)

    with mock.patch.object(URLResolver, "_reverse_with_prefix", counting):
        response = client.get(url)
    assert response.status_code == 200
    return len(calls), response.content.decode().count("<tr>")


def test_row_links_are_reversed_once_per_kind_not_per_row(as_auditor, busy_history):
    case = busy_history
    for view in ("changes", "events"):
        full, full_rows = _reversals(as_auditor, f"{reverse('history')}?view={view}")
        few, few_rows = _reversals(as_auditor, f"{reverse('history')}?view={view}&case={case.pk}")
        assert full_rows >= few_rows + 20
        # A page of 50 rows reverses at most one URL per record type (and, for events, the
        # incident and case links) more than a page of a few rows: not one per row.
        assert full - few <= len(HISTORY_MODELS) + 2, view


def test_row_links_are_the_ones_reverse_gives(busy_history):
    links = rows.RowUrls("history_record")
    assert links("case", 12) == reverse("history_record", args=["case", 12])
    assert links("settlement", 7) == reverse("history_record", args=["settlement", 7])
    assert rows.RowUrls("case_detail")(3) == reverse("case_detail", args=[3])
