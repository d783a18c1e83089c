"""Which release of the code is running: what cached page fragments are keyed by.

The templates keep costly fragments in the cache with Django's ``{% cache %}`` tag, keyed by
what each fragment shows and by ``code_release``: the cache is a database table that outlives
a deployment, and markup kept by an older release must never be shown by a newer one.
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
