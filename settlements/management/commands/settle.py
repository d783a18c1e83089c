"""`manage.py settle`: a settlement computed from a snapshot file, printed as JSON.

The same code as ``python -m settlements.rules`` (settlements.rules.cli), which does without
Django's start-up. The database is never touched. Any problem becomes one "path: message" line
on standard error, nothing on standard output, and exit status 2 (SNAPSHOT.md).
"""

import sys

from django.core.management.base import BaseCommand, CommandError

from settlements.rules import InvalidInput, Problem
from settlements.rules.cli import (
    DESCRIPTION,
    EXIT_PROBLEMS,
    add_arguments,
    settle_files,
    usage_problems,
)


class SettleProblems(CommandError):
    """Raised to the caller of call_command(); on the command line it becomes stderr lines."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(map(str, problems)), returncode=EXIT_PROBLEMS)


class Command(BaseCommand):
    help = DESCRIPTION
    # The engine needs neither the database nor the project's system checks; skipping them
    # keeps a 300,000-entrant settlement inside its time budget.
    requires_system_checks: list[str] = []

    def create_parser(self, prog_name, subcommand, **kwargs):
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        default_error = parser.error

        def error(message):
            if not parser.called_from_command_line:
                default_error(message)
            for problem in usage_problems(message, "manage.py settle"):
                sys.stderr.write(f"{problem}\n")
            sys.exit(EXIT_PROBLEMS)

        parser.error = error
        return parser

    def add_arguments(self, parser):
        add_arguments(parser)

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
        try:
            document = settle_files(snapshot=snapshot, decision=decision, policy=policy)
        except InvalidInput as error:
            raise SettleProblems(error.problems) from None
        buffer = getattr(self.stdout, "buffer", None)
        if buffer is None:
            self.stdout.write(document.decode(), ending="")
        else:
            self.stdout.flush()
            buffer.write(document)
            buffer.flush()
