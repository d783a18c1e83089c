"""``python -m settlements.audit verify ARCHIVE [--head FILE]``: verify an incident's sealed
record with no database. Prints what it checked and "Verified." (exit 0), or "NOT VERIFIED:"
and the first problem (exit 1); a usage mistake exits 2."""

import argparse
import json
import sys

from settlements.audit.verify import Problem, verify


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m settlements.audit",
        description="Verify an incident's sealed record exported from CrashDesk, offline.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("verify", help="check every seal in the archive")
    check.add_argument("archive", metavar="ARCHIVE", help="the exported .zip")
    check.add_argument(
        "--head",
        metavar="FILE",
        help="a head exported by `verify_audit --export-head`: it must be this desk's",
    )
    options = parser.parse_args(argv)
    try:
        head = _read_head(options.head) if options.head else None
        report = verify(options.archive, head=head)
    except Problem as problem:
        print(f"NOT VERIFIED: {problem}.", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 - any input the checks above did not foresee
        print(
            f"NOT VERIFIED: the archive cannot be read ({type(error).__name__}: {error}).",
            file=sys.stderr,
        )
        return 1
    print("\n".join(report.lines()))
    print("Verified.")
    return 0


def _read_head(name: str) -> dict:
    try:
        with open(name, "rb") as handle:
            return json.load(handle)
    except (OSError, ValueError) as error:
        raise Problem(f"Cannot read the head file {name} ({error})") from None


if __name__ == "__main__":
    sys.exit(main())
