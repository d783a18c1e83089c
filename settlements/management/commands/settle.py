"""`manage.py settle`: a settlement computed from a snapshot file, printed as JSON.

The database is never touched. Any problem becomes one "path: message" line on standard
error, nothing on standard output, and exit status 2 (SNAPSHOT.md).
"""

import re
import sys

from django.core.management.base import BaseCommand, CommandError

from settlements.rules import (
    DEFAULT_POLICY,
    InvalidInput,
    Problem,
    parse_policy,
    parse_snapshot,
    settle,
)

EXIT_PROBLEMS = 2


class SettleProblems(CommandError):
    """Raised to the caller of call_command(); on the command line it becomes stderr lines."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(map(str, problems)), returncode=EXIT_PROBLEMS)


def _read(path: str, root: str, what: str) -> tuple[bytes | None, list[Problem]]:
    try:
        if path == "-":
            return sys.stdin.buffer.read(), []
        with open(path, "rb") as handle:
            return handle.read(), []
    except OSError as error:
        reason = error.strerror or str(error)
        return None, [Problem(root, f"cannot read the {what} file {path!r}: {reason}")]


_ARGUMENT = re.compile(r"^argument (?P<name>[^:]+): (?P<message>.*)$", re.S)
_UNRECOGNIZED = "unrecognized arguments: "
_REQUIRED = "the following arguments are required: "


def _usage_problems(message: str) -> list[Problem]:
    """argparse's complaint rewritten path-first, like every other problem of this command."""
    if message.startswith(_UNRECOGNIZED):
        return [
            Problem(argument, "is not an option of settle (see manage.py settle --help)")
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


class Command(BaseCommand):
    help = (
        "Compute the settlement of a crashed tournament from its snapshot (JSON, or - for "
        "standard input) and print it as JSON. Touches no database."
    )
    # The engine needs neither the database nor the project's system checks; skipping them
    # keeps a 300,000-entrant settlement inside its time budget.
    requires_system_checks: list[str] = []

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        default_error = parser.error

        def error(message):
            if not parser.called_from_command_line:
                default_error(message)
            for problem in _usage_problems(message):
                sys.stderr.write(f"{problem}\n")
            sys.exit(EXIT_PROBLEMS)

        parser.error = error
        return parser

    def add_arguments(self, parser):
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

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except SettleProblems as failure:
            if not getattr(self, "_called_from_command_line", False):
                raise
            for problem in failure.problems:
                self.stderr.write(str(problem), style_func=str)
            sys.exit(EXIT_PROBLEMS)

    def handle(self, *args, snapshot, decision, policy, **options):
        problems: list[Problem] = []
        settings = DEFAULT_POLICY
        if policy is not None:
            data, problems = _read(policy, "--policy", "policy")
            if data is not None:
                try:
                    settings = parse_policy(data)
                except InvalidInput as error:
                    problems += error.problems
        data, unreadable = _read(snapshot, "$", "snapshot")
        problems += unreadable
        parsed = None
        if data is not None:
            try:
                parsed = parse_snapshot(data)
            except InvalidInput as error:
                problems += error.problems
        if problems:
            raise SettleProblems(problems)
        try:
            result = settle(parsed, decision=decision, policy=settings)
        except InvalidInput as error:
            raise SettleProblems(error.problems) from None
        document = result.to_json() + b"\n"
        buffer = getattr(self.stdout, "buffer", None)
        if buffer is None:
            self.stdout.write(document.decode(), ending="")
        else:
            self.stdout.flush()
            buffer.write(document)
            buffer.flush()
