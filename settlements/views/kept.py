"""Reads of business data kept in Django's caches (settings.CACHES), for the pages whose own
reads cost most of their time.

``kept``: in the "pages" cache, each process's memory, under the desk's change mark.

A kept value is keyed by the release, the mark over the events and every table of versions,
and what names it (a case's id, a player's statement and the facts it was drawn from). Every
business change writes an event, and a change made outside the services (a shell's save())
writes a version, so either moves the mark and the next view reads afresh. The one thing that
moves no mark is a renamed user: a kept value names them by their old name for at most
KEPT_SECONDS. Django's cache pickles what it keeps, so a view that adds to a kept object
changes only its own copy.

``shared``: in the shared "default" cache, for what never changes once written and costs a
whole settlement to work out (a chart ranks every payout), so that each process and each
worker recycled by gunicorn reads it instead of working it out again.
"""

import hashlib
from collections.abc import Callable

from django.conf import settings
from django.core.cache import caches

from settlements import change_mark, selectors

KEPT_SECONDS = 60
_MISSING = object()


def desk_mark(request) -> str:
    """The change mark over the events and every table of versions, read once per request."""
    if not hasattr(request, "desk_mark"):
        request.desk_mark = change_mark.mark(selectors.HISTORICAL_MODELS.values())
    return request.desk_mark


def kept[T](request, name: str, parts: tuple, read: Callable[[], T], *, seconds=KEPT_SECONDS) -> T:
    """``read()``, or what it returned last time for the same ``name``, ``parts`` and mark.
    A ``None`` is never kept; an exception (a 404) passes through and keeps nothing."""
    key = _key(name, (settings.CODE_RELEASE, desk_mark(request), parts))
    pages = caches["pages"]
    value = pages.get(key)
    if value is None:
        value = read()
        if value is not None:
            pages.set(key, value, seconds)
    return value


def shared[T](name: str, parts: tuple, read: Callable[[], T], *, seconds: int) -> T:
    """``read()``, or what it returned for the same ``name``, ``parts`` and release in any
    process; ``parts`` name everything it depends on. A ``None`` is kept like any value."""
    key = _key(name, (settings.CODE_RELEASE, parts))
    shared_cache = caches["default"]
    value = shared_cache.get(key, _MISSING)
    if value is _MISSING:
        value = read()
        shared_cache.set(key, value, seconds)
    return value


def _key(name: str, parts: tuple) -> str:
    return f"{name}:" + hashlib.blake2b(repr(parts).encode(), digest_size=16).hexdigest()
