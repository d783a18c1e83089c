"""Player ids shown exactly (look-alike and invisible characters written out beside them), and
links to a player's statement."""

from django import template
from django.urls import reverse
from django.utils.http import urlencode

from settlements import player_ids, statements

register = template.Library()


PLAYER_ID_TEMPLATE = "settlements/includes/player_id.html"


@register.inclusion_tag(PLAYER_ID_TEMPLATE)
def player_id(player: str) -> dict:
    """{% player_id row.player %}: the id in a monospaced font, and its code points beside it
    when it holds a character that could pass for another."""
    return {"player": player, "escaped": player_ids.escaped(player)}


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


@register.filter
def payment_state(payment, keys: str = "") -> str:
    """Where a line's payment stands (statements.PaymentFacts), as a sentence of its own; with
    ``"keys"``, naming the ledger's line keys, for the desk's own pages (not a statement)."""
    words = statements.payment_words(payment, keys=keys == "keys")
    return words[:1].upper() + words[1:] + "."
