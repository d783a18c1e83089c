"""Which release of the code is running: what cached page fragments are keyed by.

The templates keep costly fragments in the "pages" cache with Django's ``{% cache %}`` tag,
keyed by what each fragment shows and by ``code_release``, so that markup kept by an older
release is never shown by a newer one. Today that cache lives in each process and a deployment
restarts them; the release in the key keeps the fragments exact in a cache that outlives a
deployment too (settings.CACHES may point "pages" at a shared one).
"""

import hashlib
from pathlib import Path

from django.conf import settings

# What the markup is made of: the templates, and the code that fills them in (template tags,
# formatting, the wording of figures).
SOURCES = ("templates", "settlements", "crashdesk")
SUFFIXES = (".html", ".py")


def source_digest(root: Path) -> str:
    """A digest of every template and module under ``root``'s SOURCES: a release name that
    changes whenever the code does, for a deployment that does not name its releases."""
    digest = hashlib.blake2b(digest_size=8)
    for folder in SOURCES:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in SUFFIXES:
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def code_release(request) -> dict[str, str]:
    """Context processor: ``{{ code_release }}``, settings.CODE_RELEASE."""
    return {"code_release": settings.CODE_RELEASE}
