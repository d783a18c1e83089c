"""Sign-in throttling per address: password spraying over many usernames is locked out.

The per-username lock (five failures for one username from one address) is tested in
test_security.py; these tests spread the failures so that no username reaches it.
"""

import pytest
from django.conf import settings
from django.test import Client, RequestFactory
from django.urls import reverse

from settlements.access.signin import client_address

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
OFFICE, ELSEWHERE, PROXY = "198.51.100.7", "203.0.113.9", "10.0.0.2"


@pytest.fixture
def olivia(django_user_model):
    return django_user_model.objects.create_user(username="olivia", password=PASSWORD)


def _attempt(client: Client, username: str, password: str = "Summer2026!", **headers) -> int:
    data = {"username": username, "password": password}
    return client.post(reverse("login"), data, **headers).status_code


def _spray(client: Client, failures: int, **headers) -> list[int]:
    """One wrong password for each of ``failures`` different usernames."""
    return [_attempt(client, f"user{number}", **headers) for number in range(failures)]


def test_failures_spread_over_many_usernames_lock_the_address(olivia):
    limit = settings.AXES_ADDRESS_FAILURE_LIMIT
    assert limit > settings.AXES_FAILURE_LIMIT
    sprayer = Client(REMOTE_ADDR=OFFICE)
    statuses = _spray(sprayer, limit)
    assert statuses[:-1] == [200] * (limit - 1)  # the form again, with its error
    assert statuses[-1] == 429

    # The right password of a real account is refused from that address too...
    assert _attempt(Client(REMOTE_ADDR=OFFICE), "olivia", PASSWORD) == 429
    # ...and accepted from any other.
    assert _attempt(Client(REMOTE_ADDR=ELSEWHERE), "olivia", PASSWORD) == 302


def test_a_sign_in_does_not_wipe_the_failures_spread_over_other_usernames(olivia):
    sprayer = Client(REMOTE_ADDR=OFFICE)
    _spray(sprayer, settings.AXES_ADDRESS_FAILURE_LIMIT - 1)
    assert _attempt(sprayer, "olivia", PASSWORD) == 302  # an account of their own
    sprayer.post(reverse("logout"))
    assert _attempt(sprayer, "someone_else") == 429


def test_a_made_up_forwarded_for_header_changes_nothing_without_a_trusted_proxy(olivia):
    sprayer = Client(REMOTE_ADDR=OFFICE)
    statuses = [
        _attempt(sprayer, f"user{number}", HTTP_X_FORWARDED_FOR=f"192.0.2.{number}")
        for number in range(settings.AXES_ADDRESS_FAILURE_LIMIT)
    ]
    assert statuses[-1] == 429


def test_behind_a_trusted_proxy_the_client_address_is_the_one_it_wrote(settings, olivia):
    settings.TRUSTED_PROXY_COUNT = 1
    through_proxy = Client(REMOTE_ADDR=PROXY)
    # Whatever the client puts in front of the proxy's entry is ignored.
    statuses = [
        through_proxy.post(
            reverse("login"),
            {"username": f"user{number}", "password": "Summer2026!"},
            HTTP_X_FORWARDED_FOR=f"192.0.2.{number}, {OFFICE}",
        ).status_code
        for number in range(settings.AXES_ADDRESS_FAILURE_LIMIT)
    ]
    assert statuses[-1] == 429
    assert _attempt(through_proxy, "olivia", PASSWORD, HTTP_X_FORWARDED_FOR=OFFICE) == 429
    # Another client behind the same proxy is not locked out with the sprayer.
    assert _attempt(through_proxy, "olivia", PASSWORD, HTTP_X_FORWARDED_FOR=ELSEWHERE) == 302


@pytest.mark.parametrize(
    ("proxies", "forwarded_for", "expected"),
    [
        (0, "192.0.2.1", PROXY),  # no trusted proxy: the header is the client's word
        (1, "", PROXY),  # not through the proxy
        (1, f"{OFFICE}", OFFICE),
        (1, f"192.0.2.1, {OFFICE}", OFFICE),
        (2, f"192.0.2.1, {OFFICE}, 10.0.0.1", OFFICE),
        (2, "10.0.0.1", PROXY),  # fewer entries than proxies: not through all of them
    ],
)
def test_client_address(settings, proxies, forwarded_for, expected):
    settings.TRUSTED_PROXY_COUNT = proxies
    headers = {"HTTP_X_FORWARDED_FOR": forwarded_for} if forwarded_for else {}
    request = RequestFactory().get("/", REMOTE_ADDR=PROXY, **headers)
    assert client_address(request) == expected
