"""`manage.py settle` as a user runs it: a real process, its streams and its exit status."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .builders import encode, freeroll, regular

REPO = Path(__file__).resolve().parents[2]
WORKED_EXAMPLE = regular([60000, 30000, 10000] + [0] * 7, payouts=[5000, 3000, 2000])


def settle_command(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """A fresh process, as a user's shell starts it: slow (Python and Django start-up each time)."""
    return subprocess.run(
        [sys.executable, "manage.py", "settle", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        timeout=120,
    )


@pytest.mark.slow
def test_reads_standard_input_and_prints_only_json():
    run = settle_command("-", stdin=encode(WORKED_EXAMPLE))
    assert (run.returncode, run.stderr) == (0, b"")
    document = json.loads(run.stdout)
    assert [row["cash"] for row in document["payouts"]] == [3867, 3267, 2866]


@pytest.mark.slow
def test_every_problem_is_a_path_first_line_and_stdout_stays_empty(tmp_path):
    bad = regular([5, -1, 0], payouts=[1])
    bad["tournament"]["currency"] = "usd"
    policy = tmp_path / "policy.json"
    policy.write_text('{"pre_pct": 50, "late_formula": "chip_size"}')
    run = settle_command("-", "--policy", str(policy), stdin=encode(bad))
    assert (run.returncode, run.stdout) == (2, b"")
    paths = {line.split(": ", 1)[0] for line in run.stderr.decode().splitlines()}
    assert paths == {
        "--policy.early_pct",
        "--policy.late_formula",
        "tournament.currency",
        "players[1].chips",
        "tournament.payouts",
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "first_path"),
    [
        (["missing.json"], "$"),
        (["-", "--policy", "missing.json"], "--policy"),
        (["-", "--decision", "reschedule"], "--decision"),
        (["-", "--decison", "reschedule"], "--decison"),
        (["-", "--decision"], "--decision"),
        ([], "SNAPSHOT"),
    ],
)
def test_unreadable_files_and_usage_errors_exit_2_path_first(args, first_path, tmp_path):
    run = settle_command(*args, stdin=encode(WORKED_EXAMPLE))
    assert (run.returncode, run.stdout) == (2, b"")
    assert run.stderr.decode().splitlines()[0].startswith(f"{first_path}: ")


@pytest.mark.slow
def test_a_pending_decision_lists_the_options():
    run = settle_command("-", stdin=encode(freeroll([5] * 18 + [0, 0])))
    document = json.loads(run.stdout)
    assert (document["remedy"], document["decision_options"]) == (
        None,
        ["reschedule", "no_reschedule"],
    )
    run = settle_command(
        "-", "--decision", "no_reschedule", stdin=encode(freeroll([5] * 18 + [0, 0]))
    )
    assert json.loads(run.stdout)["decision"] == "no_reschedule"


def test_call_command_raises_with_the_problems():
    from django.core.management import call_command

    from settlements.management.commands.settle import SettleProblems

    with pytest.raises(SettleProblems) as failure:
        call_command("settle", str(REPO / "no-such-snapshot.json"))
    assert failure.value.returncode == 2
    assert [p.path for p in failure.value.problems] == ["$"]
