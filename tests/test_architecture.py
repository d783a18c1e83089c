"""The shape the code keeps as it grows: modules a maintainer can read, functions that fit on a
screen, markup only in templates, and the formatter's layout but for an aligned table. Import
layers are held by import-linter in CI."""

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP_CODE = [
    path
    for folder in ("settlements", "crashdesk")
    for path in sorted((ROOT / folder).rglob("*.py"))
    if "migrations" not in path.parts
]
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
# Markup belongs to templates; template tags may build a cell with format_html.
MARKUP = re.compile(r"<(tr|td|th|a|span|div|table|li)[\s>]")
NO_MARKUP_IN = ("views", "selectors", "services", "api", "statements")


def relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", APP_CODE, ids=relative)
def test_a_module_is_short_enough_to_read(path):
    assert len(path.read_text().splitlines()) <= MAX_MODULE_LINES


@pytest.mark.parametrize("path", APP_CODE, ids=relative)
def test_every_function_fits_on_a_screen(path):
    too_long = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            if node.end_lineno - start + 1 > MAX_FUNCTION_LINES:
                too_long.append(f"{node.name} ({node.end_lineno - start + 1} lines)")
    assert not too_long


@pytest.mark.parametrize(
    "path",
    [p for p in APP_CODE if set(p.relative_to(ROOT).parts[1:-1]) & set(NO_MARKUP_IN)],
    ids=relative,
)
def test_views_selectors_and_services_draw_no_markup(path):
    strings = [
        node.value
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    assert not [s for s in strings if MARKUP.search(s)]


@pytest.mark.parametrize("package", ["services", "selectors", "selectors/payments"])
def test_the_service_and_selector_packages_re_export_nothing(package):
    """A caller imports the module that holds a service or a read (issue 42): a package that
    imported its modules would hide where a name lives and load every module with any one."""
    tree = ast.parse((ROOT / "settlements" / package / "__init__.py").read_text())
    imports = [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]
    assert not imports, f"line {imports[0].lineno} of settlements/{package}/__init__.py"


VIEWS = sorted((ROOT / "settlements" / "views").glob("*.py"))


@pytest.mark.parametrize("path", VIEWS, ids=relative)
def test_views_read_through_selectors(path):
    """A view asks a selector for its rows (issue 42): a manager or a query expression in a
    view is a read that no selector test sees and no other page can share."""
    tree = ast.parse(path.read_text())
    reads = [
        f"line {node.lineno}: .objects"
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "objects"
    ] + [
        f"line {node.lineno}: imports {node.module}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "django.db.models"
    ]
    assert not reads


@pytest.mark.parametrize("path", APP_CODE, ids=relative)
def test_nothing_turns_the_garbage_collector_off(path):
    """Requests and jobs run with the collector on: turning it off to save milliseconds leaves
    a worker's memory to grow with whatever a request leaves in cycles (issue 42). The WSGI
    module's ``gc.freeze()`` only moves what was loaded at start out of its reach."""
    calls = [
        node.lineno
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in {"disable", "set_threshold"}
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "gc"
    ]
    assert not calls


TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))
FRAGMENT_CACHE = re.compile(r"{%\s*cache\s[^%]*%}")


@pytest.mark.parametrize("path", TEMPLATES, ids=relative)
def test_every_cached_fragment_names_its_cache_and_is_keyed_by_the_release(path):
    """Fragments go to "pages" or "rows" (settings.CACHES), each process's memory: what costs a
    whole settlement to work out is kept in the shared cache as data (views.kept.shared), not
    as markup, so that a fragment read costs no query."""
    for tag in FRAGMENT_CACHE.findall(path.read_text()):
        assert re.search(r'code_release using="(pages|rows)" %}$', tag), tag


CACHED_FRAGMENT = re.compile(r"({%\s*cache\s[^%]*%})(.*?){%\s*endcache\s*%}", re.DOTALL)
INCLUDED = re.compile(r"""{%\s*include\s+["']([^"'#]+)""")


def _with_includes(markup: str, seen=()) -> str:
    """``markup`` followed by every template it includes, and theirs in turn."""
    parts = [markup]
    for name in INCLUDED.findall(markup):
        if name not in seen:
            parts.append(_with_includes((ROOT / "templates" / name).read_text(), (*seen, name)))
    return "".join(parts)


@pytest.mark.parametrize("path", TEMPLATES, ids=relative)
def test_a_cached_fragment_that_writes_times_is_keyed_by_the_readers_zone(path):
    """Times are written in each reader's zone (templatetags.timezones): a fragment kept with
    one reader's times must not be shown to a reader in another zone."""
    for tag, body in CACHED_FRAGMENT.findall(path.read_text()):
        if re.search(r"\|\s*when\b|{%\s*current_zone", _with_includes(body)):
            assert " time_zone " in tag, tag


# Formatting is ruff's (issue 42): a statement keeps the layout it was written in only where a
# table reads better aligned than one item a line. The files allowed a marker, and why.
FORMATTED_BY_HAND = {
    "tests/db/test_tamper_matrix.py": "SEALED: one row per tampering, its SQL under its name",
}
FORMAT_MARKER = re.compile(r"\bfmt:\s*(?:skip|off)\b")
# Every Python file of the project, not those of hidden folders such as .venv.
PYTHON = sorted(
    path
    for top in ROOT.iterdir()
    if not top.name.startswith(".")
    for path in ([top] if top.is_file() else top.rglob("*.py"))
    if path.suffix == ".py"
)


def format_markers(source: str) -> int:
    """The comments in ``source`` that stop ruff from formatting a statement."""
    return sum(
        1
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT and FORMAT_MARKER.search(token.string)
    )


def test_only_an_aligned_table_is_kept_from_the_formatter():
    marked = {relative(path) for path in PYTHON if format_markers(path.read_text())}
    assert marked == set(FORMATTED_BY_HAND)


def test_the_formatter_check_sees_markers_in_comments_only():
    assert format_markers("rows = [1,  2]  # fmt: skip\n") == 1
    assert format_markers("# fmt: off\nrows = [1,  2]\n# fmt: on\n") == 1
    assert format_markers('words = "# fmt: skip"\n') == 0
