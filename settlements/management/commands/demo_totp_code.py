"""``manage.py demo_totp_code``: the current second-factor code of the demo's users."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from settlements.access.second_factor import totp_code
from settlements.management.commands.seed_demo import DEMO_TOTP_SECRET


class Command(BaseCommand):
    help = "Print the current TOTP code of the demo users' published secret (DEBUG only)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError("demo_totp_code only runs with DEBUG on, like seed_demo.")
        self.stdout.write(totp_code(DEMO_TOTP_SECRET))
