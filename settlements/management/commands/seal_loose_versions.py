"""`manage.py seal_loose_versions`: seal the history versions that no event has sealed
(services.history_sweep), once, or every HISTORY_SWEEP_SECONDS with --repeat (run it beside
the workers). Recorded without a CrashDesk user as the actor."""

import time

from django.conf import settings
from django.core.management.base import BaseCommand

from settlements.services.history_sweep import history_sweep


class Command(BaseCommand):
    help = "Seal the history versions written outside the services."

    def add_arguments(self, parser):
        parser.add_argument(
            "--repeat",
            action="store_true",
            help="go on sealing every HISTORY_SWEEP_SECONDS until stopped",
        )

    def handle(self, *args, repeat: bool, **options):
        while True:
            event = history_sweep()
            if event is None:
                self.stdout.write("No loose history versions.")
            else:
                records = sorted(event.data["records"].items())
                counts = ", ".join(f"{n} {name}" for name, n in records)
                self.stdout.write(f"Event #{event.pk} sealed the versions of {counts}.")
            if not repeat:
                return
            time.sleep(settings.HISTORY_SWEEP_SECONDS)
