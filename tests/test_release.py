"""The release that cached page fragments are keyed by (crashdesk/release.py)."""

import shutil
from pathlib import Path

from django.conf import settings
from django.template import RequestContext, Template
from django.test import RequestFactory

from crashdesk.release import SOURCES, source_digest

ROOT = Path(settings.BASE_DIR)


def _copy(tmp_path: Path) -> Path:
    for folder in SOURCES:
        shutil.copytree(
            ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tmp_path


def test_a_changed_template_or_module_is_another_release(tmp_path):
    copy = _copy(tmp_path)
    first = source_digest(copy)
    assert source_digest(copy) == first

    template = copy / "templates/settlements/settlement_review.html"
    template.write_text(template.read_text() + "<!-- changed -->")
    second = source_digest(copy)
    assert second != first

    module = copy / "settlements/templatetags/money.py"
    module.write_text(module.read_text() + "\n# changed\n")
    assert source_digest(copy) not in (first, second)


def test_every_page_is_given_the_release(settings):
    settings.CODE_RELEASE = "2026.12-rc1"
    context = RequestContext(RequestFactory().get("/"))
    assert Template("{{ code_release }}").render(context) == "2026.12-rc1"
