"""Domain errors raised by the workflow services.

Each message is written for the person at the screen: views and the API show it as is.
"""


class DomainError(Exception):
    """A business rule refused the request; ``field`` names the input it concerns, if any."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        return self.message


class NotAllowed(DomainError):
    """The actor's role does not permit this action (or it is their own work to approve)."""


class InvalidTransition(DomainError):
    """The record is not in a state where this action makes sense (e.g. approved twice)."""


class Duplicate(DomainError):
    """The record already exists (e.g. the same tournament's snapshot posted twice)."""

    def __init__(self, message: str, *, existing=None, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.existing = existing


class SecondFactorStale(Exception):
    """The action moves money and the actor's last proof of their second factor is older than
    ``STEP_UP_MAX_AGE`` (``access.permissions.step_up``). Not a ``DomainError`` on purpose: a
    page must not show it on its form but send the person to prove their factor again
    (``access.second_factor.SecondFactorMiddleware``), and the API refuses it with 403."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message
