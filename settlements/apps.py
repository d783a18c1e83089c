from django.apps import AppConfig
from django.db import connections
from django.db.models.signals import post_migrate


def _harden_trigger_ignore(using, **kwargs) -> None:
    from settlements.triggers import harden_ignore

    harden_ignore(connections[using])


class SettlementsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "settlements"
    verbose_name = "Crash settlements"

    def ready(self) -> None:
        from settlements import (  # noqa: F401  (signal receivers, system checks)
            checks,
            middleware,  # the time zone taken at sign-in
            tasks,  # queues the tasks of a job's run
        )
        from settlements.access import refusals  # noqa: F401  (receivers)
        from settlements.services import access_changes, sessions  # noqa: F401  (receivers)

        # Each trigger a migration installs rewrites pgtrigger's ignore function; this runs
        # after the last of them.
        post_migrate.connect(_harden_trigger_ignore, sender=self)
