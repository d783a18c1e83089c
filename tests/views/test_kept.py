"""Reads kept under the desk's change mark (views.kept): the same answer while nothing
changes, a fresh read after any business change or save() outside the services, and the
case page as an empty cache draws it after each; and values shared by every process."""

import pytest
from django.core.cache import caches
from django.test import RequestFactory
from django.urls import reverse

from settlements import services
from settlements.models import Case
from settlements.views import kept
from tests.conftest import clear_caches

pytestmark = pytest.mark.django_db


def _request():
    return RequestFactory().get("/")


def _counting(value):
    calls = []

    def read():
        calls.append(1)
        return value

    return read, calls


def test_a_value_is_read_once_while_the_mark_stays(incident):
    read, calls = _counting(["figures"])
    assert kept.kept(_request(), "t", (1,), read) == ["figures"]
    assert kept.kept(_request(), "t", (1,), read) == ["figures"]
    assert len(calls) == 1
    # Other parts, another entry.
    kept.kept(_request(), "t", (2,), read)
    assert len(calls) == 2


def test_a_business_change_moves_the_mark_and_the_value_is_read_again(incident, operator):
    read, calls = _counting({"n": 1})
    kept.kept(_request(), "t", (1,), read)
    services.incident_close(incident=incident, actor=operator, reason="all settled")
    kept.kept(_request(), "t", (1,), read)
    assert len(calls) == 2


def test_nothing_is_kept_of_none_or_of_a_read_that_fails(incident):
    read, calls = _counting(None)
    kept.kept(_request(), "t", (1,), read)
    kept.kept(_request(), "t", (1,), read)
    assert len(calls) == 2

    def failing():
        calls.append(1)
        raise LookupError

    for _ in range(2):
        with pytest.raises(LookupError):
            kept.kept(_request(), "f", (1,), failing)
    assert len(calls) == 4


def test_each_caller_gets_its_own_copy(incident):
    first = kept.kept(_request(), "t", (1,), lambda: {"rows": []})
    first["rows"].append("added by one view")
    assert kept.kept(_request(), "t", (1,), lambda: {"rows": []}) == {"rows": []}


def test_a_shared_value_is_read_once_for_every_process_and_release(settings):
    """``shared`` keeps its value in the shared "default" cache: a process whose own memory
    is empty (the "pages" cache cleared) reads it, None included; another release reads anew."""
    read, calls = _counting(None)
    assert kept.shared("s", (1,), read, seconds=60) is None
    caches["pages"].clear()
    assert kept.shared("s", (1,), read, seconds=60) is None
    assert len(calls) == 1
    kept.shared("s", (2,), read, seconds=60)
    settings.CODE_RELEASE = "another release"
    kept.shared("s", (1,), read, seconds=60)
    assert len(calls) == 3


def test_a_shared_value_is_a_copy_for_each_caller():
    first = kept.shared("s", (1,), lambda: {"points": []}, seconds=60)
    first["points"].append("added by one view")
    assert kept.shared("s", (1,), lambda: {"points": []}, seconds=60) == {"points": []}


def _main(client, url: str) -> str:
    html = client.get(url).content.decode()
    return html[html.index("<main") : html.index("</main>")]


def test_the_case_page_shows_a_change_at_once_as_an_empty_cache_draws_it(
    load_case, as_operator, operator
):
    case = load_case(type="regular", stage="middle", tournament_id="T-KEPT", entrants=40)
    url = reverse("case_detail", args=[case.pk])
    before = _main(as_operator, url)
    services.settlement_prepare(case=case, actor=operator)
    after = _main(as_operator, url)
    assert after != before and "Settlement #" in after
    clear_caches()
    assert _main(as_operator, url) == after
    # A shell's save() writes a version of the tournament, which moves the mark too.
    tournament = Case.objects.get(pk=case.pk).tournament
    tournament.name = "Renamed Open"
    tournament.save()
    assert "Renamed Open" in _main(as_operator, url)
