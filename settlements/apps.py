from django.apps import AppConfig


class SettlementsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "settlements"
    verbose_name = "Crash settlements"

    def ready(self) -> None:
        from settlements import auth, checks  # noqa: F401  (signal receivers, system checks)
