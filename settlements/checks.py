"""System checks: configuration that would make CrashDesk settle by the wrong rules."""

from django.conf import settings
from django.core.checks import Error, register

from settlements.site_policy import VARIABLES, policy_problems


@register()
def crash_policy_check(app_configs, **kwargs) -> list[Error]:
    """A bad crash policy stops `check`, `migrate` and `runserver` before any case is loaded."""
    return [
        Error(
            problem,
            hint=(
                f"The crash policy comes from {', '.join(VARIABLES.values())}; "
                "unset a variable to keep the published default."
            ),
            id="settlements.E001",
        )
        for problem in policy_problems(settings.CRASH_POLICY)
    ]
