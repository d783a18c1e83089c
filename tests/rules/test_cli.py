"""``python -m settlements.rules``: the engine's own command, without Django.

It must say exactly what ``manage.py settle`` says on every spec example (the same code runs
both), and must not load Django to say it.
"""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from settlements.management.commands.settle import SettleProblems
from settlements.rules import cli

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO.parent / "shared" / "spec"
FOLDERS = [SPEC / "examples", SPEC / "examples-v2"]
EXAMPLES = sorted(path for folder in FOLDERS for path in folder.glob("*.snapshot.json"))


def test_both_folders_of_examples_are_there():
    assert all(folder.is_dir() for folder in FOLDERS), f"spec examples not found in {SPEC}"
    assert len(EXAMPLES) >= 40


def arguments(snapshot: Path) -> list[str]:
    args = Path(str(snapshot).replace(".snapshot.json", ".args")).read_text().split()
    return [str(snapshot), *(str(snapshot.parent / a) if a.endswith(".json") else a for a in args)]


def by_django(args: list[str]) -> tuple[int, str, str]:
    out = StringIO()
    try:
        call_command("settle", *args, stdout=out)
    except SettleProblems as failure:
        return 2, "", "".join(f"{problem}\n" for problem in failure.problems)
    return 0, out.getvalue(), ""


def by_engine_alone(args: list[str], capsysbinary) -> tuple[int, str, str]:
    status = cli.main(args)
    out, err = capsysbinary.readouterr()
    return status, out.decode(), err.decode()


@pytest.mark.parametrize("snapshot", EXAMPLES, ids=lambda path: path.name)
def test_the_same_output_as_manage_py_settle(snapshot, capsysbinary):
    args = arguments(snapshot)
    assert by_engine_alone(args, capsysbinary) == by_django(args)


def run(*command: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *command], cwd=REPO, input=stdin, capture_output=True, timeout=120
    )


def one_of_each_outcome() -> list[Path]:
    """The first example of each folder that settles and the first it refuses (its expected
    file gives the exit status): each way a fresh process can end, for each version."""
    chosen: dict[tuple[Path, int], Path] = {}
    for snapshot in EXAMPLES:
        expected = json.loads(
            Path(str(snapshot).replace(".snapshot.json", ".expected.json")).read_text()
        )
        chosen.setdefault((snapshot.parent, expected.get("exit", 0)), snapshot)
    return list(chosen.values())


@pytest.mark.slow
def test_the_same_bytes_and_exit_status_as_manage_py_settle_in_a_fresh_process():
    """Every example is compared in this process above; here, at a Django start-up apiece,
    one of each outcome of each version, for what only a whole process shows (its exit
    status, the bytes that reach its streams)."""
    chosen = one_of_each_outcome()
    assert len(chosen) == 2 * len(FOLDERS)
    for snapshot in chosen:
        args = arguments(snapshot)
        alone = run("-m", "settlements.rules", *args)
        django = run("manage.py", "settle", *args)
        assert (alone.returncode, alone.stdout, alone.stderr) == (
            django.returncode,
            django.stdout,
            django.stderr,
        ), snapshot.name


LOADED = """
import runpy, sys
sys.argv = ["settlements.rules", *sys.argv[1:]]
try:
    runpy.run_module("settlements.rules", run_name="__main__", alter_sys=True)
except SystemExit as exit:
    status = exit.code
print(status, sorted({name.split(".")[0] for name in sys.modules}), file=sys.stderr)
"""


@pytest.mark.slow
def test_settling_loads_no_django():
    run_ = run("-c", LOADED, "-", stdin=EXAMPLES[0].read_bytes())
    status, loaded = run_.stderr.decode().splitlines()[-1].split(" ", 1)
    assert status == "0" and run_.stdout.startswith(b"{")
    assert "'settlements'" in loaded
    assert "'django'" not in loaded and "'crashdesk'" not in loaded


@pytest.mark.slow
def test_usage_errors_name_the_command_path_first():
    bad = run("-m", "settlements.rules", "-", "--decison", "x")
    assert (bad.returncode, bad.stdout) == (2, b"")
    assert bad.stderr.decode().startswith("--decison: is not an option of settle (see python -m")
    missing = run("-m", "settlements.rules")
    assert missing.returncode == 2 and missing.stderr.decode().startswith("SNAPSHOT: is required")
