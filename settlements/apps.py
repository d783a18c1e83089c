from django.apps import AppConfig


class SettlementsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "settlements"
    verbose_name = "Crash settlements"

    def ready(self) -> None:
        from settlements import (
            checks,  # noqa: F401  (registers the system checks)
            middleware,  # noqa: F401  (the time zone taken at sign-in)
        )
