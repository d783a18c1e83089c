"""No private Django APIs (docs/architecture.md): a Django upgrade may change anything whose
name starts with an underscore without notice.

Every ``._name`` attribute used in the project's code is checked against the private names
Django's own source defines (methods, attributes set on ``self``, class attributes). A name the
project defines itself is its own; ``_meta`` and ``_default_manager`` are documented Model API,
and the history user and change reason are django-simple-history's documented way to set them.
Undocumented names without an underscore (``connection.wrap_database_errors``) are listed.
"""

import re
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parent.parent
CODE = [ROOT / "settlements", ROOT / "crashdesk", ROOT / "benchmarks"]
DOCUMENTED = {"_meta", "_default_manager", "_history_user", "_change_reason"}
UNDOCUMENTED = re.compile(r"\.(wrap_database_errors|_cached_user)\b")

USED = re.compile(r"\.(_[a-z]\w*)\b")
DEFINED = re.compile(r"(?:def |self\.|^\s*)(_[a-z]\w*)\s*(?:\(|=|:)", re.MULTILINE)


def _sources(roots) -> list[Path]:
    return [path for root in roots for path in root.rglob("*.py") if "migrations" not in path.parts]


def _defined(paths) -> set[str]:
    return {name for path in paths for name in DEFINED.findall(path.read_text())}


def test_the_code_uses_no_private_name_of_django():
    django_private = _defined(_sources([Path(django.__file__).parent]))
    ours = _sources(CODE)
    own = _defined(ours)
    found = sorted(
        f"{path.relative_to(ROOT)}:{number}: {name}"
        for path in ours
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for name in USED.findall(line)
        if name in django_private and name not in own and name not in DOCUMENTED
    ) + [
        f"{path.relative_to(ROOT)}: {m}"
        for path in ours
        for m in UNDOCUMENTED.findall(path.read_text())
    ]
    assert not found, "private Django names used:\n" + "\n".join(found)


def test_the_check_finds_what_it_looks_for():
    """A name this project once used is among Django's private ones, and is seen where used."""
    assert "_get_page" in _defined(_sources([Path(django.__file__).parent]))
    assert USED.findall("return self._get_page(rows, number, self)") == ["_get_page"]
    assert UNDOCUMENTED.findall("with connection.wrap_database_errors:")
