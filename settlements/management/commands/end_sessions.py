"""`manage.py end_sessions USERNAME`: sign a user out of every browser at once (a lost laptop,
a leaver), as an administrator on the server."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from settlements.services.sessions import sessions_of_user_end


class Command(BaseCommand):
    help = "End every session of a user: they sign in again wherever they were."

    def add_arguments(self, parser):
        parser.add_argument("username", metavar="USERNAME")

    def handle(self, *args, username, **options):
        users = get_user_model()
        try:
            user = users.objects.get_by_natural_key(username)
        except users.DoesNotExist:
            raise CommandError(f"There is no user {username!r}.") from None
        ended = sessions_of_user_end(user=user)
        self.stdout.write(f"Ended {ended} session{'s' if ended != 1 else ''} of {username}.")
