"""Block until the configured database accepts connections, or give up after DB_WAIT_SECONDS.

A container often starts before its database is ready; failing fast there would only make the
orchestrator restart it in a loop.
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "crashdesk.settings")

import django  # noqa: E402

django.setup()

from django.db import OperationalError, connection  # noqa: E402


def main() -> int:
    deadline = time.monotonic() + float(os.environ.get("DB_WAIT_SECONDS", "60"))
    while True:
        try:
            connection.ensure_connection()
        except OperationalError as exc:
            if time.monotonic() >= deadline:
                print(f"Database still unreachable, giving up: {exc}", file=sys.stderr)
                return 1
            time.sleep(1)
        else:
            connection.close()
            return 0


if __name__ == "__main__":
    sys.exit(main())
