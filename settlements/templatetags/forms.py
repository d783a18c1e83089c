"""Helpers for showing a form's problems."""

from django import template

register = template.Library()


@register.filter
def fields_with_errors(form) -> list[tuple]:
    """(bound field, id of the control to jump to) for each field of ``form`` that carries an
    error and can be reached on the page; a group of radios jumps to its first one."""
    found = []
    for field in form:
        if field.errors and not field.is_hidden:
            anchor = field.id_for_label or next(
                (choice.id_for_label for choice in field.subwidgets), field.auto_id
            )
            found.append((field, anchor))
    return found
