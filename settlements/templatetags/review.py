"""Formatting for the review screens: payouts in their units, the engine's exact amounts, and
stored values in the history browser. Formatting only: every figure comes from the engine's
output or the stored records, never from a second calculation."""

from django import template

from settlements.money import UNIT_ORDER, format_exact, format_in_unit

register = template.Library()


@register.simple_tag
def payout_text(row, currency: str) -> str:
    """A payout row (anything with cash, tdollars, tickets and fpp) in words:
    "12.00 USD in T$ + 1 seat", "110.00 USD", "250 FPP"; "nothing" when all are zero. The
    units come in the one order every page, export and statement uses (money.UNIT_ORDER)."""
    parts = [
        format_in_unit(amount, unit, currency)
        for unit in UNIT_ORDER
        if (amount := getattr(row, unit))
    ]
    return " + ".join(parts) or "nothing"


@register.filter
def exact_money(value, currency: str) -> str:
    """{{ payout.exact|exact_money:currency }} -> "18.666666… USD"."""
    if value is None or value == "":
        return "—"
    return format_exact(value, currency)


@register.filter
def thousands(number) -> str:
    """A count with thousands separators: 1234567 -> "1,234,567" (chips, players)."""
    if number is None or number == "":
        return "—"
    return f"{number:,}"
