"""Reads kept in Django's shared cache (settings.CACHES "default"), for what never changes once
written and costs a whole settlement to work out (a chart ranks every payout), so that each
process and each worker recycled by gunicorn reads it instead of working it out again. The
key names everything the value depends on; nothing keyed by a desk-wide state is kept.
"""

import hashlib
from collections.abc import Callable

from django.conf import settings
from django.core.cache import caches

_MISSING = object()


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
