"""Settling a snapshot file from the command line, with the engine alone.

``python -m settlements.rules SNAPSHOT [--decision OPTION] [--policy POLICY.json]`` imports no
Django (nothing but this package, the standard library and msgspec), so it starts in a tenth
of the time ``manage.py settle`` takes to set Django up. Both run ``settle_files`` and
``usage_problems`` here, so their output is the same byte for byte: the settlement as JSON on
standard output; or every problem as one "path: message" line on standard error, nothing on
standard output, and exit status 2 (SNAPSHOT.md).
"""

import argparse
import re
import sys

from .errors import InvalidInput, Problem
from .policy import DEFAULT_POLICY, parse_policy
from .remedies import settle
from .snapshot import parse_snapshot

EXIT_PROBLEMS = 2

DESCRIPTION = (
    "Compute the settlement of a crashed tournament from its snapshot (JSON, or - for "
    "standard input) and print it as JSON. Touches no database."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("snapshot", metavar="SNAPSHOT", help="snapshot file, or - for stdin")
    parser.add_argument(
        "--decision",
        metavar="OPTION",
        help="the decision for a case that needs one (its options are listed when absent)",
    )
    parser.add_argument(
        "--policy",
        metavar="POLICY.json",
        help="site policy: stage thresholds and the late-stage formula",
    )


def read_input(path: str, root: str, what: str) -> tuple[bytes | None, list[Problem]]:
    try:
        if path == "-":
            return sys.stdin.buffer.read(), []
        with open(path, "rb") as handle:
            return handle.read(), []
    except OSError as error:
        reason = error.strerror or str(error)
        return None, [Problem(root, f"cannot read the {what} file {path!r}: {reason}")]


def settle_files(*, snapshot: str, decision: str | None, policy: str | None) -> bytes:
    """The settlement document (JSON and a newline) of the snapshot file at ``snapshot``;
    ``InvalidInput`` with every problem found in either file or in the decision."""
    problems: list[Problem] = []
    settings = DEFAULT_POLICY
    if policy is not None:
        data, problems = read_input(policy, "--policy", "policy")
        if data is not None:
            try:
                settings = parse_policy(data)
            except InvalidInput as error:
                problems += error.problems
    data, unreadable = read_input(snapshot, "$", "snapshot")
    problems += unreadable
    parsed = None
    if data is not None:
        try:
            parsed = parse_snapshot(data)
        except InvalidInput as error:
            problems += error.problems
    if problems:
        raise InvalidInput(problems)
    return settle(parsed, decision=decision, policy=settings).to_json() + b"\n"


_ARGUMENT = re.compile(r"^argument (?P<name>[^:]+): (?P<message>.*)$", re.S)
_UNRECOGNIZED = "unrecognized arguments: "
_REQUIRED = "the following arguments are required: "


def usage_problems(message: str, program: str) -> list[Problem]:
    """argparse's complaint rewritten path-first, like every other problem of the command."""
    if message.startswith(_UNRECOGNIZED):
        return [
            Problem(argument, f"is not an option of settle (see {program} --help)")
            for argument in message.removeprefix(_UNRECOGNIZED).split()
        ]
    if message.startswith(_REQUIRED):
        return [
            Problem(name.strip(), "is required: a snapshot file, or - for standard input")
            for name in message.removeprefix(_REQUIRED).split(",")
        ]
    if found := _ARGUMENT.match(message):
        return [Problem(found["name"].split("/")[-1], found["message"])]
    return [Problem("settle", message)]


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        for problem in usage_problems(message, self.prog):
            sys.stderr.write(f"{problem}\n")
        sys.exit(EXIT_PROBLEMS)


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m settlements.rules", description=DESCRIPTION)
    add_arguments(parser)
    options = parser.parse_args(argv)
    try:
        document = settle_files(
            snapshot=options.snapshot, decision=options.decision, policy=options.policy
        )
    except InvalidInput as error:
        sys.stderr.write("".join(f"{problem}\n" for problem in error.problems))
        return EXIT_PROBLEMS
    sys.stdout.buffer.write(document)
    sys.stdout.buffer.flush()
    return 0
