"""Formatting for the review screens: payouts in their units, the engine's exact amounts, and
stored values in the history browser. Formatting only: every figure comes from the engine's
output or the stored records, never from a second calculation."""

from fractions import Fraction

from django import template

from settlements.templatetags.money import currency_exponent, format_minor_units, fpp, tickets

register = template.Library()

# Digits shown after the currency's own decimals for an amount that is not a whole minor unit.
EXTRA_DIGITS = 4


@register.simple_tag
def payout_text(row, currency: str) -> str:
    """A payout row (anything with cash, tdollars, tickets and fpp) in words:
    "1 seat + 12.00 T$", "110.00 USD", "250 FPP"; "nothing" when all are zero."""
    parts = []
    if row.cash:
        parts.append(format_minor_units(row.cash, currency))
    if row.tickets:
        parts.append(tickets(row.tickets))
    if row.tdollars:
        parts.append(f"{format_minor_units(row.tdollars, currency)} in T$")
    if row.fpp:
        parts.append(fpp(row.fpp))
    return " + ".join(parts) or "nothing"


@register.filter
def exact_money(value, currency: str) -> str:
    """An exact amount in minor units ("5600/3", a Fraction or an int) shown in the currency:
    "18.666666… USD" (cut, never rounded, with an ellipsis when it goes on)."""
    if value is None or value == "":
        return "—"
    amount = Fraction(value)
    exponent = currency_exponent(currency)
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    scaled = amount.numerator * 10**EXTRA_DIGITS
    cut, remainder = divmod(scaled, amount.denominator)
    major, minor = divmod(cut, 10 ** (exponent + EXTRA_DIGITS))
    digits = f"{minor:0{exponent + EXTRA_DIGITS}d}"
    # Trailing zeros beyond the currency's own decimals say nothing; keep the usual decimals.
    digits = digits[:exponent] + digits[exponent:].rstrip("0")
    figure = f"{major:,}" + (f".{digits}" if digits else "")
    return f"{sign}{figure}{'…' if remainder else ''} {currency.upper()}"


@register.filter
def is_whole(value) -> bool:
    """Whether an exact amount ("n/d") is a whole number of minor units."""
    return value not in (None, "") and Fraction(value).denominator == 1


@register.filter
def thousands(number) -> str:
    """A count with thousands separators: 1234567 -> "1,234,567" (chips, players)."""
    if number is None or number == "":
        return "—"
    return f"{number:,}"
