"""The layers hold: import-linter checks the contracts of pyproject.toml ([tool.importlinter]),
so that a broken layer fails the tests as well as CI's lint step."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_import_contract_is_kept():
    # The command the CI runs, from the virtualenv running the tests; no cache, so a stale
    # graph never hides a new import.
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [lint_imports, "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
