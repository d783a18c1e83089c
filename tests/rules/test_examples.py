"""Every example of the spec folders (examples/, and examples-v2/ for crash-snapshot/2),
through the real command and through the engine.

The folders are read at test time (CI clones the repository with shared/ beside it); a missing
folder is a failure, not a skip, so a broken checkout cannot pass silently.
"""

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from settlements.rules import DEFAULT_POLICY, InvalidInput, parse_policy, parse_snapshot, settle

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO.parent / "shared" / "spec"
FOLDERS = ("examples", "examples-v2")


def _names() -> list[str]:
    return sorted(
        f"{folder}/{p.name.removesuffix('.snapshot.json')}"
        for folder in FOLDERS
        for p in (SPEC / folder).glob("*.snapshot.json")
    )


@pytest.mark.parametrize(("folder", "at_least"), [("examples", 31), ("examples-v2", 14)])
def test_the_examples_folder_is_there(folder, at_least):
    assert (SPEC / folder).is_dir(), f"spec examples not found at {SPEC / folder}"
    assert sum(1 for _ in (SPEC / folder).glob("*.snapshot.json")) >= at_least


def _load(name: str) -> tuple[Path, list[str], dict]:
    folder, stem = name.split("/")
    examples = SPEC / folder
    snapshot = examples / f"{stem}.snapshot.json"
    args = (examples / f"{stem}.args").read_text().split()
    args = [str(examples / a) if a.endswith(".json") else a for a in args]
    expected = json.loads((examples / f"{stem}.expected.json").read_text())
    return snapshot, args, expected


def _line_key(line: dict) -> tuple:
    return (line["player"], line["kind"], line["unit"], line["amount"], line["source"])


def _assert_matches(got: dict, expected: dict) -> None:
    for key, want in expected.items():
        if key == "lines":
            assert Counter(map(_line_key, got["lines"])) == Counter(map(_line_key, want))
        else:
            assert got[key] == want, key


def _in_process(snapshot: Path, args: list[str]) -> dict:
    options = dict(zip(args[::2], args[1::2], strict=True))
    policy = DEFAULT_POLICY
    if "--policy" in options:
        policy = parse_policy(Path(options["--policy"]).read_bytes())
    parsed = parse_snapshot(snapshot.read_bytes())
    return settle(parsed, decision=options.get("--decision"), policy=policy).to_dict()


EXAMPLE_NAMES = _names() or ["<no examples found>"]


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_in_the_engine(name):
    assert SPEC.is_dir(), f"spec examples not found at {SPEC}"
    snapshot, args, expected = _load(name)
    if "exit" in expected:
        with pytest.raises(InvalidInput) as rejected:
            _in_process(snapshot, args)
        assert set(expected["paths"]) <= {p.path for p in rejected.value.problems}
        return
    _assert_matches(_in_process(snapshot, args), expected)


@pytest.mark.slow  # a fresh interpreter and Django set-up per example
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_through_the_command(name):
    assert SPEC.is_dir(), f"spec examples not found at {SPEC}"
    snapshot, args, expected = _load(name)
    run = subprocess.run(
        [sys.executable, "manage.py", "settle", str(snapshot), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if "exit" in expected:
        assert run.returncode == expected["exit"] == 2, run.stderr
        assert run.stdout == ""
        lines = run.stderr.splitlines()
        for path in expected["paths"]:
            assert any(line.startswith(f"{path}: ") for line in lines), (path, run.stderr)
        return
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    _assert_matches(json.loads(run.stdout), expected)
