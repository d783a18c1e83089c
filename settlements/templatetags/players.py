"""Player ids shown exactly (look-alike and invisible characters written out beside them), and
links to a player's statement."""

from django import template
from django.template.loader import get_template
from django.urls import reverse
from django.utils.html import conditional_escape
from django.utils.http import urlencode
from django.utils.safestring import mark_safe

from settlements import player_ids, statements

register = template.Library()


PLAYER_ID_TEMPLATE = "settlements/includes/player_id.html"
_MARK = "\x00player\x00"


@register.simple_tag
def player_id(player: str) -> str:
    """{% player_id row.player %}: the id in a monospaced font, and its code points beside it
    when it holds a character that could pass for another."""
    return player_id_html(player, get_template(PLAYER_ID_TEMPLATE))


def player_id_html(player: str, template) -> str:
    """What {% player_id %} shows, with the include already found (``template``): code that
    draws a table in one pass finds it once, not per row.

    A table shows one per row: rendering the include for each (50 a page) cost more than the
    rest of the row. An id with nothing to write out (nearly all) fills the include as
    rendered once, around a mark; the markup stays in the template.
    """
    escaped = player_ids.escaped(player)
    if escaped:
        return template.render({"player": player, "escaped": escaped})
    head, tail = _plain_player_id(template)
    return mark_safe(f"{head}{conditional_escape(player)}{tail}")  # noqa: S308 (escaped)


_plain: dict[int, tuple[str, str]] = {}


def _plain_player_id(template) -> tuple[str, str]:
    """The include rendered for an id with nothing to write out, split where the id goes;
    per loaded template (a template reloaded in development is split again)."""
    # get_template wraps the loader's cached template anew on each call: key by the latter.
    key = id(getattr(template, "template", template))
    if key not in _plain:
        html = template.render({"player": _MARK, "escaped": ""})
        if html.count(_MARK) != 1:
            raise ValueError(f"{PLAYER_ID_TEMPLATE} must show the player id once, as it is")
        _plain.clear()
        _plain[key] = tuple(html.split(_MARK))
    return _plain[key]


@register.simple_tag
def statement_url(settlement_id: int, player: str, *, printable: bool = False) -> str:
    """{% statement_url settlement.pk player %}: the player's statement in that settlement."""
    name = "settlement_statement_print" if printable else "settlement_statement"
    return f"{reverse(name, args=[settlement_id])}?{urlencode({'player': player})}"


@register.filter
def line_kind(kind: str) -> str:
    """A ledger line's kind as the statement words it: "buy-in back", "prize"…"""
    return statements.KIND_LABELS.get(kind, kind).capitalize()


@register.filter
def line_source(source: str) -> str:
    return statements.SOURCE_LABELS.get(source, source).capitalize()
