"""Benchmark: this engine against an earlier revision's, in the same run, on 300,000 entrants.

Run from the project root:  .venv/bin/python benchmarks/engine_ab.py [--against REV] [--entrants N]
    [--smallest]

REV (default HEAD~1) is a git revision whose `settlements/rules` is extracted to a temporary
folder and imported beside this one (the engine has no imports outside its package). Each
scenario of engine_settle.py is timed in this process, parse + settle + JSON encoding with the
default policy, alternating the two engines, best CPU time of RUNS each; both must write the
same bytes.
A change that keeps the default rulebook's settlements must stay within 5 % of the earlier
revision (issue 40). ``--smallest`` (CI) compares 1,000 entrants against HEAD, the committed
engine, which must then write the same bytes as this working tree.
"""

import argparse
import importlib
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine_settle import scenarios  # noqa: E402

import settlements.rules as current  # noqa: E402

RUNS = 7


def earlier_engine(revision: str, folder: Path):
    """The rules package of `revision`, imported under the name `rules_then`."""
    archive = subprocess.run(
        ["git", "archive", revision, "settlements/rules"], cwd=ROOT, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    (folder / "settlements" / "rules").rename(folder / "rules_then")
    sys.path.insert(0, str(folder))
    return importlib.import_module("rules_then")


def once(engine, data: bytes, decision: str | None) -> tuple[float, bytes]:
    # CPU time: the benchmark machine is shared, and waiting for a core is not the engine's.
    start = time.process_time()
    document = engine.settle(engine.parse_snapshot(data), decision=decision).to_json()
    return time.process_time() - start, document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="HEAD~1")
    parser.add_argument("--entrants", type=int, default=300_000)
    parser.add_argument("--smallest", action="store_true", help="1,000 entrants against HEAD")
    args = parser.parse_args()
    if args.smallest:
        args.against, args.entrants = "HEAD", 1000
    with tempfile.TemporaryDirectory() as folder:
        then = earlier_engine(args.against, Path(folder))
        print(f"{'scenario':<17} {args.against:>10} {'now':>8} {'ratio':>6}")
        for name, path, extra in scenarios(Path(folder), args.entrants):
            data = path.read_bytes()
            decision = extra[1] if extra else None
            best_then = best_now = float("inf")
            for run in range(RUNS):
                # Alternating which goes first, so that neither always meets a warmer cache.
                order = ("then", "now") if run % 2 else ("now", "then")
                runs = {
                    who: once(then if who == "then" else current, data, decision) for who in order
                }
                (elapsed_then, document_then), (elapsed_now, document_now) = (
                    runs["then"],
                    runs["now"],
                )
                if document_then != document_now:
                    raise SystemExit(f"{name}: the two engines write different settlements")
                best_then, best_now = min(best_then, elapsed_then), min(best_now, elapsed_now)
            print(f"{name:<17} {best_then:>9.3f}s {best_now:>7.3f}s {best_now / best_then:>6.3f}")


if __name__ == "__main__":
    main()
