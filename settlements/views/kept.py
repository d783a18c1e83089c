"""Reads of business data kept in the "pages" cache (settings.CACHES) under the desk's change
mark, for the pages whose own reads cost most of their time.

A kept value is keyed by the release, the mark over the events and every table of versions,
and what names it (a case's id, a player's statement and the facts it was drawn from). Every
business change writes an event, and a change made outside the services (a shell's save())
writes a version, so either moves the mark and the next view reads afresh. The one thing that
moves no mark is a renamed user: a kept value names them by their old name for at most
KEPT_SECONDS. Django's cache pickles what it keeps, so a view that adds to a kept object
changes only its own copy.
"""

import hashlib
from collections.abc import Callable

from django.conf import settings
from django.core.cache import caches

from settlements import change_mark, selectors

KEPT_SECONDS = 60


def desk_mark(request) -> str:
    """The change mark over the events and every table of versions, read once per request."""
    if not hasattr(request, "desk_mark"):
        request.desk_mark = change_mark.mark(selectors.HISTORICAL_MODELS.values())
    return request.desk_mark


def kept[T](request, name: str, parts: tuple, read: Callable[[], T], *, seconds=KEPT_SECONDS) -> T:
    """``read()``, or what it returned last time for the same ``name``, ``parts`` and mark.
    A ``None`` is never kept; an exception (a 404) passes through and keeps nothing."""
    key_parts = (settings.CODE_RELEASE, desk_mark(request), parts)
    key = f"{name}:" + hashlib.blake2b(repr(key_parts).encode(), digest_size=16).hexdigest()
    pages = caches["pages"]
    value = pages.get(key)
    if value is None:
        value = read()
        if value is not None:
            pages.set(key, value, seconds)
    return value
