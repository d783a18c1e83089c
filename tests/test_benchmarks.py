"""CI runs every benchmark once at its smallest size (.ci/run), so that none can break unseen:
each must take --smallest, and the loop must find each."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The benchmarks' shared helpers start with an underscore; .ci/run's loop leaves them out alike.
PATTERN = "benchmarks/[!_]*.py"
BENCHMARKS = sorted(ROOT.glob(PATTERN))


def test_ci_runs_every_benchmark_at_its_smallest():
    assert f"for benchmark in {PATTERN}; do" in (ROOT / ".ci" / "run").read_text()
    assert len(BENCHMARKS) > 1


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda path: path.name)
def test_every_benchmark_takes_smallest(script):
    shown = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "--smallest" in shown.stdout
