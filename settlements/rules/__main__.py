"""``python -m settlements.rules``: settle a snapshot file without Django (see ``cli``)."""

import sys

from .cli import main

sys.exit(main())
