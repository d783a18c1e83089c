"""Forms with a confirmation step.

The first post checks the form and, when it is valid, shows what will happen with every
value carried in hidden fields; the second post, sent by the "confirm" button (step=confirm),
checks it again and calls the service. The "change" button (step=edit) brings the form back
filled in. Nothing is stored between the two posts, so a reload or a second tab is harmless.
"""

CONFIRM = "confirm"
EDIT = "edit"


def step(request) -> str:
    """The step a post asks for: CONFIRM, EDIT, or "" for the first post of a form."""
    value = request.POST.get("step", "")
    return value if value in (CONFIRM, EDIT) else ""
