"""Forms with a confirmation step, and the confirmation pages of approve and reject.

The first post checks the form and, when it is valid, shows what will happen with every
value carried in hidden fields; the second post, sent by the "confirm" button (step=confirm),
checks it again and calls the service. The "change" button (step=edit) brings the form back
filled in. Nothing is stored between the two posts, so a reload or a second tab is harmless.
The template side is settlements/includes/confirm_actions.html.
"""

from collections.abc import Callable

from django.contrib import messages

from settlements.errors import DomainError, NotAllowed
from settlements.views.rendering import go_to, render_invalid, render_page

CONFIRM = "confirm"
EDIT = "edit"


def step(request) -> str:
    """The step a post asks for: CONFIRM, EDIT, or "" for the first post of a form."""
    value = request.POST.get("step", "")
    return value if value in (CONFIRM, EDIT) else ""


def post_with_confirmation(
    request,
    *,
    template: str,
    context: dict,
    form,
    partial: str,
    perform: Callable[[dict], tuple[str, str]],
    restate: Callable[[dict], None] | None = None,
):
    """The answer to a post of a form with a confirmation step (the form bound to it).

    An invalid form comes back with its errors. A valid one is restated for confirmation
    (`context["confirming"]`; `restate(context)` adds what the statement needs), or comes back
    to be changed (step=edit), or, confirmed, goes to `perform(cleaned_data)`: it calls the
    service and returns the success message and the address to go to next. A refusal by the
    service shows on the form.
    """
    if not form.is_valid():
        return render_invalid(request, template, context, partial=partial)
    current = step(request)
    if current == CONFIRM:
        try:
            message, url = perform(form.cleaned_data)
        except DomainError as error:
            form.add_domain_error(error)
            return render_invalid(request, template, context, partial=partial)
        messages.success(request, message)
        return go_to(request, url)
    context["confirming"] = current != EDIT
    if context["confirming"] and restate is not None:
        restate(context)
    return render_page(request, template, context, partial=partial)


def answer_review(
    request,
    *,
    template: str,
    context: dict,
    form,
    perform: Callable[[str], object],
    done_message: str,
    done_url: str,
    own_work: bool,
):
    """The confirmation page of an approve or reject, and the answer itself.

    `perform(reason)` calls the service. A refusal of the reviewer's own work is shown on the
    page with 403, so a forged post meets the same answer as the hidden button.
    """
    if request.method == "POST":
        if form.is_valid():
            try:
                perform(form.cleaned_data["reason"])
            except NotAllowed as error:
                if request.htmx:
                    # htmx does not swap a 403; the page itself shows the refusal.
                    return go_to(request, request.path)
                context["refusal"] = error.message
                return render_page(request, template, context, partial="actions", status=403)
            except DomainError as error:
                form.add_domain_error(error)
            else:
                messages.success(request, done_message)
                return go_to(request, done_url)
        return render_invalid(request, template, context, partial="actions")
    return render_page(
        request, template, context, partial="actions", status=403 if own_work else 200
    )
