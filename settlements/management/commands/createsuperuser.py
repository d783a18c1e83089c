"""Django's ``createsuperuser``, run in one transaction: the new account's superuser flag and
the event recording it are written together, as PostgreSQL requires (models.access_guards)."""

from django.contrib.auth.management.commands import createsuperuser
from django.db import transaction


class Command(createsuperuser.Command):
    def handle(self, *args, **options):
        with transaction.atomic(using=options["database"]):
            return super().handle(*args, **options)
