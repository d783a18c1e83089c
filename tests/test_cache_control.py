"""No cache keeps a copy of what the app answers: pages, ledgers, exports and the API.

Every URL of the permission matrix is read by a user it lets in, so a page added later is
checked without being listed here.
"""

import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.test import Client
from django.urls import get_resolver, reverse

from settlements.services.tokens import api_token_create
from tests.test_permission_matrix import MATRIX, WHO, url_of, walk, world  # noqa: F401

pytestmark = pytest.mark.django_db


def _no_store(response) -> bool:
    directives = {part.strip() for part in response.get("Cache-Control", "").split(",")}
    return {"no-store", "private"} <= directives


def test_every_answer_is_kept_out_of_caches(world, users):  # noqa: F811
    clients = {}
    for who in WHO:
        clients[who] = Client()
        if who in users:
            clients[who].force_login(users[who])
    seen, cacheable = 0, []
    for name, pattern in sorted(walk(get_resolver().url_patterns)):
        entry = MATRIX[name]
        if entry.api:
            continue  # below, with a token
        reader = next((who for who, status in entry.get.items() if status == 200), None)
        if reader is None:
            continue  # POST only
        url = url_of(name, pattern, entry, world)
        response = clients[reader].get(url)
        assert response.status_code == 200, url
        seen += 1
        if not _no_store(response):
            cacheable.append(f"{url}: {response.get('Cache-Control')!r}")
    assert not cacheable, "\n".join(cacheable)
    assert seen >= 20


def test_ledgers_and_the_history_export_are_kept_out_of_caches(world, users):  # noqa: F811
    client = Client()
    client.force_login(users["auditor"])
    for url in (
        reverse("settlement_ledger", args=[world.approved_settlement.pk]),
        reverse("compensation_ledger", args=[world.approved_compensation.pk]),
        reverse("history_export"),
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Content-Type"].startswith("text/csv"), url
        assert _no_store(response), url


def test_api_answers_and_refusals_are_kept_out_of_caches(world, users):  # noqa: F811
    _, raw = api_token_create(user=users["auditor"], name="cache test")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    for url in (reverse("api:cases"), reverse("api:case", args=[world.case.pk])):
        response = client.get(url)
        assert response.status_code == 200, url
        assert _no_store(response), url
    assert _no_store(Client().get(reverse("api:cases")))  # 401


def test_sign_in_page_and_errors_are_kept_out_of_caches(client):
    assert _no_store(client.get(reverse("login")))
    assert client.get("/no-such-page/").status_code == 404
    assert _no_store(client.get("/no-such-page/"))


def test_static_files_stay_cacheable(client):
    name = "crashdesk/app.css"
    assert finders.find(name), f"static/{name} is gone; name another static file"
    response = client.get(static(name))
    assert response.status_code == 200
    assert "no-store" not in response.get("Cache-Control", "")
